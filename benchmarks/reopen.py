"""Time reopening a store in a fresh process: `python -m benchmarks.reopen DATA_DIR [CUE]` prints one JSON line.

A fresh process is the only honest reopen: in the process that wrote the store, Chroma keeps the loaded
segment cached and a second client would reuse it. Two moments are timed from the open:

- ready for the default recall (`default_ready_s`, issue 27's reopen figure): the store opened and its first
  `recommended` recall of CUE answered, with whatever that recall opens on the way (the vector index, the
  candidate and lexical segments);
- ready for every strategy (`total_s`): then the rest built as `warm` builds it (timeline, graph, structure
  index) and one temporal recall answered.

The embedding model is not part of either (it is shared by every store and loaded once, before the clock
starts). RSS is read before the open, once ready for the default recall and once ready for everything.
"""

from __future__ import annotations

import json
import sys
import time

DEFAULT_CUE = "What did they decide about the launch plan?"


def measure(data_dir: str, cue: str = DEFAULT_CUE) -> dict[str, float]:
    t0 = time.perf_counter()
    import chromadb  # noqa: F401 - import cost reported apart from the open itself

    from benchmarks.machine import peak_rss_mib, rss_mib
    from engine import MemoryEngine, build_request
    from engine.embedding import create_embedder
    from engine.index import maps

    model = create_embedder()
    model.encode(["warm up"])
    t_import = time.perf_counter()
    cpu_start = time.process_time()
    rss_before = rss_mib()
    engine = MemoryEngine(data_dir, embedder=model)
    t_store = time.perf_counter()
    engine.retrieve(build_request(cue, top_k=10))
    t_default = time.perf_counter()
    cpu_default = time.process_time() - cpu_start
    maps.wait_idle(300)  # the segments' page tables are filled in the background (engine/index/maps.py)
    t_filled = time.perf_counter()
    rss_default = rss_mib()  # with them resident: what a recall after the open keeps mapped
    engine.warm()
    t_indexes = time.perf_counter()
    entities = engine.entities()[:1]
    if entities:
        engine.retrieve(build_request("", strategies=["temporal"], entity_id=entities[0]))
    t_ready = time.perf_counter()
    cpu_used = time.process_time() - cpu_start

    result = {
        "import_s": t_import - t0,  # chromadb, the engine and the model
        "store_s": t_store - t_import,
        "first_default_recall_s": t_default - t_store,
        "default_ready_s": t_default - t_import,
        "default_ready_cpu_s": cpu_default,
        "maps_filled_after_s": t_filled - t_default,  # waited after the first recall for the page tables
        "indexes_s": t_indexes - t_filled,  # the rest of `warm`: timeline, graph, features
        "first_recall_s": t_ready - t_indexes,
        "total_s": t_ready - t_import,
        "total_cpu_s": cpu_used,  # CPU time of this process: less sensitive to other jobs than wall time
        "rss_before_open_mib": rss_before,
        "rss_default_ready_mib": rss_default,
        "rss_open_mib": rss_mib(),
        "peak_rss_mib": peak_rss_mib(),
        "memories": engine.stats()["memories"],
    }
    engine.close()
    return result


if __name__ == "__main__":
    print(json.dumps(measure(*sys.argv[1:3])))
