"""Time reopening a store in a fresh process: `python -m benchmarks.reopen DATA_DIR` prints one JSON line.

A fresh process is the only honest reopen: in the process that wrote the store, Chroma keeps the loaded
segment cached and a second client would reuse it. "Reopened" means ready to serve every strategy: the
record store, the HNSW index (reconciled with the store), the timeline, the graph and the structure index
are loaded. The embedding model is not part of it (it is shared by every store and loaded once).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np


def measure(data_dir: str) -> dict[str, float]:
    t0 = time.perf_counter()
    import chromadb  # noqa: F401 - import cost reported apart from the open itself

    from benchmarks.machine import peak_rss_mib, rss_mib
    from engine import MemoryEngine, build_request

    t_import = time.perf_counter()
    cpu_start = time.process_time()
    rss_before = rss_mib()
    engine = MemoryEngine(data_dir)
    t_store = time.perf_counter()
    engine.warm()
    t_indexes = time.perf_counter()
    # Chroma loads the HNSW segment on its first query: one nearest-neighbour search with a random unit
    # vector as the cue (no model in this process) and one temporal recall make the store really ready.
    cue = np.random.default_rng(0).standard_normal(384).astype(np.float32)
    engine.raw_vector_query(cue / np.linalg.norm(cue), 10)
    t_first_query = time.perf_counter()
    entities = engine.entities()[:1]
    if entities:
        engine.retrieve(build_request("", strategies=["temporal"], entity_id=entities[0]))
    t_ready = time.perf_counter()
    cpu_used = time.process_time() - cpu_start

    result = {
        "import_s": t_import - t0,
        "store_s": t_store - t_import,
        "indexes_s": t_indexes - t_store,  # vectors reconciled, timeline, graph, features
        "first_vector_query_s": t_first_query - t_indexes,
        "first_recall_s": t_ready - t_first_query,
        "total_s": t_ready - t_import,
        "total_cpu_s": cpu_used,  # CPU time of this process: less sensitive to other jobs than wall time
        "rss_before_open_mib": rss_before,
        "rss_open_mib": rss_mib(),
        "peak_rss_mib": peak_rss_mib(),
        "memories": engine.stats()["memories"],
    }
    engine.close()
    return result


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))
