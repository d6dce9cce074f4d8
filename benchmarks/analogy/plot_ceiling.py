"""The ceiling the story set itself puts on top-1 (issue 31, session 24): measurement, not tuning.

`plots.json` holds, for every set in `stories.json`, the causal-plot skeleton of its base, true analog and
false analog in a small fixed vocabulary (read and labelled by a developer, blind to the engine's results).
The triads store of `story_eval.py` holds every set's true and false analog (and the one-line distractors,
which tell no plot). For each base as the cue this counts the stored stories that share the base's skeleton
and the expected top-1 of an ideal matcher that ranks the stories sharing it first and breaks ties at random:
1 / (1 + the other stories sharing it) when the base's own true analog shares it, 0 when it does not.

Three levels, finest first; a matcher that sees a level sees every looser one too, so when no stored story
shares the base's skeleton at a level the ideal matcher falls back to the next looser level (and to a random
pick among everything stored when nothing matches at any level):
- exact: the whole skeleton;
- prefix: the skeleton without its last step (the coda: regret, reward, punishment, the cost compared);
- coarse: every token mapped to its class in `plots.json` ("coarse": an unwise choice, an adverse event, a bad
  end, ...), consecutive equal classes merged (valence level).

"as designed" is 1 / (1 + the other stories sharing the base's skeleton) for every base, as if its own true
analog shared it (the set's intent) even where the labels say it does not.

Each stories file is its own store, as story_eval runs it. `--engine` also runs the triads store as
`story_eval.py` builds it (every set of the file, all splits, and the distractors), recalls each `--split`
base with the analogical strategy alone at `--alpha`, and lists each failure (the true analog not first,
ties counted against it as story_eval does): which story won and whether it shares the base's skeleton.

    python -m benchmarks.analogy.plot_ceiling [--plots FILE] [--stories FILE] [--engine [--alpha 0.5]
        [--split heldout]] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LEVELS = ("exact", "prefix", "coarse")
Skeleton = tuple[str, ...]


def parse(text: str) -> Skeleton:
    """'A -> B -> B -> C' -> ('A', 'B', 'C'): steps split on arrows, consecutive equal steps merged."""
    return _merge(tuple(t.strip() for t in text.split("->") if t.strip()))


def _merge(steps: Sequence[str]) -> Skeleton:
    return tuple(t for n, t in enumerate(steps) if n == 0 or t != steps[n - 1])


def views(skeleton: Skeleton, classes: Mapping[str, str]) -> dict[str, Skeleton]:
    """The skeleton at each level: exact, without its last step, and in coarse classes."""
    return {"exact": skeleton, "prefix": skeleton[:-1],
            "coarse": _merge([classes.get(t, t) for t in skeleton])}


@dataclass(frozen=True)
class Stored:
    """A story in the triads store: the set it comes from, which analog it is, and its skeleton."""
    set_id: str
    kind: str  # "true" or "false"
    skeleton: Skeleton


@dataclass(frozen=True)
class Ceiling:
    """One base against the store at one level."""
    same: int  # other stored stories (not the own true analog) sharing the base's skeleton at this level
    own_true_shares: bool
    level_used: str  # the level the ideal matcher decided on (this one or a looser fallback)
    expected_top1: float
    designed_top1: float  # 1 / (1 + same): as if the own true analog shared the base's skeleton, as the set meant


def ceiling(base: Skeleton, own: str, store: Sequence[Stored], classes: Mapping[str, str], level: str,
            distractors: int = 0) -> Ceiling:
    """Expected top-1 of an ideal matcher that sees `level` and every looser level, ties broken at random."""
    def share(at: str, s: Stored) -> bool:
        return views(s.skeleton, classes)[at] == views(base, classes)[at]

    own_true = next(s for s in store if s.set_id == own and s.kind == "true")
    first = share(level, own_true)
    same = sum(1 for s in store if s is not own_true and share(level, s))
    for at in LEVELS[LEVELS.index(level):]:
        if views(base, classes)[at] == ():
            continue
        hits = sum(1 for s in store if share(at, s))
        if hits:
            mine = share(at, own_true)
            return Ceiling(same, first, at, 1 / hits if mine else 0.0, 1 / (1 + same))
    return Ceiling(same, first, "none", 1 / (len(store) + distractors), 1 / (1 + same))


def load_plots(path: Path) -> tuple[dict[str, dict[str, Skeleton]], dict[str, str]]:
    """plots.json -> ({set id: {base, true, false: skeleton}}, {token: coarse class})."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    classes = {t: c for c, tokens in raw["coarse"].items() for t in tokens}
    sets = {sid: {k: parse(v[k]) for k in ("base", "true", "false")} for sid, v in raw["sets"].items()}
    return sets, classes


def store_of(sets: Mapping[str, Mapping[str, Skeleton]]) -> list[Stored]:
    return [Stored(sid, kind, s[kind]) for sid, s in sets.items() for kind in ("true", "false")]


