"""`hebbs migrate` speed: an embedded SQLite store of N memories copied into a fresh PostgreSQL database.

    .venv/bin/python -m benchmarks.bench_migrate --size 10000

The synthetic corpus (benchmarks/corpus.py: its memories, followed_by / caused_by / related_to edges and
access counts) is written straight into a SQLite store with random unit vectors (a copy moves the bytes of
an embedding whatever they mean, so the model is left out), then `engine.store.migrate.migrate` copies it into
a throwaway PostgreSQL on loopback (engine/store/postgres/local_server.py) and checks the counts of every
table. Results: benchmarks/results/migrate.json (memories per second, with the load average).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import corpus as corpus_mod
from benchmarks.bench_stores import load_corpus
from benchmarks.machine import describe
from benchmarks.paths import save_by_size
from engine.store.migrate import migrate
from engine.store.postgres import PostgresStore
from engine.store.postgres.local_server import LocalServer
from engine.store.records import open_record_store

RESULTS = Path(__file__).resolve().parent / "results" / "migrate.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args()
    corp = corpus_mod.generate(args.size)
    vectors = np.random.default_rng(3).standard_normal((args.size, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    work = Path(tempfile.mkdtemp(prefix="hebbs-bench-migrate-"))
    source = open_record_store(work / "records.sqlite3")
    load_corpus(source, corp, vectors)
    server = LocalServer().start()
    try:
        target = PostgresStore(server.url)
        load_before = os.getloadavg()
        started = time.perf_counter()
        copied = migrate(source, target)
        seconds = time.perf_counter() - started
        target.close()
    finally:
        server.remove()
        source.close()
        shutil.rmtree(work, ignore_errors=True)
    out: dict[str, Any] = {
        "size": args.size, "machine": describe(), "load_average_before": [round(x, 2) for x in load_before],
        "seconds": round(seconds, 1), "memories_per_second": round(copied.memories / seconds, 1),
        "edges": copied.edges, "copied": copied.memories,
    }
    save_by_size(RESULTS, args.size, out)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
