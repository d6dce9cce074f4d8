"""Cold start: `hebbs recall CUE` in fresh processes, wall time and CPU time, with the machine's load.

A small store is built once (through the CLI's own engine), then each run starts a new interpreter, so
every import, the model load (ONNX session) and Chroma's open are paid each time, as a user pays them.
CPU time (user + system of the child) is reported beside wall time: on a shared machine wall time
includes waiting for a core, CPU time does not.
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


def run(runs: int = 5) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="hebbs-cold-"))
    try:
        data_dir = work / "data"
        for fact in FACTS:
            hebbs(data_dir, "remember", fact, "--entity-id", "ops")
        walls, cpus = [], []
        load_before = os.getloadavg()
        for _ in range(runs):
            wall, cpu = hebbs(data_dir, "recall", "why did the deploy fail?")
            walls.append(wall)
            cpus.append(cpu)
        return {
            "command": "hebbs recall CUE (fresh process, store of a few memories)",
            "runs": runs,
            "wall_s_p50": round(float(np.median(walls)), 3),
            "wall_s_min": round(float(np.min(walls)), 3),
            "cpu_s_p50": round(float(np.median(cpus)), 3),
            "cpu_s_min": round(float(np.min(cpus)), 3),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "cores": os.cpu_count(),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
