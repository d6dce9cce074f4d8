"""An inverted index from structural feature to memories, so analogical recall finds structural matches
that share no words with the cue (and so are not among its embedding neighbours)."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence

from engine.structure import feature_weight, structural_similarity


class StructureIndex:
    def __init__(self, items: Iterable[tuple[str, Sequence[str]]] = ()) -> None:
        self._lock = threading.Lock()
        self._features: dict[str, frozenset[str]] = {}
        self._postings: dict[str, set[str]] = defaultdict(set)
        for memory_id, features in items:
            self.add(memory_id, features)

    def add(self, memory_id: str, features: Sequence[str]) -> None:
        with self._lock:
            self._discard(memory_id)
            fs = frozenset(features)
            if fs:
                self._features[memory_id] = fs
                for f in fs:
                    self._postings[f].add(memory_id)

    def remove(self, memory_ids: Iterable[str]) -> None:
        with self._lock:
            for memory_id in memory_ids:
                self._discard(memory_id)

    def _discard(self, memory_id: str) -> None:
        old = self._features.pop(memory_id, None)
        for f in old or ():
            self._postings[f].discard(memory_id)

    def features_of(self, memory_id: str) -> frozenset[str]:
        return self._features.get(memory_id, frozenset())

    def best_matches(self, features: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The `limit` memories most structurally similar to `features`, best first."""
        cue = frozenset(features)
        if not cue or limit <= 0:
            return []
        with self._lock:
            # Only memories sharing the cue's heaviest features can score well: rank by shared weight first.
            shared: dict[str, float] = defaultdict(float)
            for f in cue:
                w = feature_weight(f)
                for memory_id in self._postings.get(f, ()):
                    shared[memory_id] += w
            pool = sorted(shared, key=lambda m: -shared[m])[: limit * 5]
            scored = [(m, structural_similarity(cue, self._features[m])) for m in pool]
        scored.sort(key=lambda s: (-s[1], s[0]))
        return scored[:limit]