def table(sets: Mapping[str, Mapping[str, Skeleton]], splits: Mapping[str, str], classes: Mapping[str, str],
          distractors: int = 0) -> dict[str, Any]:
    """Per base and per split (and all): stories sharing the skeleton and the ideal matcher's top-1."""
    store = store_of(sets)
    rows = {sid: {level: ceiling(s["base"], sid, store, classes, level, distractors) for level in LEVELS}
            for sid, s in sets.items()}
    summary: dict[str, dict[str, float]] = {}
    for split in sorted(set(splits.values())) + ["all"]:
        ids = [sid for sid in rows if split in ("all", splits.get(sid))]
        if not ids:
            continue
        summary[split] = {"n": len(ids)}
        for level in LEVELS:
            summary[split][f"{level}_top1"] = round(sum(rows[i][level].expected_top1 for i in ids) / len(ids), 3)
            summary[split][f"{level}_designed_top1"] = round(
                sum(rows[i][level].designed_top1 for i in ids) / len(ids), 3)
            summary[split][f"{level}_own_true_shares"] = round(
                sum(rows[i][level].own_true_shares for i in ids) / len(ids), 3)
            summary[split][f"{level}_mean_same"] = round(sum(rows[i][level].same for i in ids) / len(ids), 2)
    return {"rows": rows, "summary": summary}


def markdown(result: Mapping[str, Any]) -> str:
    head = " | ".join(f"{lv}: top-1 | as designed | own true shares | others sharing" for lv in LEVELS)
    lines = [f"| split | n | {head} |", "|---|---|" + "---|" * 4 * len(LEVELS)]
    for split, f in result["summary"].items():
        cells = [f"{f[f'{lv}_top1']:.0%} | {f[f'{lv}_designed_top1']:.0%} | {f[f'{lv}_own_true_shares']:.0%} | "
                 f"{f[f'{lv}_mean_same']:.1f}" for lv in LEVELS]
        lines.append(f"| {split} | {f['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def engine_failures(stories: list[dict[str, str]], distractors: list[str], data_dir: Path, alpha: float,
                    split: str = "heldout", log: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """The triads store as story_eval builds it; for each `split` base, the winner when its true analog loses."""
    from benchmarks.analogy.analogy_eval import ranks_of
    from benchmarks.analogy.story_eval import analogical_scores
    from engine import MemoryEngine

    rows: list[dict[str, Any]] = []
    with MemoryEngine(data_dir / "triads") as engine:
        texts = [s[k] for s in stories for k in ("true", "false")] + distractors
        ids = [m.id for m in engine.remember_many([{"content": t} for t in texts])]
        who = {ids[2 * n + j]: (s["id"], kind) for n, s in enumerate(stories)
               for j, kind in enumerate(("true", "false"))}
        for n, s in enumerate(stories):
            if s["split"] != split:
                continue
            scores = analogical_scores(engine, s["base"], alpha, len(ids))
            rank, _ = ranks_of(scores, (ids[2 * n], ids[2 * n + 1]), ids)
            best = max((i for i in ids if i != ids[2 * n]), key=lambda i: scores.get(i, -1.0))
            rows.append({"id": s["id"], "rank": rank, "true_score": round(scores.get(ids[2 * n], -1.0), 4),
                         "winner": who.get(best, ("distractor", "")),
                         "winner_score": round(scores.get(best, -1.0), 4)})
            if log:
                log(f"{s['id']}: rank {rank}")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plots", type=Path, default=HERE / "plots.json")
    ap.add_argument("--stories", type=Path, default=HERE / "stories.json")
    ap.add_argument("--distractors", type=Path, default=HERE / "distractors.txt")
    ap.add_argument("--engine", action="store_true", help="also list the engine's held-out failures")
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--split", default="heldout", help="the split whose bases --engine recalls")
    ap.add_argument("--out", type=Path, help="write the result as JSON")
    args = ap.parse_args(argv)
    stories = json.loads(args.stories.read_text(encoding="utf-8"))["stories"]
    distractors = [x.strip() for x in args.distractors.read_text(encoding="utf-8").splitlines() if x.strip()]
    labelled, classes = load_plots(args.plots)
    # each stories file is its own store, as story_eval runs it
    sets = {s["id"]: labelled[s["id"]] for s in stories if s["id"] in labelled}
    splits = {sid: s["split"] for s in stories for sid in (s["id"],) if sid in sets}
    result = table(sets, splits, classes, len(distractors))
    print(markdown(result))
    out: dict[str, Any] = {"summary": result["summary"], "rows": {
        sid: {lv: vars(c) for lv, c in levels.items()} for sid, levels in result["rows"].items()}}
    if args.engine:
        failures = []
        with tempfile.TemporaryDirectory() as tmp:
            rows = engine_failures(stories, distractors, Path(tmp), args.alpha, args.split,
                                   log=lambda m: print(m, file=sys.stderr))
        for row in rows:
            if row["rank"] == 1:
                continue
            wid, kind = row["winner"]
            base = sets[row["id"]]["base"]
            won = sets[wid][kind] if wid in sets else ()
            row["winner_shares"] = {lv: bool(won) and views(won, classes)[lv] == views(base, classes)[lv]
                                    for lv in LEVELS}
            row["own_true_shares_exact"] = sets[row["id"]]["true"] == base
            failures.append(row)
        out["engine"] = {"alpha": args.alpha, "split": args.split, "n": len(rows),
                         "top1": round(sum(r["rank"] == 1 for r in rows) / max(len(rows), 1), 3),
                         "failures": failures}
        print(f"\nengine, alpha {args.alpha:g}: {args.split} top-1 {out['engine']['top1']:.0%} of {len(rows)}")
        print("| base | rank | winner | winner shares: exact / prefix / coarse | own true shares exact |")
        print("|---|---|---|---|---|")
        for r in failures:
            w = r["winner_shares"]
            print(f"| {r['id']} | {r['rank']} | {' '.join(r['winner'])} | "
                  f"{'/'.join('yes' if w[lv] else 'no' for lv in LEVELS)} | "
                  f"{'yes' if r['own_true_shares_exact'] else 'no'} |")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
