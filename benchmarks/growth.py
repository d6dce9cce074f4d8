"""Growth exponents of the scale run (`benchmarks/scale.py`): how each figure grows with the store's size.

The exponent k of y ~ n^k between two sizes is the slope of the log-log plot (0 = flat, 1 = linear). It is
computed between consecutive sizes (10k -> 100k, 100k -> 1M) and end to end, because a figure can be flat
over one decade and steep over the next. Kept apart from scale.py so the report can use it without the engine.
"""

from __future__ import annotations

import math
from typing import Any

# The reads the scale run times, in the order of the docs' tables and plot; `recommended` is `hebbs recall`'s
# default (absent from results written before it was timed).
SCALE_OPS = ("floor", "similarity", "temporal", "causal", "causal_seeded", "analogical", "all_four", "recommended",
             "recall_counted")
# Per-size figures (besides latency) whose growth is reported.
SIZE_FIGURES = ("reopen_default_s", "reopen_s", "reopen_cpu_s", "disk_mib", "rss_default_mib", "rss_store_mib")


def exponent(a: float | None, b: float | None, na: int, nb: int) -> float | None:
    """k in y ~ n^k from (na, a) to (nb, b); None when a value is missing or not positive."""
    if not a or not b or a <= 0 or b <= 0 or na == nb:
        return None
    return round(math.log(b / a) / math.log(nb / na), 2)


def _segment(lo: dict[str, Any], hi: dict[str, Any]) -> dict[str, Any]:
    n0, n1 = lo["size"], hi["size"]
    lat0, lat1 = lo["latency_ms"], hi["latency_ms"]
    ops = [op for op in SCALE_OPS if op in lat0 and op in lat1]
    return {
        "from": n0,
        "to": n1,
        "p50_ms": {op: exponent(lat0[op]["p50_ms"], lat1[op]["p50_ms"], n0, n1) for op in ops},
        "p95_ms": {op: exponent(lat0[op]["p95_ms"], lat1[op]["p95_ms"], n0, n1) for op in ops},
        "ratio_to_floor": {
            op: exponent(lat0[op]["ratio_to_floor"], lat1[op]["ratio_to_floor"], n0, n1) for op in ops if op != "floor"
        },
        **{name: exponent(lo.get(name), hi.get(name), n0, n1) for name in SIZE_FIGURES},
    }


def growth(sizes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One segment per pair of consecutive sizes, then the first to the last (when there are more than two)."""
    ordered = sorted(sizes, key=lambda s: s["size"])
    segments = [_segment(lo, hi) for lo, hi in zip(ordered, ordered[1:], strict=False)]
    if len(ordered) > 2:
        segments.append(_segment(ordered[0], ordered[-1]))
    return segments
