"""What the bounded BM25 search (champion lists, engine/index/champions.py) changes on a large store.

    python -m benchmarks.lexical_bound STORE_DIR [--queries 40] [--save]

On a store kept by `python -m benchmarks.scale --keep-stores --work-dir DIR` (e.g. DIR/scale-1000000), each cue
(the scale benchmark's templates) is searched in both lexical tables twice: bounded (the default) and with
`LEXICAL_EXHAUSTIVE_MAX` past any search (every posting scored, exact). Reported: the share of bounded searches
certified exact, the share of the exact top-100 the bounded one found, the default recall's top 10 both ways
(identical lists, overlap), and the time of each search, bounded and exhaustive, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import corpus as corpus_mod
from benchmarks.machine import LoadSampler, describe
from benchmarks.paths import RESULTS_DIR, display, write_json
from benchmarks.progress import log
from engine import MemoryEngine, build_request, config
from engine.embedding import create_embedder
from engine.recall.lexical import LEXICAL_POOL
from engine.recall.lexical_query import terms
from engine.store.lexical import TABLES

EVERY_POSTING = 10**12  # LEXICAL_EXHAUSTIVE_MAX past any search: every posting scored


def measure(engine: MemoryEngine, cues: list[str], top_k: int) -> dict[str, Any]:
    held = engine._indexes.lexical_postings()  # noqa: SLF001 - the index under measurement
    assert held is not None
    k1, b = config.LEXICAL_BM25_K1, config.LEXICAL_BM25_B
    exhaustive_max = config.LEXICAL_EXHAUSTIVE_MAX
    found, identical, overlap, times = [], 0, [], {"bounded": [], "exhaustive": []}
    before = (held.searches, held.inexact)
    for cue in cues:
        words = terms(cue)
        for table in TABLES:
            runs = {}
            for mode, most in (("bounded", exhaustive_max), ("exhaustive", EVERY_POSTING)):
                config.LEXICAL_EXHAUSTIVE_MAX = most
                held.search(table, words, LEXICAL_POOL, k1, b)  # the terms' orders made, pages mapped
                started = time.perf_counter()
                runs[mode] = held.search(table, words, LEXICAL_POOL, k1, b)
                times[mode].append((time.perf_counter() - started) * 1000)
            config.LEXICAL_EXHAUSTIVE_MAX = exhaustive_max
            exact = {i for i, _ in runs["exhaustive"]}
            if exact:
                found.append(len(exact & {i for i, _ in runs["bounded"]}) / len(exact))
        tops = []
        for most in (exhaustive_max, EVERY_POSTING):
            config.LEXICAL_EXHAUSTIVE_MAX = most
            tops.append([r.memory.id for r in engine.retrieve(build_request(cue, top_k=top_k))])
        config.LEXICAL_EXHAUSTIVE_MAX = exhaustive_max
        identical += tops[0] == tops[1]
        overlap.append(len(set(tops[0]) & set(tops[1])) / max(1, len(tops[1])))
    searches = held.searches - before[0]
    return {
        "cues": len(cues),
        "bounded_searches": searches,
        "certified_exact_share": round(1 - (held.inexact - before[1]) / searches, 4) if searches else None,
        "exact_top100_found_share": round(float(np.mean(found)), 4) if found else None,
        "default_top10_identical_share": round(identical / len(cues), 4),
        "default_top10_overlap": round(float(np.mean(overlap)), 4),
        "search_ms_p50": {mode: round(float(np.median(v)), 3) for mode, v in times.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path, help="a store kept by benchmarks.scale --keep-stores")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--save", action="store_true", help=f"write {display(RESULTS_DIR / 'lexical_bound.json')}")
    args = parser.parse_args()
    load = LoadSampler()
    load.start()
    cues = [c.text for c in corpus_mod.cues(corpus_mod.generate(10_000, 7), args.queries, seed=args.seed)]
    engine = MemoryEngine(args.store, embedder=create_embedder())
    size = engine.stats(vector_index=False)["memories"]
    log(f"{size:,} memories; {len(cues)} cues")
    result = {"memories": size, "champions": config.LEXICAL_CHAMPIONS, "budget": config.LEXICAL_SEARCH_BUDGET,
              "exhaustive_max": config.LEXICAL_EXHAUSTIVE_MAX, **measure(engine, cues, args.top_k)}
    engine.close()
    load.stop()
    result["machine"] = describe()
    result["load_average_1min"] = load.summary()
    print(json.dumps(result, indent=1))
    if args.save:
        write_json(RESULTS_DIR / "lexical_bound.json", result)


if __name__ == "__main__":
    main()
