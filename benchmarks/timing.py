"""Latency samples and their percentiles. Ratios are taken from samples measured in one process run."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Samples:
    """Durations of one operation, in milliseconds."""

    name: str
    ms: list[float] = field(default_factory=list)

    def time(self, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        result = fn()
        self.ms.append((time.perf_counter() - start) * 1000.0)
        return result

    def add(self, ms: float) -> None:
        self.ms.append(ms)

    def summary(self) -> dict[str, float]:
        return summarize(self.ms)


def summarize(ms: list[float]) -> dict[str, float]:
    if not ms:
        return {"n": 0}
    arr = np.asarray(ms, dtype=np.float64)
    return {
        "n": int(arr.size),
        "p50_ms": round(float(np.percentile(arr, 50)), 3),
        "p95_ms": round(float(np.percentile(arr, 95)), 3),
        "p99_ms": round(float(np.percentile(arr, 99)), 3),
        "mean_ms": round(float(arr.mean()), 3),
    }


class Stopwatch:
    """`with Stopwatch() as sw: ...; sw.seconds`."""

    def __enter__(self) -> Stopwatch:
        self._start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start
