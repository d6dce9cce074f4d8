"""Cold start: `hebbs recall CUE` in fresh processes, wall time and CPU time, with the machine's load.

A small store is built once (through the CLI's own engine), then each run starts a new interpreter, so
every import, the model load (ONNX session) and Chroma's open are paid each time, as a user pays them.
CPU time (user + system of the child) is reported beside wall time: on a shared machine wall time
includes waiting for a core, CPU time does not.

Two stores: a few memories (a user's first steps; a fused recall searches a store of at most
`EXACT_SEARCH_MAX_MEMORIES` exactly in memory, so Chroma is not even imported), and, with `large`, one
just past that limit, where the recall needs the vector index and so pays Chroma's import and open (its
vectors are the synthetic corpus' real embeddings, cached in benchmarks/.cache like the speed runs').
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.paths import REPO_ROOT
from engine.recall.recaller import EXACT_SEARCH_MAX_MEMORIES

FACTS = (
    "The deploy failed because the migration locked the users table.",
    "We rolled back the release at 14:05 and the queue drained.",
    "Caroline joined the support group in May.",
    "The fan in rack 7 failed and the rack overheated.",
)


def hebbs(data_dir: Path, *args: str) -> tuple[float, float]:
    """(wall s, child CPU s) of one `hebbs` command in a fresh interpreter."""
    env = {**os.environ, "HEBBS_DATA_DIR": str(data_dir)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [str(Path(sys.executable).parent / "hebbs"), *args], cwd=REPO_ROOT, env=env, check=True, capture_output=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _timed(data_dir: Path, runs: int, command: str) -> dict[str, Any]:
    walls, cpus = [], []
    load_before = os.getloadavg()
    for _ in range(runs):
        wall, cpu = hebbs(data_dir, "recall", "why did the deploy fail?")
        walls.append(wall)
        cpus.append(cpu)
    return {
        "command": command,
        "runs": runs,
        "wall_s_p50": round(float(np.median(walls)), 3),
        "wall_s_min": round(float(np.min(walls)), 3),
        "cpu_s_p50": round(float(np.median(cpus)), 3),
        "cpu_s_min": round(float(np.min(cpus)), 3),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "cores": os.cpu_count(),
    }


def _large_store(data_dir: Path) -> int:
    """A store of `EXACT_SEARCH_MAX_MEMORIES` + 1,000 synthetic memories, written by the engine with the
    default model's cached real embeddings (computed once if not cached). Returns its size."""
    from benchmarks import corpus as corpus_mod
    from benchmarks.embed_cache import CachingEmbedder, cached_vectors, vector_key
    from engine import MemoryEngine, NewMemory
    from engine.embedding import create_embedder

    n = EXACT_SEARCH_MAX_MEMORIES + 1000
    model = create_embedder()
    corp = corpus_mod.generate(n, 7)
    table = cached_vectors(f"synthetic-n{n}-s7", corp.texts(), model.encode, vector_key(model))
    engine = MemoryEngine(data_dir, embedder=CachingEmbedder(model, table))
    try:
        engine.remember_many([NewMemory(m.content, m.importance, m.context, m.entity_id) for m in corp.memories])
    finally:
        engine.close()
    return n


def run(runs: int = 5, large: bool = False) -> dict[str, Any]:
    """`large`: also time a store past the exact-search limit (the `large_store` key)."""
    work = Path(tempfile.mkdtemp(prefix="hebbs-cold-"))
    try:
        data_dir = work / "data"
        for fact in FACTS:
            hebbs(data_dir, "remember", fact, "--entity-id", "ops")
        result = _timed(data_dir, runs, "hebbs recall CUE (fresh process, store of a few memories)")
        if large:
            n = _large_store(work / "large")
            result["large_store"] = _timed(
                work / "large", runs, f"hebbs recall CUE (fresh process, {n:,} memories: the vector index is opened)"
            )
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)
