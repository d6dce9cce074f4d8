"""Analogical recall at scale: its latency over N memories against the similarity floor, in one run.

The store holds the evaluation set's analogs and distractors plus filler memories: LoCoMo dialog turns
(repeated, prefixed with a counter, when N exceeds the data set), so the candidate stage works against
realistic, varied text. Each triad cue is recalled `--rounds` times, interleaving
- the floor: embed the cue + one raw Chroma query (`MemoryEngine.raw_vector_query`, the benchmark hook),
- similarity recall, and
- analogical recall (alpha 0.5, top_k 10),
and the p50/p95 of each and their ratios to the floor's p50 are written to `results/analogy_scale.json`.
Target (issue 11): analogical p50 within 3x the floor's p50 at 10k memories.

    python -m benchmarks.analogy.scale [--memories 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks import locomo
from benchmarks.analogy.analogy_eval import HERE, load
from benchmarks.machine import describe as describe_machine
from benchmarks.paths import RESULTS_DIR, locomo_path
from engine import MemoryEngine


def filler(count: int) -> list[str]:
    """`count` dialog turns from LoCoMo, numbered when the data set has to be repeated."""
    turns = [t.text for c in locomo.load(locomo_path()) for t in c.turns if t.text.strip()]
    return [turns[i % len(turns)] if i < len(turns) else f"({i // len(turns)}) {turns[i % len(turns)]}"
            for i in range(count)]


def _timed(step: Callable[[], object]) -> float:
    start = time.perf_counter()
    step()
    return (time.perf_counter() - start) * 1000


def run(memories: int, rounds: int) -> dict[str, object]:
    triads, distractors = load(HERE / "triads.json", HERE / "distractors.txt")
    texts = [t["true"] for t in triads] + [t["false"] for t in triads] + distractors
    texts += filler(max(0, memories - len(texts)))
    engine = MemoryEngine(Path(tempfile.mkdtemp(prefix="hebbs-analogy-scale-")) / "data")
    started = time.perf_counter()
    for start in range(0, len(texts), 1000):
        engine.remember_many([{"content": text} for text in texts[start : start + 1000]])
        print(f"stored {min(start + 1000, len(texts))}/{len(texts)}", flush=True)
    build_seconds = time.perf_counter() - started
    engine.warm()
    cues = [t["cue"] for t in triads]
    engine.recall(cues[0], strategies=["analogical"], top_k=10)  # first-use costs out of the figures
    times: dict[str, list[float]] = {"floor": [], "similarity": [], "analogical": []}
    for _ in range(rounds):
        for cue in cues:
            times["floor"].append(_timed(lambda c=cue: engine.raw_vector_query(engine.embed([c])[0], 10)))
            times["similarity"].append(_timed(lambda c=cue: engine.recall(c, strategies=["similarity"], top_k=10)))
            times["analogical"].append(_timed(lambda c=cue: engine.recall(c, strategies=["analogical"], top_k=10)))
    floor_p50 = float(np.percentile(times["floor"], 50))
    figures = {
        name: {"p50_ms": round(float(np.percentile(t, 50)), 2), "p95_ms": round(float(np.percentile(t, 95)), 2),
               "p50_vs_floor_p50": round(float(np.percentile(t, 50)) / floor_p50, 2)}
        for name, t in times.items()
    }
    return {"memories": len(texts), "rounds": rounds, "build_seconds": round(build_seconds, 1),
            "machine": describe_machine(), "latency": figures,
            "target": "analogical p50 <= 3x the floor's p50 at 10k memories"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "analogy_scale.json")
    args = parser.parse_args()
    result = run(args.memories, args.rounds)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["latency"], indent=2))


if __name__ == "__main__":
    main()
