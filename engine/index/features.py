"""An inverted index from structural feature to memories, so analogical recall finds structural matches
that share no words with the cue (and so are not among its embedding neighbours)."""

from __future__ import annotations

import heapq
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import islice

from engine.analogy.features import feature_weight


class StructureIndex:
    """Memories grouped by their exact feature set, with an inverted index from feature to groups.

    Memories with the same features score the same against any cue, and there are far fewer distinct
    feature sets than memories (hundreds for 100,000 memories), so a query weighs and scores groups, not
    memories: it no longer walks posting lists of tens of thousands of ids per cue feature.
    """

    def __init__(self, items: Iterable[tuple[str, Sequence[str]]] = ()) -> None:
        self._lock = threading.Lock()
        self._features: dict[str, frozenset[str]] = {}
        self._groups: dict[frozenset[str], set[str]] = {}
        self._postings: dict[str, set[frozenset[str]]] = defaultdict(set)  # feature -> groups holding it
        self._weights: dict[frozenset[str], float] = {}  # a group's total feature weight, for the Jaccard
        for memory_id, features in items:
            self.add(memory_id, features)

    def add(self, memory_id: str, features: Sequence[str]) -> None:
        with self._lock:
            self._discard(memory_id)
            fs = frozenset(features)
            if fs:
                self._features[memory_id] = fs
                group = self._groups.get(fs)
                if group is None:
                    group = self._groups[fs] = set()
                    self._weights[fs] = sum(feature_weight(f) for f in fs)
                    for f in fs:
                        self._postings[f].add(fs)
                group.add(memory_id)

    def remove(self, memory_ids: Iterable[str]) -> None:
        with self._lock:
            for memory_id in memory_ids:
                self._discard(memory_id)

    def _discard(self, memory_id: str) -> None:
        old = self._features.pop(memory_id, None)
        if old is None:
            return
        group = self._groups[old]
        group.discard(memory_id)
        if not group:
            del self._groups[old]
            del self._weights[old]
            for f in old:
                self._postings[f].discard(old)

    def features_of(self, memory_id: str) -> frozenset[str]:
        return self._features.get(memory_id, frozenset())

    def similarities(self, features: Sequence[str], memory_ids: Iterable[str]) -> dict[str, float]:
        """Weighted Jaccard of `features` with each memory's feature set (0 without one), from the cached
        group weights: the same figure as engine.analogy.features.structural_similarity, cheaper."""
        cue_weights = {f: feature_weight(f) for f in frozenset(features)}
        cue_total = sum(cue_weights.values())
        out: dict[str, float] = {}
        with self._lock:
            for memory_id in memory_ids:
                group = self._features.get(memory_id)
                if not group:
                    out[memory_id] = 0.0
                    continue
                shared = sum(w for f, w in cue_weights.items() if f in group)
                out[memory_id] = shared / (cue_total + self._weights[group] - shared)
        return out

    def best_matches(self, features: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The `limit` memories most structurally similar to `features`, best first.

        Only memories sharing the cue's heaviest features can score well, so a pool of `5 * limit` is taken
        by shared feature weight first (among equal weights, the more similar first), then ranked by
        structural similarity, ties by id.
        """
        cue = frozenset(features)
        if not cue or limit <= 0:
            return []
        cue_weights = {f: feature_weight(f) for f in cue}
        cue_total = sum(cue_weights.values())
        with self._lock:
            # shared weight per group, accumulated along the postings (no per-group set arithmetic)
            shared: dict[frozenset[str], float] = defaultdict(float)
            for f, w in cue_weights.items():
                for g in self._postings.get(f, ()):
                    shared[g] += w
            # weighted Jaccard = shared / (cue + group - shared), as engine.analogy.features.structural_similarity
            want = limit * 5  # every group holds at least one memory, so `want` groups are always enough
            weighed = heapq.nsmallest(
                want,
                ((-w, -w / (cue_total + self._weights[g] - w), g) for g, w in shared.items()),
                key=lambda x: (x[0], x[1]),
            )
            scored: list[tuple[str, float]] = []
            for _, negative_similarity, g in weighed:
                if len(scored) >= want:
                    break
                scored.extend((m, -negative_similarity) for m in islice(self._groups[g], want - len(scored)))
        scored.sort(key=lambda s: (-s[1], s[0]))
        return scored[:limit]
