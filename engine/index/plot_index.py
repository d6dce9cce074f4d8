"""The stored plots' centred sentence vectors in one matrix, so analogical recall finds the stories told like a story
cue even when they share neither its words (its embedding neighbours) nor its extracted features (the feature index).

A story from another domain that tells the cue's plot is far from the cue in embedding space (the setting is most of
a text's embedding) and its features may overlap the cue's little; among thousands of other memories it was never a
candidate, so it was never aligned (docs/analogy.md, session 27). Here every stored plot's rows (`Plot.centred`: each
sentence with its story's mean taken out, unit length) sit in one float32 matrix; a cue's centred sentences are
multiplied against all of them at once, and a memory scores the best match of each cue sentence among its own
sentences, summed over the cue's sentences and divided by the geometric mean of the two lengths: the in-order
alignment's score without its order and its surface discount, which bounds it from above. The best `limit` are
candidates; the strategy then aligns them properly (`plot_similarity`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from engine.analogy.plot import Plot


@dataclass(frozen=True, slots=True)
class _Stacked:
    """Every plot's centred rows stacked (`rows`), the memory each row belongs to (`owner`, an index into `ids`),
    where each memory's rows start (`starts`, rows of one memory are contiguous) and how many it has (`counts`).
    Rebuilt on the first query after a plot came or went."""

    ids: list[str]
    rows: np.ndarray
    starts: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, plots: dict[str, np.ndarray]) -> _Stacked:
        ids = list(plots)
        counts = np.array([len(plots[i]) for i in ids], dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if len(ids) else np.zeros(0, dtype=np.int64)
        dim = next(iter(plots.values())).shape[1] if plots else 0
        rows = np.concatenate([plots[i] for i in ids]) if ids else np.zeros((0, dim), dtype=np.float32)
        return cls(ids, np.ascontiguousarray(rows, dtype=np.float32), starts.astype(np.int64), counts)


# Plots added, replaced or removed since the stacked matrix was built are held apart (added ones scored in a small
# matrix of their own, removed ones masked out) until they are this share of it (at least `RESTACK_MIN`): re-stacking
# 10,000 four-sentence stories costs about 130 ms, which a store that takes a write between two story cues would
# otherwise pay on every recall.
RESTACK_SHARE = 0.125
RESTACK_MIN = 64


class PlotIndex:
    """Memories' plots (their centred sentence rows), scored against a story cue's all at once."""

    def __init__(self, items: Iterable[tuple[str, Plot | None]] = ()) -> None:
        self._lock = threading.Lock()
        self._plots: dict[str, np.ndarray] = {}
        self._stacked: _Stacked | None = None  # a snapshot of `_plots` ...
        self._fresh: dict[str, np.ndarray] = {}  # ... the plots added or replaced since ...
        self._gone: set[str] = set()  # ... and the snapshot's memories removed or replaced since
        for memory_id, plot in items:
            self.add(memory_id, plot)

    def __len__(self) -> int:
        return len(self._plots)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._plots

    def add(self, memory_id: str, plot: Plot | None) -> None:
        """Keep this memory's plot (replacing any before); None (a text of one sentence) leaves it out."""
        with self._lock:
            self._drop(memory_id)
            if plot is not None and len(plot.centred) and plot.centred.any():
                rows = np.asarray(plot.centred, dtype=np.float32)
                self._plots[memory_id] = rows
                if self._stacked is not None:
                    self._fresh[memory_id] = rows

    def remove(self, memory_ids: Iterable[str]) -> None:
        with self._lock:
            for memory_id in memory_ids:
                self._drop(memory_id)

    def _drop(self, memory_id: str) -> None:
        had = self._plots.pop(memory_id, None) is not None
        if had and self._stacked is not None and self._fresh.pop(memory_id, None) is None:
            self._gone.add(memory_id)  # (in the snapshot: one added since is not)

    def _current(self) -> tuple[_Stacked, _Stacked | None, set[str]]:
        """The snapshot (re-stacked when the changes since are many), the plots added since and the snapshot's
        memories gone since (the lock held)."""
        stacked = self._stacked
        changed = len(self._fresh) + len(self._gone)
        if stacked is None or changed > max(RESTACK_MIN, RESTACK_SHARE * len(stacked.ids)):
            stacked = self._stacked = _Stacked.of(self._plots)
            self._fresh, self._gone = {}, set()
        return stacked, (_Stacked.of(self._fresh) if self._fresh else None), set(self._gone)

    def best_matches(self, cue: Plot, limit: int) -> list[tuple[str, float]]:
        """The `limit` memories whose plots best match the cue's sentence by sentence (each cue sentence's best
        centred cosine among the memory's sentences, when positive, summed, over the geometric mean of the two
        lengths), best first, ties by id; memories that match nothing are left out."""
        if limit <= 0 or len(cue.centred) == 0:
            return []
        with self._lock:
            stacked, fresh, gone = self._current()
        rows = np.asarray(cue.centred, dtype=np.float32)
        found = [*_scored(stacked, rows, limit + len(gone), gone), *(_scored(fresh, rows, limit) if fresh else [])]
        found.sort(key=lambda f: (-f[1], f[0]))
        return found[:limit]


def _scored(stacked: _Stacked, cue: np.ndarray, limit: int, gone: set[str] | None = None) -> list[tuple[str, float]]:
    """The `limit` best of one stacked matrix's memories for the cue's centred rows (unsorted), those `gone` left
    out; none when the widths differ (another model's plots)."""
    if not stacked.ids or stacked.rows.shape[1] != cue.shape[1]:
        return []
    cosines = np.maximum(cue @ stacked.rows.T, 0.0)  # cue rows x all rows
    best = np.maximum.reduceat(cosines, stacked.starts, axis=1)  # cue rows x memories: each one's best sentence
    score = best.sum(axis=0) / np.sqrt(len(cue) * stacked.counts)
    matched = np.flatnonzero(score > 0)
    if len(matched) > limit:
        matched = matched[np.argpartition(-score[matched], limit - 1)[:limit]]
    return [(stacked.ids[n], float(score[n])) for n in matched.tolist() if not gone or stacked.ids[n] not in gone]
