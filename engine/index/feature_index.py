"""An inverted index from structural feature to memories, so analogical recall finds structural matches
that share no words with the cue (and so are not among its embedding neighbours)."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice

import numpy as np

from engine.analogy.features import feature_weight


@dataclass(frozen=True, slots=True)
class _Groups:
    """The index's feature sets as arrays, for scoring every group against a cue at once: `order[g]` is group g,
    `weights[g]` its total feature weight, `postings[f]` the numbers of the groups holding feature f. Rebuilt
    only when a feature set appears or disappears (new members of existing groups leave it valid)."""

    order: list[frozenset[str]]
    number: dict[frozenset[str], int]
    weights: np.ndarray
    postings: dict[str, np.ndarray]

    @classmethod
    def of(cls, groups: Iterable[frozenset[str]], weight_of: dict[frozenset[str], float]) -> _Groups:
        order = list(groups)
        postings: defaultdict[str, list[int]] = defaultdict(list)
        for g, fs in enumerate(order):
            for f in fs:
                postings[f].append(g)
        return cls(order, {fs: g for g, fs in enumerate(order)}, np.array([weight_of[fs] for fs in order]),
                   {f: np.array(gs, dtype=np.int64) for f, gs in postings.items()})


class FeatureIndex:
    """Memories grouped by their exact feature set, with an inverted index from feature to groups.

    Memories with the same features score the same against any cue, and there are far fewer distinct
    feature sets than memories (hundreds for 100,000 memories), so a query weighs and scores groups, not
    memories: it no longer walks posting lists of tens of thousands of ids per cue feature. Groups are
    scored in numpy (`_Groups`), and a cue's scores are kept for the next call with the same cue (a recall
    asks for best matches, then for its candidates' similarities).
    """

    def __init__(self, items: Iterable[tuple[str, Sequence[str]]] = ()) -> None:
        self._lock = threading.Lock()
        self._features: dict[str, frozenset[str]] = {}
        self._groups: dict[frozenset[str], set[str]] = {}
        self._weights: dict[frozenset[str], float] = {}  # a group's total feature weight, for the Jaccard
        self._arrays: _Groups | None = None  # built on the first query after the set of groups changed
        self._last: tuple[frozenset[str], _Groups, np.ndarray] | None = None  # the last cue's shared weights
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
                    self._arrays = None
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
            self._arrays = None

    def features_of(self, memory_id: str) -> frozenset[str]:
        return self._features.get(memory_id, frozenset())

    def _shared(self, cue_weights: dict[str, float]) -> tuple[_Groups, np.ndarray]:
        """Each group's shared feature weight with the cue (the lock held): the weights are added in the
        cue's feature order, as a plain sum over the group's features would."""
        arrays = self._arrays
        if arrays is None:
            arrays = self._arrays = _Groups.of(self._groups, self._weights)
        cue = frozenset(cue_weights)
        last = self._last
        if last is not None and last[0] == cue and last[1] is arrays:
            return arrays, last[2]
        shared = np.zeros(len(arrays.order))
        for f, w in cue_weights.items():
            groups = arrays.postings.get(f)
            if groups is not None:
                shared[groups] += w  # a posting names each group once
        self._last = (cue, arrays, shared)
        return arrays, shared

    def similarities(self, features: Sequence[str], memory_ids: Iterable[str]) -> dict[str, float]:
        """Weighted Jaccard of `features` with each memory's feature set (0 without one), from the cached
        group weights: the same figure as engine.analogy.features.structural_similarity, cheaper."""
        cue_weights = {f: feature_weight(f) for f in frozenset(features)}
        cue_total = sum(cue_weights.values())
        out: dict[str, float] = {}
        with self._lock:
            arrays, shared = self._shared(cue_weights)
            for memory_id in memory_ids:
                group = self._features.get(memory_id)
                if not group:
                    out[memory_id] = 0.0
                    continue
                g = arrays.number[group]
                s = float(shared[g])
                out[memory_id] = s / (cue_total + float(arrays.weights[g]) - s)
        return out

    def best_matches(self, features: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The `limit` memories most structurally similar to `features`, best first.

        Only memories sharing the cue's heaviest features can score well, so a pool of `5 * limit` is taken
        by shared feature weight first (among equal weights, the more similar first; then the older group),
        then ranked by structural similarity, ties by id.
        """
        cue = frozenset(features)
        if not cue or limit <= 0:
            return []
        cue_weights = {f: feature_weight(f) for f in cue}
        cue_total = sum(cue_weights.values())
        with self._lock:
            arrays, shared = self._shared(cue_weights)
            touched = np.flatnonzero(shared > 0)  # every feature weighs more than 0
            weight = shared[touched]
            # weighted Jaccard = shared / (cue + group - shared), as engine.analogy.features.structural_similarity
            similarity = weight / (cue_total + arrays.weights[touched] - weight)
            want = limit * 5  # every group holds at least one memory, so `want` groups are always enough
            first = np.lexsort((touched, -similarity, -weight))[:want]
            scored: list[tuple[str, float]] = []
            for g, s in zip(touched[first].tolist(), similarity[first].tolist(), strict=True):
                if len(scored) >= want:
                    break
                scored.extend((m, s) for m in islice(self._groups[arrays.order[g]], want - len(scored)))
        scored.sort(key=lambda s: (-s[1], s[0]))
        return scored[:limit]
