"""What a tenant costs a server (engine/tenants.py): opening one on its first request, the memory an open one
holds, and whether many open tenants slow one tenant's recall.

    .venv/bin/python -m benchmarks.bench_tenants --tenants 20 --memories 200

One `Tenants` over a SQLite data dir with the real model. Each tenant gets the same `--memories` memories of the
synthetic corpus (benchmarks/corpus.py) in one batch; the first tenant's default recall is timed with only it
open and again with every tenant open (ratio, measured in this one run). Results: benchmarks/results/tenants.json
with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import corpus as corpus_mod
from benchmarks.machine import describe
from engine import MemoryEngine
from engine.embedding import create_embedder
from engine.tenants import Tenants

RESULTS = Path(__file__).resolve().parent / "results" / "tenants.json"


def rss_mb() -> float:
    """This process's resident memory now (Linux /proc), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def recall_ms(engine: MemoryEngine, cues: list[str]) -> float:
    """Median ms of the default recall (not counted as an access) over the cues, each asked once before (the
    indexes a recall builds on first use, and the cue's embedding cache, are not what is compared)."""
    from engine.api.requests import RecallRequest

    requests = [RecallRequest.parse({"cue": cue, "top_k": 10}) for cue in cues]
    times = []
    for request in requests + requests:
        started = time.perf_counter()
        engine.retrieve(request)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times[len(requests):])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=20)
    parser.add_argument("--memories", type=int, default=200)
    args = parser.parse_args()
    corp = corpus_mod.generate(args.memories)
    items = [{"content": m.content, "entity_id": m.entity_id} for m in corp.memories]
    cues = [m.content.split(".")[0] for m in corp.memories[: min(40, args.memories)]]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="hebbs-bench-tenants-") as work:
        tenants = Tenants(MemoryEngine(Path(work) / "data", embedder=create_embedder()))
        try:
            first = tenants.get("t0")
            first.remember_many(items)
            alone = recall_ms(first, cues)
            rss_one = rss_mb()
            opening, writes = [], []
            for n in range(1, args.tenants):
                started = time.perf_counter()
                engine = tenants.get(f"t{n}")
                engine.remember(items[0]["content"], entity_id=items[0]["entity_id"])
                opening.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                engine.remember(items[1]["content"], entity_id=items[1]["entity_id"])
                writes.append((time.perf_counter() - started) * 1000)
                engine.remember_many(items[2:])
                recall_ms(engine, cues[:2])  # each tenant's indexes built, as a served tenant's are
            crowded = recall_ms(first, cues)
            rss_all = rss_mb()
        finally:
            tenants.close()
    out: dict[str, Any] = {
        "tenants": args.tenants, "memories_per_tenant": args.memories, "machine": describe(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "first_write_of_a_new_tenant_ms_p50": round(statistics.median(opening), 1),
        "write_on_an_open_tenant_ms_p50": round(statistics.median(writes), 1),
        "recall_ms_p50_one_tenant_open": round(alone, 2),
        f"recall_ms_p50_{args.tenants}_tenants_open": round(crowded, 2),
        "recall_ratio_crowded_vs_alone": round(crowded / alone, 2),
        "rss_mb_per_open_tenant": round((rss_all - rss_one) / max(1, args.tenants - 1), 1),
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
