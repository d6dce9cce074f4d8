"""`IdHash`: id -> position in a sorted array of fixed-width ids by hashing, vectorised over many ids.

A fused recall looks up a few hundred ids among every stored one. A binary search over a million sorted ids
makes about twenty dependent reads per id, most of them cache misses (0.5 ms for 300 ids on the 1M store); a
hash table makes one or two (0.2 ms). The table is an open-addressing array (linear probing, at most half
full) of positions into the sorted ids, which stay the truth: every hit is confirmed by comparing the ids.
"""

from __future__ import annotations

import numpy as np

_SEED = np.uint64(0x9E3779B97F4A7C15)
_MULTIPLIER = np.uint64(0xBF58476D1CE4E5B9)
_SHIFT = np.uint64(31)


def hashes(keys: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each fixed-width bytes (`S`) key, mixing eight bytes at a time (uint64 arithmetic wraps)."""
    width = keys.dtype.itemsize
    words = -(-width // 8)
    raw = np.zeros((len(keys), words * 8), dtype=np.uint8)
    raw[:, :width] = np.ascontiguousarray(keys).view(np.uint8).reshape(len(keys), width)
    columns = raw.view(np.uint64)
    h = np.full(len(keys), _SEED, dtype=np.uint64)
    for c in range(words):
        h = (h ^ columns[:, c]) * _MULTIPLIER
        h ^= h >> _SHIFT
    return h


class IdHash:
    """Positions of fixed-width ids in `ids` (an `S` array of distinct ids), found by hash."""

    def __init__(self, ids: np.ndarray) -> None:
        self._ids = ids
        size = 1 << max(4, (2 * len(ids)).bit_length())  # at most half full: probes stay short
        self._mask = np.uint64(size - 1)
        slots: np.ndarray = np.full(size, -1, dtype=np.int32 if len(ids) < 2**31 else np.int64)
        at = (hashes(np.asarray(ids)) & self._mask).astype(np.int64)
        pending = np.arange(len(ids), dtype=np.int64)
        while len(pending):  # each round, every waiting id tries its next slot; one id wins each free slot
            tried = at[pending]
            free = slots[tried] < 0
            won_slots, first = np.unique(tried[free], return_index=True)
            winners = pending[free][first]
            slots[won_slots] = winners
            placed = np.zeros(len(ids), dtype=bool)
            placed[winners] = True
            pending = pending[~placed[pending]]
            at[pending] = (at[pending] + 1) & (size - 1)
        self._slots = slots

    def positions(self, keys: np.ndarray) -> np.ndarray:
        """Each key's position in `ids`, or -1 (int64; `keys`: an `S` array of the same width)."""
        out = np.full(len(keys), -1, dtype=np.int64)
        if not len(keys) or not len(self._ids):
            return out
        at = (hashes(keys) & self._mask).astype(np.int64)
        todo = np.arange(len(keys), dtype=np.int64)
        size = len(self._slots)
        while len(todo):  # linear probing: an empty slot ends the search
            slot = self._slots[at[todo]].astype(np.int64)
            filled = slot >= 0
            match = np.zeros(len(todo), dtype=bool)
            match[filled] = self._ids[slot[filled]] == keys[todo[filled]]
            out[todo[match]] = slot[match]
            todo = todo[filled & ~match]
            at[todo] = (at[todo] + 1) & (size - 1)
        return out
