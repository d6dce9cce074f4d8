"""Story-scale analogy evaluation (issue 31): multi-sentence stories, not one-sentence causes.

Each set in `stories.json` has a base story (the cue), a true analog (other characters and setting, the same
causal structure), a false analog (the true analog's names, objects and most words, another causal
structure), a literal retelling of the base (its surface and its structure) and a mere-appearance story
(the base's surface, another structure). Two stores, each with the 100 one-line distractors:
- triads: every true and false analog. Per cue: true above false, the true analog's rank among all stored
  memories (MRR, top-1).
- controls: every true analog, literal and mere-appearance story. Per cue: literal above mere (same surface,
  structure decides), true above mere (the analog against a story that only looks like the cue), the
  literal's top-1, and the true analog's top-1 among everything stored but its own base's retelling
  (`true_top1_controls`: the other sets' retellings and every mere-appearance story compete with it).
The triads store holds no retelling of any base, so its top-1 is the true analog against every other set's
analogs and the distractors; both stores hold every set given (all splits), so a held-out cue competes with
the tune half's stories too.
Recall is the analogical strategy alone, relevance only (weights 1:0:0:0), at alpha 0, 0.5 and 1.
The document case: the collection in `documents/` indexed (documents and their propositions), the cue
`DOCUMENT_CUE` recalled with top_k 5; reported is the rank of the first hit from `DOCUMENT_TARGET` (a
restaurant opening that failed because checks were skipped to open early), or null when it is not in the 5.
`stories_extra.json` is a second set in the same shape, written later in other domains and styles and never
tuned on (split `extra`); `make bench-analogy` runs it too (without the document case). The report carries
the machine's description with its load average.

    python -m benchmarks.analogy.story_eval [--stories FILE] [--out FILE] [--split dev|heldout] [--no-documents]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.analogy.analogy_eval import WEIGHTS, load, ranks_of
from benchmarks.machine import describe as describe_machine
from engine import MemoryEngine

HERE = Path(__file__).resolve().parent
ALPHAS = (0.0, 0.5, 1.0)
DOCUMENT_CUE = "Quality checks were skipped to hit an early date, and the product failed."
DOCUMENT_TARGET = "saffron-opening.md"


def analogical_scores(engine: MemoryEngine, cue: str, alpha: float, k: int) -> dict[str, float]:
    """Each recalled memory's relevance for `cue` by analogical recall alone at `alpha` (relevance-only weights)."""
    results = engine.recall(cue, strategies=["analogical"], analogical_alpha=alpha, top_k=k, scoring_weights=WEIGHTS)
    return {r.memory.id: r.signals.relevance for r in results}


def _rate(rows: list[float]) -> float:
    return round(sum(rows) / len(rows), 3) if rows else 0.0


