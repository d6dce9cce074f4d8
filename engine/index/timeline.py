"""Entity timelines: per entity, its memories' creation times in sorted numpy arrays, rebuilt from the store.

A range query is two binary searches (`searchsorted`) on one entity's sorted times plus a slice:
O(log n + k), no scan. Writes are buffered per entity and merged on that entity's next read, so a batch of
inserts costs one sort. numpy only: opening a store and reading a timeline never imports pandas.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

_EMPTY_TIMES = np.zeros(0, dtype=np.int64)
_EMPTY_IDS = np.zeros(0, dtype=object)


@dataclass(frozen=True, slots=True)
class _Line:
    """One entity's memories, oldest first (equal times keep insertion order)."""

    times: np.ndarray  # int64 microseconds, sorted ascending
    ids: np.ndarray  # object array of memory ids, aligned with times


class TimelineIndex:
    def __init__(self, rows: Iterable[tuple[str, int, str]] = ()) -> None:
        """`rows` are (entity_id, created_at in microseconds, memory id)."""
        self._lock = threading.Lock()
        self._lines: dict[str, _Line] = {}
        self._entity_of: dict[str, str] = {}
        self._pending: dict[str, list[tuple[int, str]]] = {}
        self._removed: dict[str, set[str]] = {}
        self._sizes: dict[str, int] = {}  # memories per entity (entities with none are left out)
        self._names: tuple[str, ...] | None = None  # `entities()`, until an entity comes or goes
        self._build(rows)

    def _build(self, rows: Iterable[tuple[str, int, str]]) -> None:
        entities: list[str] = []
        times: list[int] = []
        ids: list[str] = []
        for entity_id, created_us, memory_id in rows:
            entities.append(entity_id)
            times.append(created_us)
            ids.append(memory_id)
        if not ids:
            return
        names, codes = np.unique(np.array(entities, dtype=object), return_inverse=True)
        time_arr = np.array(times, dtype=np.int64)
        id_arr = np.array(ids, dtype=object)
        order = np.lexsort((time_arr, codes))  # by entity, then time; stable, so ties keep insertion order
        codes, time_arr, id_arr = codes[order], time_arr[order], id_arr[order]
        bounds = np.flatnonzero(np.diff(codes)) + 1
        starts = np.concatenate(([0], bounds))
        ends = np.concatenate((bounds, [len(codes)]))
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            name = str(names[codes[start]])
            self._lines[name] = _Line(time_arr[start:end].copy(), id_arr[start:end].copy())
        self._entity_of = dict(zip(ids, entities, strict=True))
        self._sizes = {name: len(line.ids) for name, line in self._lines.items()}

    def _count(self, entity_id: str, change: int) -> None:
        """One memory more or fewer for the entity (under the lock)."""
        size = self._sizes.get(entity_id, 0) + change
        if size > 0:
            self._sizes[entity_id] = size
        else:
            self._sizes.pop(entity_id, None)
        if size == 0 or size == change:  # the entity went, or came
            self._names = None

    def add(self, entity_id: str, created_at_us: int, memory_id: str) -> None:
        with self._lock:
            previous = self._entity_of.get(memory_id)
            if previous is not None:  # already on a timeline: this add moves it
                self._count(previous, -1)
                self._removed.setdefault(previous, set()).add(memory_id)
                pending = self._pending.get(previous)
                if pending:
                    self._pending[previous] = [p for p in pending if p[1] != memory_id]
            self._entity_of[memory_id] = entity_id
            self._count(entity_id, 1)
            self._pending.setdefault(entity_id, []).append((created_at_us, memory_id))

    def remove(self, memory_ids: Iterable[str]) -> None:
        with self._lock:
            for memory_id in memory_ids:
                entity_id = self._entity_of.pop(memory_id, None)
                if entity_id is None:
                    continue
                self._count(entity_id, -1)
                pending = self._pending.get(entity_id)
                if pending:
                    self._pending[entity_id] = [p for p in pending if p[1] != memory_id]
                self._removed.setdefault(entity_id, set()).add(memory_id)

    def _line(self, entity_id: str) -> _Line | None:
        """The entity's line with buffered writes merged in (under the lock; arrays are replaced, never
        mutated, so a caller's slices stay valid)."""
        with self._lock:
            line = self._lines.get(entity_id)
            removed = self._removed.pop(entity_id, None)
            pending = self._pending.pop(entity_id, None)
            if not removed and not pending:
                return line
            times = line.times if line is not None else _EMPTY_TIMES
            ids = line.ids if line is not None else _EMPTY_IDS
            if removed:
                # An id re-added after its removal (a revised entity) is in `pending` and comes back below.
                keep = np.fromiter((i not in removed for i in ids), dtype=bool, count=len(ids))
                times, ids = times[keep], ids[keep]
            if pending:
                new_times = np.fromiter((p[0] for p in pending), dtype=np.int64, count=len(pending))
                new_ids = np.empty(len(pending), dtype=object)
                new_ids[:] = [p[1] for p in pending]
                times = np.concatenate((times, new_times))
                ids = np.concatenate((ids, new_ids))
                order = np.argsort(times, kind="stable")
                times, ids = times[order], ids[order]
            if len(ids):
                line = self._lines[entity_id] = _Line(times, ids)
            else:
                self._lines.pop(entity_id, None)
                line = None
            return line

    def window(
        self, entity_id: str, start_us: int | None = None, end_us: int | None = None, limit: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(memory ids, created_at) arrays of one entity within [start, end], newest first, at most `limit`."""
        line = self._line(entity_id)
        if line is None:
            return _EMPTY_IDS, _EMPTY_TIMES
        lo = 0 if start_us is None else int(np.searchsorted(line.times, start_us, side="left"))
        hi = len(line.times) if end_us is None else int(np.searchsorted(line.times, end_us, side="right"))
        if hi <= lo:
            return _EMPTY_IDS, _EMPTY_TIMES
        first = lo if limit is None else max(lo, hi - limit)
        return line.ids[first:hi][::-1], line.times[first:hi][::-1]

    def range(
        self, entity_id: str, start_us: int | None = None, end_us: int | None = None, limit: int | None = None
    ) -> list[tuple[str, int]]:
        """(memory id, created_at) of one entity within [start, end], newest first, at most `limit`."""
        ids, times = self.window(entity_id, start_us, end_us, limit)
        return list(zip(ids.tolist(), times.tolist(), strict=True))

    def has(self, entity_id: str) -> bool:
        """Whether any memory of this entity is on the timeline."""
        return self._line(entity_id) is not None

    def entities(self) -> tuple[str, ...]:
        """Every entity with a memory, sorted: the same tuple until an entity comes or goes (a recall reads it,
        and walking every entity per recall grew with the store)."""
        with self._lock:
            if self._names is None:
                self._names = tuple(sorted(self._sizes))
            return self._names

    def __len__(self) -> int:
        with self._lock:
            return len(self._entity_of)
