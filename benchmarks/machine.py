"""A description of the machine, read at run time, so every number comes with where it was measured."""

from __future__ import annotations

import os
import platform
import statistics
import threading
from pathlib import Path
from typing import Any


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def describe() -> dict[str, Any]:
    """Cores, RAM, CPU model, OS, Python and the versions of the libraries whose speed we measure."""
    import chromadb
    import numpy
    import sentence_transformers
    import torch

    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": _ram_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "sentence_transformers": sentence_transformers.__version__,
        "chromadb": chromadb.__version__,
        "numpy": numpy.__version__,
        "load_average_at_start": _load_average(),
    }


def rss_mib() -> float:
    """Current resident set size of this process."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def peak_rss_mib() -> float:
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class LoadSampler:
    """The 1-minute load average, sampled on a daemon thread while a long benchmark runs.

    One reading at the start says little about a run of an hour on a shared machine; `summary(since)` gives
    min / median / max over the samples taken since a `mark()`, so each part of the run gets its own."""

    def __init__(self, every_s: float = 30.0) -> None:
        self.every_s = every_s
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="load-sampler", daemon=True)

    def _run(self) -> None:
        while True:
            load = _load_average()
            if load is not None:
                self.samples.append(load[0])
            if self._stop.wait(self.every_s):
                return

    def start(self) -> LoadSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def mark(self) -> int:
        """A position in the samples, for `summary(since=...)`."""
        return len(self.samples)

    def summary(self, since: int = 0) -> dict[str, Any] | None:
        taken = list(self.samples[since:])
        if not taken:
            return None
        return {"min": min(taken), "median": round(statistics.median(taken), 2), "max": max(taken),
                "samples": len(taken), "every_s": self.every_s}
