"""Entity timelines: a pandas frame sorted by (entity_id, created_at), rebuilt from the record store.

A range query is two binary searches on the sorted MultiIndex plus a slice: O(log n + k), no scan.
Writes are buffered and merged on the next read, so a batch of inserts costs one sort.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import pandas as pd

_MIN = -(2**63)
_MAX = 2**63 - 1


class TimelineIndex:
    def __init__(self, rows: Iterable[tuple[str, int, str]] = ()) -> None:
        """`rows` are (entity_id, created_at in microseconds, memory id)."""
        self._lock = threading.Lock()
        self._pending: list[tuple[str, int, str]] = list(rows)
        self._removed: set[str] = set()
        self._frame = _frame([])

    def add(self, entity_id: str, created_at_us: int, memory_id: str) -> None:
        with self._lock:
            self._pending.append((entity_id, created_at_us, memory_id))
            self._removed.discard(memory_id)

    def remove(self, memory_ids: Iterable[str]) -> None:
        with self._lock:
            ids = set(memory_ids)
            self._removed |= ids
            self._pending = [r for r in self._pending if r[2] not in ids]

    def _merged(self) -> pd.DataFrame:
        with self._lock:
            if self._pending or self._removed:
                frame = self._frame
                if self._removed:
                    frame = frame[~frame["id"].isin(self._removed)]
                if self._pending:
                    frame = pd.concat([frame, _frame(self._pending)])
                self._frame = frame.sort_index(kind="mergesort")
                self._pending, self._removed = [], set()
            return self._frame

    def range(
        self, entity_id: str, start_us: int | None = None, end_us: int | None = None, limit: int | None = None
    ) -> list[tuple[str, int]]:
        """(memory id, created_at) of one entity within [start, end], newest first, at most `limit`."""
        frame = self._merged()
        lo, hi = frame.index.slice_locs(
            (entity_id, _MIN if start_us is None else start_us),
            (entity_id, _MAX if end_us is None else end_us),
        )
        if hi <= lo:
            return []
        first = lo if limit is None else max(lo, hi - limit)
        part = frame.iloc[first:hi]
        times = part.index.get_level_values(1)
        return list(zip(part["id"].tolist()[::-1], times.tolist()[::-1], strict=True))

    def entities(self) -> list[str]:
        return sorted(self._merged().index.get_level_values(0).unique().tolist())

    def __len__(self) -> int:
        return len(self._merged())


def _frame(rows: list[tuple[str, int, str]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["entity_id", "created_at", "id"])
    frame["created_at"] = frame["created_at"].astype("int64")
    return frame.set_index(["entity_id", "created_at"]).sort_index(kind="mergesort")
