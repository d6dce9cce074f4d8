"""Where all four strategies' extra time goes: the strategies themselves, or fusing and ranking their hits.

    python -m benchmarks.scale --sizes 10000,100000,1000000 --keep-stores --work-dir DIR   # the stores, once
    python -m benchmarks.all_four_parts --work-dir DIR [--sizes ...] [--queries 150] [--save]

Issue 27's target compares all four strategies together with the slowest one alone (analogical). On each kept
scale store, every cue is recalled three ways in a shuffled order, in one process:

- `analogical`: analogical alone (top_k 10: its at most 20 hits go to ranking whole, `ranking.rank`);
- `all_four`: the four strategies fused (`fusion.fused` over every hit and its neighbours, then 100 candidates
  ranked by the composite score) - what `benchmarks.scale` times as `all_four`;
- `all_four_unfused`: the same four strategies run the same way (concurrently, the same hits), but the fusion is
  replaced by handing analogical's own hits to ranking, as analogical alone does. A measuring device, not a
  recall anyone runs: what all four would cost if combining the four lists cost nothing.

Within `all_four`, the fusion step (`fused`) and the ranking step (`rank`) are timed where they run. The ratios
are p50s over the same cues in the same run; the load average is saved beside them.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks import corpus as corpus_mod
from benchmarks.machine import LoadSampler, describe
from benchmarks.paths import RESULTS_DIR, display, write_json
from benchmarks.progress import log
from engine import MemoryEngine, build_request
from engine.clock import ManualClock
from engine.embedding import create_embedder
from engine.models import Strategy, StrategyDetail
from engine.recall import recaller
from engine.recall.strategies import Hit

ALL_FOUR = ["similarity", "temporal", "causal", "analogical"]
VARIANTS = ("analogical", "all_four", "all_four_unfused")


class _Unfused:
    """What `fusion.fused` returns, made of analogical's hits alone (the best `top_k`, as they came)."""

    def __init__(self, hits: Sequence[Hit]) -> None:
        self.ids = tuple(h.id for h in hits)
        self.relevance = tuple(h.relevance for h in hits)
        self._details = {h.id: (h.detail,) for h in hits}

    def details(self, ids: Sequence[str]) -> Mapping[str, tuple[StrategyDetail, ...]]:
        return {i: self._details[i] for i in ids}


class Steps:
    """The recaller's fusion and ranking steps, timed while `on`, and the unfused stand-in while `unfused`."""

    def __init__(self, top_k: int) -> None:
        self.fused, self.rank = recaller.fused, recaller.rank
        self.top_k = top_k
        self.on = self.unfused = False
        self.ms: dict[str, list[float]] = {"fused": [], "rank": []}
        recaller.fused = self._fused  # type: ignore[assignment]
        recaller.rank = self._rank  # type: ignore[assignment]

    def close(self) -> None:
        recaller.fused, recaller.rank = self.fused, self.rank

    def _timed(self, name: str, step: Callable[..., Any], *args: Any) -> Any:
        start = time.perf_counter()
        out = step(*args)
        if self.on:
            self.ms[name].append((time.perf_counter() - start) * 1e3)
        return out

    def _fused(self, inputs: Any, hit_lists: Any, settings: Any, limit: int) -> Any:
        if self.unfused:
            return _Unfused(list(hit_lists[Strategy.ANALOGICAL])[: self.top_k])
        return self._timed("fused", self.fused, inputs, hit_lists, settings, limit)

    def _rank(self, *args: Any) -> Any:
        return self._timed("rank", self.rank, *args)


def run_size(n: int, args: argparse.Namespace, model: Any, load: LoadSampler) -> dict[str, Any]:
    data_dir = args.work_dir / f"scale-{n}"
    if not (args.work_dir / f"scale-{n}.built.json").exists():
        raise SystemExit(f"no kept store of {n:,} memories in {args.work_dir}: build it with "
                         f"`python -m benchmarks.scale --sizes {n} --keep-stores --work-dir {args.work_dir}`")
    mark = load.mark()
    corp = corpus_mod.generate(n, args.seed)
    cues = corpus_mod.cues(corp, args.queries + args.warmup, seed=args.seed + 1)
    engine = MemoryEngine(data_dir, embedder=model,
                          clock=ManualClock(corpus_mod.YEAR_START + timedelta(days=366)))
    engine.warm()
    steps = Steps(args.top_k)
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    order = list(VARIANTS)
    shuffle = random.Random(args.seed)
    try:
        for number, cue in enumerate(cues):
            counted = number >= args.warmup
            shuffle.shuffle(order)
            for variant in order:
                strategies = ["analogical"] if variant == "analogical" else ALL_FOUR
                request = build_request(cue=cue.text, top_k=args.top_k, strategies=strategies,
                                        entity_id=None if variant == "analogical" else cue.entity_id, max_depth=5)
                steps.on, steps.unfused = counted and variant == "all_four", variant == "all_four_unfused"
                start = time.perf_counter()
                engine.retrieve(request)
                if counted:
                    times[variant].append((time.perf_counter() - start) * 1e3)
    finally:
        steps.close()
        engine.close()
    p50 = {v: round(statistics.median(ms), 3) for v, ms in times.items()}
    result: dict[str, Any] = {
        "size": n,
        "p50_ms": p50,
        "ratio_to_analogical": {v: round(p50[v] / p50["analogical"], 3) for v in VARIANTS},
        "all_four_steps_p50_ms": {k: round(statistics.median(ms), 3) for k, ms in steps.ms.items()},
        "load_average": load.summary(since=mark),
    }
    log(f"size {n:,}: " + ", ".join(f"{v} {p50[v]:.2f} ms ({result['ratio_to_analogical'][v]:.3f}x)"
                                     for v in VARIANTS)
        + "; in all four: " + ", ".join(f"{k} {v:.2f} ms" for k, v in result["all_four_steps_p50_ms"].items()))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work-dir", type=Path, required=True, help="where benchmarks.scale kept its stores")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--save", action="store_true", help=f"write {display(RESULTS_DIR / 'all_four_parts.json')}")
    args = parser.parse_args()
    load = LoadSampler().start()
    machine = describe()
    model = create_embedder()
    model.encode(["warm up"])
    results = [run_size(int(s), args, model, load) for s in args.sizes.split(",")]
    load.stop()
    out = {"benchmark": "all_four_parts", "machine": machine, "queries": args.queries, "top_k": args.top_k,
           "load_average_during_run": load.summary(), "sizes": results}
    if args.save:
        write_json(RESULTS_DIR / "all_four_parts.json", out)
        log(f"wrote {display(RESULTS_DIR / 'all_four_parts.json')}")


if __name__ == "__main__":
    main()
