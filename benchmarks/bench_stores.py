"""SQLite vs PostgreSQL record store: default remember and recall p50/p95 on the same corpus, and the time a
write on one replica takes to reach recall on another (two engines on one database).

    .venv/bin/python -m benchmarks.bench_stores --size 2000 --queries 100

The corpus (benchmarks/corpus.py) is embedded once and written straight into both stores (the same records,
vectors and edges), so the load is the stores', not the model's; each timed remember and recall then runs
through `MemoryEngine` as users call it, the two stores alternating cue by cue. PostgreSQL runs on loopback
(engine/store/postgres/local_server.py), started and removed by the run. Results: benchmarks/results/stores.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import corpus as corpus_mod
from benchmarks.machine import describe
from benchmarks.paths import save_by_size
from benchmarks.timing import summarize
from engine import MemoryEngine
from engine.embedding import create_embedder
from engine.ids import new_id
from engine.models import Edge, EdgeType, Memory, MemoryKind
from engine.store.interface import Storage
from engine.store.postgres import PostgresStore
from engine.store.postgres.local_server import LocalServer
from engine.store.records import open_record_store
from engine.store.rows import MemoryRecord

RESULTS = Path(__file__).resolve().parent / "results" / "stores.json"


def load_corpus(store: Storage, corp: corpus_mod.Corpus, vectors: np.ndarray) -> None:
    """The corpus's memories (in chunks), then its edges, written straight into a store."""
    ids = [new_id(int(m.created_at.timestamp() * 1000)) for m in corp.memories]
    records = [MemoryRecord(Memory(ids[n], m.content, m.importance, m.context, m.entity_id, MemoryKind.EPISODE,
                                   m.created_at, m.created_at, None, int(corp.access_counts[n])), vectors[n], {})
               for n, m in enumerate(corp.memories)]
    for start in range(0, len(records), 2000):
        store.insert(records[start:start + 2000], [])
    store.add_edges([Edge(ids[s], ids[t], EdgeType(kind), conf, {}) for s, t, kind, conf in corp.edges])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--writes", type=int, default=50)
    args = parser.parse_args()
    model = create_embedder()
    corp = corpus_mod.generate(args.size)
    vectors = model.encode(corp.texts())
    cues = [c.text for c in corpus_mod.cues(corp, args.queries)]
    work = Path(tempfile.mkdtemp(prefix="hebbs-bench-stores-"))
    server = LocalServer().start()
    try:
        (work / "sqlite").mkdir()
        sqlite_store = open_record_store(work / "sqlite" / "records.sqlite3")
        started = time.perf_counter()
        load_corpus(sqlite_store, corp, vectors)
        load_sqlite = time.perf_counter() - started
        sqlite_store.close()
        pg_store = PostgresStore(server.url)
        started = time.perf_counter()
        load_corpus(pg_store, corp, vectors)
        load_pg = time.perf_counter() - started
        pg_store.close()
        engines = {"sqlite": MemoryEngine(work / "sqlite", embedder=model),
                   "postgres": MemoryEngine(database=server.url, embedder=model)}
        for engine in engines.values():
            engine.warm()
            engine.recall(cue=cues[0])
        recall: dict[str, list[float]] = {name: [] for name in engines}
        remember: dict[str, list[float]] = {name: [] for name in engines}
        for n, cue in enumerate(cues):
            for name, engine in engines.items():
                t0 = time.perf_counter()
                engine.recall(cue=cue)
                recall[name].append((time.perf_counter() - t0) * 1000)
                if n < args.writes:
                    t0 = time.perf_counter()
                    engine.remember(content=f"{cue} (noted again, {n})", entity_id=corp.memories[n].entity_id)
                    remember[name].append((time.perf_counter() - t0) * 1000)
        # A write on one replica, seen by recall on another.
        other = MemoryEngine(database=server.url, embedder=model)
        other.warm()
        visible: list[float] = []
        for n in range(20):
            text = f"Replica probe {n}: the {corp.memories[n].entity_id} migration finished."
            stored = engines["postgres"].remember(content=text)
            t0 = time.perf_counter()
            while [r.memory.id for r in other.recall(cue=text, top_k=1, strategies=["similarity"])] != [stored.id]:
                time.sleep(0.005)
            visible.append((time.perf_counter() - t0) * 1000)
        other.close()
        for engine in engines.values():
            engine.close()
        out: dict[str, Any] = {
            "size": args.size, "machine": describe(),
            "load_seconds": {"sqlite": round(load_sqlite, 1), "postgres": round(load_pg, 1)},
            "recall": {k: summarize(v) for k, v in recall.items()},
            "remember": {k: summarize(v) for k, v in remember.items()},
            "replica_visibility": summarize(visible),
        }
        for kind in ("recall", "remember"):
            out[kind]["p50_postgres_vs_sqlite"] = round(out[kind]["postgres"]["p50_ms"] / out[kind]["sqlite"]["p50_ms"],
                                                       2)
        save_by_size(RESULTS, args.size, out)
        print(json.dumps(out, indent=2))
    finally:
        server.remove()


if __name__ == "__main__":
    main()