def evaluate(sets: list[dict[str, str]], distractors: list[str], data_dir: Path, embedder: Any = None,
             log: Callable[[str], None] | None = None, documents: bool = True) -> dict[str, Any]:
    kw = {"embedder": embedder} if embedder is not None else {}
    out: dict[str, Any] = {"sets": len(sets), "distractors": len(distractors), "weights": WEIGHTS,
                           "machine": describe_machine(), "results": {}}
    timings: list[float] = []
    per: dict[str, dict[str, list[tuple[str, float]]]] = {}

    def add(alpha: float, metric: str, split: str, value: float) -> None:
        per.setdefault(f"a={alpha:g}", {}).setdefault(metric, []).append((split, value))

    # triads: true and false analogs (+ distractors)
    engine = MemoryEngine(data_dir / "triads", **kw)
    try:
        texts = [s[k] for s in sets for k in ("true", "false")] + distractors
        ids = [m.id for m in engine.remember_many([{"content": t} for t in texts])]
        for n, s in enumerate(sets):
            pair = (ids[2 * n], ids[2 * n + 1])
            for alpha in ALPHAS:
                started = time.perf_counter()
                found = analogical_scores(engine, s["base"], alpha, len(ids))
                timings.append(time.perf_counter() - started)
                rank, above = ranks_of(found, pair, ids)
                add(alpha, "true_above_false", s["split"], above)
                add(alpha, "mrr", s["split"], 1 / rank)
                add(alpha, "top1", s["split"], float(rank == 1))
            if log:
                log(f"triads {n + 1}/{len(sets)}")
    finally:
        engine.close()
    # controls: literal and mere-appearance stories beside the true analogs (+ distractors)
    engine = MemoryEngine(data_dir / "controls", **kw)
    try:
        texts = [s[k] for s in sets for k in ("true", "literal", "mere")] + distractors
        ids = [m.id for m in engine.remember_many([{"content": t} for t in texts])]
        for n, s in enumerate(sets):
            true, literal, mere = ids[3 * n: 3 * n + 3]
            for alpha in ALPHAS:
                found = analogical_scores(engine, s["base"], alpha, len(ids))
                add(alpha, "literal_above_mere", s["split"], ranks_of(found, (literal, mere), ids)[1])
                add(alpha, "true_above_mere", s["split"], ranks_of(found, (true, mere), ids)[1])
                add(alpha, "literal_top1", s["split"], float(ranks_of(found, (literal, mere), ids)[0] == 1))
                # the true analog's top-1 with every set's mere-appearance story and the other sets' retellings
                # stored too; its own base's retelling is left out (a retelling of the cue should come first)
                others = [i for i in ids if i != literal]
                add(alpha, "true_top1_controls", s["split"], float(ranks_of(found, (true, mere), others)[0] == 1))
            if log:
                log(f"controls {n + 1}/{len(sets)}")
    finally:
        engine.close()
    if documents:
        out["document_case"] = document_case(data_dir / "documents", kw)
    splits = sorted({s["split"] for s in sets}) + ["all"]
    out["results"] = {
        method: {split: {"n": sum(1 for s in sets if split in ("all", s["split"])),
                         **{m: _rate([v for sp, v in rows if split in ("all", sp)]) for m, rows in metrics.items()}}
                 for split in splits}
        for method, metrics in per.items()
    }
    out["recall_ms_p50"] = round(1000 * float(np.median(timings)), 1)
    out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def document_case(data_dir: Path, kw: dict[str, Any]) -> dict[str, Any]:
    """The collection in `documents/` indexed; the rank of the target's first hit for DOCUMENT_CUE (top 5)."""
    found: dict[str, Any] = {"cue": DOCUMENT_CUE, "target": DOCUMENT_TARGET, "rank_in_top5": {}}
    with MemoryEngine(data_dir, **kw) as engine:
        engine.ingest([HERE / "documents"])
        for alpha in ALPHAS:
            hits = engine.recall(DOCUMENT_CUE, strategies=["analogical"], analogical_alpha=alpha, top_k=5,
                                 scoring_weights=WEIGHTS)
            rank = next((n for n, r in enumerate(hits, 1)
                         if str(r.memory.context.get("source", "")).endswith(DOCUMENT_TARGET)), None)
            found["rank_in_top5"][f"a={alpha:g}"] = rank
    return found


def markdown(report: dict[str, Any]) -> str:
    lines = ["| alpha | split | n | true > false | MRR | top-1 | top-1 beside controls | literal > mere | true > mere "
             "| literal top-1 |", "|---|---|---|---|---|---|---|---|---|---|"]
    for method, splits in report["results"].items():
        for split, f in splits.items():
            lines.append(f"| {method} | {split} | {f['n']} | {f['true_above_false']:.0%} | {f['mrr']:.3f} | "
                         f"{f['top1']:.0%} | {f['true_top1_controls']:.0%} | {f['literal_above_mere']:.0%} | "
                         f"{f['true_above_mere']:.0%} | {f['literal_top1']:.0%} |")
    if "document_case" in report:
        found = report["document_case"]["rank_in_top5"].items()
        ranks = ", ".join(f"{a}: {r if r else 'not in top 5'}" for a, r in found)
        lines.append(f"\nDocument case ({report['document_case']['target']}, top 5): {ranks}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, model: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stories", type=Path, default=HERE / "stories.json")
    ap.add_argument("--distractors", type=Path, default=HERE / "distractors.txt")
    ap.add_argument("--out", type=Path, default=HERE.parent / "results" / "analogy_stories.json")
    ap.add_argument("--split", choices=("dev", "heldout"), help="only this split (tune on dev alone)")
    ap.add_argument("--no-documents", action="store_true", help="skip the document case")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    sets = json.loads(args.stories.read_text(encoding="utf-8"))["stories"]
    if args.split:
        sets = [s for s in sets if s["split"] == args.split]
    _, distractors = load(HERE / "triads.json", args.distractors)
    with tempfile.TemporaryDirectory() as tmp:
        report = evaluate(sets, distractors, Path(tmp), model, None if args.quiet else
                          (lambda m: print(m, file=sys.stderr)), documents=not args.no_documents)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if not args.quiet:
        print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
