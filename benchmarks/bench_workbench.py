"""The recall lab's slider: how long a weight change takes to re-rank 100 retrieved results.

    python -m benchmarks.bench_workbench [--results 100] [--moves 200] [--save]

Three layers, each timed over random weight changes on the same 100 candidates (no retrieval, no model):

- `rescore`: `MemoryEngine.rescore`, the pure re-ranking the sliders call;
- `view`: what the page builds from it: both rankings, the moves, the table and the stacked-bar figure
  (serialised to JSON, as Streamlit sends it);
- `rerun`: the whole page script rerun by Streamlit's `AppTest` after a slider change (widgets, 100
  detail tables, protobuf), i.e. everything on the server side of a slider move.

The target is a re-rank within 100 ms; the browser's own drawing comes on top and is not measured here.
Numbers are p50/p95 over the moves, with the machine they were measured on. `--save` writes
benchmarks/results/workbench.json.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import describe
from benchmarks.paths import RESULTS_DIR, display
from benchmarks.timing import Samples
from engine import MemoryEngine, RecallResult, ScoringWeights, config
from engine.models import Memory, MemoryKind, Signals, Strategy, StrategyDetail
from workbench import views

APP = Path(__file__).resolve().parent.parent / "workbench" / "app.py"
TARGET_MS = 100.0
WEIGHT_KEYS = ("lab_w_relevance", "lab_w_recency", "lab_w_importance", "lab_w_reinforcement")


class StubEmbedder:
    """Random unit vectors under the default model's name: the benchmark never embeds a cue."""

    def __init__(self, dim: int = 384) -> None:
        self.name = config.default_embedding_model()
        self.dim = dim
        self._rng = np.random.default_rng(0)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        v = self._rng.normal(size=(len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def synthetic_results(n: int, seed: int = 7) -> list[RecallResult]:
    """`n` results as a multi-strategy recall returns them: signals plus similarity and causal details."""
    rng = random.Random(seed)
    now = datetime(2026, 7, 1, tzinfo=UTC)
    results = []
    for i in range(n):
        created = now - timedelta(days=rng.uniform(0, 45))
        memory = Memory(
            id=f"01BENCH{i:019d}",
            content=f"Memory {i}: "
            + " ".join(
                rng.choice(["launch", "outage", "deal", "contract", "testing", "deadline", "customer", "refund"])
                for _ in range(25)
            ),
            importance=rng.random(),
            context={},
            entity_id=f"entity-{i % 7}",
            kind=MemoryKind.PROPOSITION,
            created_at=created,
            updated_at=created,
            last_accessed_at=None,
            access_count=rng.randint(0, 20),
        )
        signals = Signals(rng.random(), rng.random(), memory.importance, rng.random())
        details = [StrategyDetail(Strategy.SIMILARITY, signals.relevance, {"distance": 1 - signals.relevance})]
        if i % 3 == 0:
            details.append(
                StrategyDetail(
                    Strategy.CAUSAL,
                    0.5,
                    {
                        "depth": 2,
                        "path": ["a", "b", memory.id],
                        "edge_type": "caused_by",
                        "direction": "out",
                        "path_confidence": 0.8,
                        "seed_id": "a",
                    },
                )
            )
        results.append(RecallResult(memory, 0.0, signals, tuple(details)))
    return MemoryEngine.rescore(results, ScoringWeights())


def random_weights(rng: random.Random) -> ScoringWeights:
    return ScoringWeights(*(round(rng.randint(0, 20) * 0.05, 2) for _ in range(4)))


def view_model(results: list[RecallResult], weights: ScoringWeights, details: Any) -> None:
    """What the recall lab computes on a slider move, minus Streamlit itself."""
    ranked = MemoryEngine.rescore(results, weights)
    baseline = MemoryEngine.rescore(results, ScoringWeights())
    moves = views.rank_moves(baseline, ranked)
    views.results_frame(ranked, moves)
    views.contributions_figure(ranked, weights).to_json()
    views.details_in_rank_order(details, [r.memory.id for r in ranked])
    views.breakdown_frame(ranked[0], weights)


def bench_rerun(results: list[RecallResult], moves: int, rng: random.Random) -> Samples:
    """The page rerun after a slider change, through Streamlit's AppTest, on a one-memory store."""
    import os

    from streamlit.testing.v1 import AppTest

    samples = Samples("rerun")
    with tempfile.TemporaryDirectory(prefix="hebbs-bench-workbench-") as tmp:
        store = Path(tmp) / "data"
        with MemoryEngine(store, embedder=StubEmbedder()) as engine:
            engine.remember("one memory, so the page is not empty")
        os.environ[config.DATA_DIR_ENV] = str(store)
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.session_state["lab_results"] = results
        at.session_state["lab_cue_ran"] = "benchmark"
        at.session_state["lab_strategies_ran"] = ["similarity", "causal"]
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        for _ in range(3):  # warm up
            at.slider(key=WEIGHT_KEYS[2]).set_value(0.5).run()
        for _ in range(moves):
            key = rng.choice(WEIGHT_KEYS)
            value = round(rng.randint(0, 20) * 0.05, 2)
            at.slider(key=key).set_value(value)
            samples.time(at.run)
            assert not at.exception
    return samples


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_workbench", description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=int, default=100, help="retrieved results to re-rank")
    parser.add_argument("--moves", type=int, default=200, help="timed slider moves per layer")
    parser.add_argument("--save", action="store_true", help="write benchmarks/results/workbench.json")
    args = parser.parse_args(argv)

    rng = random.Random(42)
    results = synthetic_results(args.results)
    rescore, view = Samples("rescore"), Samples("view")
    details = views.details_table(results)  # once per recall: weights do not change it
    for _ in range(10):  # warm up
        view_model(results, random_weights(rng), details)
    for _ in range(args.moves):
        weights = random_weights(rng)
        rescore.time(functools.partial(MemoryEngine.rescore, results, weights))
        view.time(functools.partial(view_model, results, weights, details))
    rerun = bench_rerun(results, args.moves, rng)

    report = {
        "benchmark": "workbench slider re-rank",
        "results": args.results,
        "moves": args.moves,
        "target_ms": TARGET_MS,
        "layers": {s.name: s.summary() for s in (rescore, view, rerun)},
        "machine": describe(),
    }
    for s in (rescore, view, rerun):
        summary = s.summary()
        verdict = "within" if summary["p95_ms"] <= TARGET_MS else "OVER"
        print(
            f"{s.name:8s} p50 {summary['p50_ms']:8.2f} ms   p95 {summary['p95_ms']:8.2f} ms   "
            f"({verdict} the {TARGET_MS:.0f} ms target at p95)"
        )
    if args.save:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        out = RESULTS_DIR / "workbench.json"
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {display(out)}")
    return report


if __name__ == "__main__":
    main()
