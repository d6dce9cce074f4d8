"""Analogy evaluation: does analogical recall rank the true analog above the false one, and first overall?

Every true and false analog and every distractor is stored as a memory; each cue is recalled with
`strategies=["analogical"]` over all of them (relevance alone: weights 1:0:0:0, so recency and importance
do not decide). Reported per split (dev, heldout, all) and per method:
- `embedding`: alpha 1 (the embedding alone),
- `bag a=A`: the session-2 feature bag (`benchmarks.analogy.bag`) blended with the embedding by alpha A,
- `mapper a=A`: this engine's two-stage recall with structure mapping.
Figures: true-above-false accuracy, the true analog's mean reciprocal rank among all candidates, top-1.

    python -m benchmarks.analogy.analogy_eval [--triads FILE] [--distractors FILE] [--out FILE]

`--triads` takes any set in the same JSON shape (outsiders check with their own); the distractors file
has one memory per line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.analogy.bag import LexicalStructureExtractor, structural_similarity
from engine import MemoryEngine

HERE = Path(__file__).resolve().parent
ALPHAS = (0.0, 0.5)
WEIGHTS = "1:0:0:0"


def load(triads: Path, distractors: Path) -> tuple[list[dict[str, str]], list[str]]:
    sets = json.loads(triads.read_text(encoding="utf-8"))["triads"]
    lines = [x.strip() for x in distractors.read_text(encoding="utf-8").splitlines() if x.strip()]
    return sets, lines


def ranks_of(scores: dict[str, float], triad_ids: tuple[str, str], everyone: Sequence[str]) -> tuple[float, float]:
    """(rank of the true analog, how the true analog fares against the false one: 1 above, 0.5 tied, 0 below).

    Ranks are pessimistic: a candidate tied with others ranks below them all, and a memory the recall did
    not return ranks after every returned one, so ties never flatter a method."""
    true, false = (scores.get(i, -1.0) for i in triad_ids)
    rank = 1 + sum(1 for m in everyone if m != triad_ids[0] and scores.get(m, -1.0) >= true)
    return rank, 1.0 if true > false else 0.5 if true == false else 0.0


def summarise(rows: list[tuple[float, float]]) -> dict[str, float]:
    n = len(rows)
    if not n:
        return {"n": 0}
    return {
        "n": n,
        "true_above_false": round(sum(above for _, above in rows) / n, 3),
        "mrr": round(sum(1 / t for t, _ in rows) / n, 3),
        "top1": round(sum(t == 1 for t, _ in rows) / n, 3),
    }


def evaluate(triads: list[dict[str, str]], distractors: list[str], engine: MemoryEngine,
             log: Any = None) -> dict[str, Any]:
    texts = [t[k] for t in triads for k in ("true", "false")] + distractors
    memories = engine.remember_many([{"content": t} for t in texts])
    ids = [m.id for m in memories]
    pairs = [(ids[2 * i], ids[2 * i + 1]) for i in range(len(triads))]
    # the old feature bag, scored directly (it never had a candidate stage worth keeping)
    bag = LexicalStructureExtractor()
    bag_feats = [s["features"] for s in bag.extract(texts)]
    vectors = engine.embed(texts)
    per_method: dict[str, list[tuple[str, tuple[float, float]]]] = {}
    mappings: list[dict[str, Any]] = []
    timings: list[float] = []
    for n, triad in enumerate(triads):
        cue = triad["cue"]
        cue_vec = engine.embed([cue])[0]
        e_sim = np.clip(vectors @ cue_vec, 0, 1)
        cue_bag = bag.extract([cue])[0]["features"]
        b_sim = np.array([structural_similarity(cue_bag, f) for f in bag_feats])
        for alpha in ALPHAS:
            score = alpha * e_sim + (1 - alpha) * b_sim
            found = {m: float(v) for m, v in zip(ids, score, strict=True)}
            per_method.setdefault(f"bag a={alpha:g}", []).append((triad["split"], ranks_of(found, pairs[n], ids)))
        for alpha in (1.0, *ALPHAS):
            started = time.perf_counter()
            results = engine.recall(cue, strategies=["analogical"], analogical_alpha=alpha, top_k=len(ids),
                                    scoring_weights=WEIGHTS)
            timings.append(time.perf_counter() - started)
            found = {r.memory.id: r.signals.relevance for r in results}
            name = "embedding" if alpha == 1.0 else f"mapper a={alpha:g}"
            per_method.setdefault(name, []).append((triad["split"], ranks_of(found, pairs[n], ids)))
            if alpha == 0.5:
                top = results[0]
                detail = next(d for d in top.strategy_details if d.strategy.value == "analogical").fields
                mappings.append({"split": triad["split"], "cue": cue, "top": top.memory.content,
                                 "is_true": top.memory.id == pairs[n][0], "mapping": detail.get("mapping", {})})
        if log:
            log(f"{n + 1}/{len(triads)} {triad['domain']}")
    splits = sorted({t["split"] for t in triads}) + ["all"]
    table = {
        method: {s: summarise([r for split, r in rows if s in ("all", split)]) for s in splits}
        for method, rows in per_method.items()
    }
    return {
        "candidates": len(ids),
        "triads": len(triads),
        "distractors": len(distractors),
        "weights": WEIGHTS,
        "results": table,
        "recall_ms_p50": round(1000 * float(np.median(timings)), 1),
        "examples": mappings[:6],
    }


def markdown(report: dict[str, Any]) -> str:
    lines = ["| method | split | n | true > false | MRR | top-1 |", "|---|---|---|---|---|---|"]
    for method, splits in report["results"].items():
        for split, f in splits.items():
            lines.append(f"| {method} | {split} | {f['n']} | {f['true_above_false']:.0%} | {f['mrr']:.3f} "
                         f"| {f['top1']:.0%} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, model: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--triads", type=Path, default=HERE / "triads.json")
    ap.add_argument("--distractors", type=Path, default=HERE / "distractors.txt")
    ap.add_argument("--out", type=Path, default=HERE.parent / "results" / "analogy.json")
    ap.add_argument("--limit", type=int, default=0, help="only the first N triads and 10 distractors (smoke)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    triads, distractors = load(args.triads, args.distractors)
    if args.limit:
        triads, distractors = triads[: args.limit], distractors[:10]
    with tempfile.TemporaryDirectory() as tmp:
        engine = MemoryEngine(Path(tmp) / "data", **({"embedder": model} if model is not None else {}))
        try:
            report = evaluate(triads, distractors, engine, None if args.quiet else
                              (lambda m: print(m, file=sys.stderr)))
        finally:
            engine.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if not args.quiet:
        print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
