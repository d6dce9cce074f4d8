"""Ranking: candidates' relevance and the memories' stored signals into the composite score, cut to top_k.

Pure reads of the record store: a candidate's score needs only its importance, created_at and access_count,
so a large pool is scored from those (in numpy, then exactly near the cut) and only the winners are read whole.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

import numpy as np

from engine.models import Memory, RecallResult, StrategyDetail
from engine.recall import scoring
from engine.recall.strategies import Hit
from engine.store.interface import Storage
from engine.store.rows import ScoreInputs, from_micros, to_micros

# Bound on the difference between numpy's composite score and the exact one (float rounding, about 1e-15).
SCORE_SLACK = 1e-9


class Candidates(NamedTuple):
    """What the composite score ranks: each candidate's relevance, and its strategies' details on demand (a
    fused recall builds them for the few winners only)."""

    relevance: Mapping[str, float]
    details: Callable[[Collection[str]], Mapping[str, Sequence[StrategyDetail]]]


def best_of(hit_lists: Sequence[Sequence[Hit]]) -> Candidates:
    """Strategies' hits as candidates (de-duplicated by id, keeping the highest relevance)."""
    out: dict[str, tuple[float, list[StrategyDetail]]] = {}
    for hits in hit_lists:
        for h in hits:
            relevance, details = out.get(h.id, (0.0, []))
            out[h.id] = (max(relevance, h.relevance), [*details, h.detail])
    return Candidates({i: r for i, (r, _) in out.items()}, lambda ids: {i: out[i][1] for i in ids})


def rank(
    store: Storage, candidates: Candidates, weights: scoring.ScoringWeights, top_k: int, now: datetime
) -> list[RecallResult]:
    """Score and cut to top_k, reading whole memories (and building strategy details) for the winners only.

    A temporal pool of hundreds is scored from the stored signals and only the top_k are read and parsed in
    full. A single strategy's few candidates (at most 2 x top_k, all of them contenders) are read whole at
    once: one query, not two.
    """
    best = candidates.relevance
    memories: dict[str, Memory] | None = None
    contenders: list[tuple[str, datetime | None, float, int]]
    if len(best) <= 2 * top_k:
        memories = store.get_many(list(best))  # drops anything forgotten meanwhile
        contenders = [(i, m.created_at, m.importance, m.access_count) for i, m in memories.items()]
    else:
        inputs = store.score_inputs(list(best))
        relevance = np.array([best[i] for i in inputs.ids], dtype=np.float64)
        contenders = [
            (inputs.ids[n], from_micros(int(inputs.created_us[n])), float(inputs.importance[n]),
             int(inputs.access_count[n]))
            for n in contender_positions(relevance, inputs, now, weights, top_k)
        ]
    ranked = []
    for i, created, importance, access_count in contenders:
        assert created is not None
        signals = scoring.signals_from(best[i], created, importance, access_count, now)
        score = scoring.composite(signals, weights)
        ranked.append((scoring.sort_key(score, signals.relevance, created, i), score, signals, i))
    ranked.sort(key=lambda r: r[0])
    winners = ranked[:top_k]
    if memories is None:
        memories = store.get_many([i for *_, i in winners])
    details = candidates.details([i for *_, i in winners if i in memories])
    return [
        RecallResult(memories[i], score, signals, tuple(details[i]))
        for _, score, signals, i in winners
        if i in memories
    ]


def contender_positions(
    relevance: np.ndarray, inputs: ScoreInputs, now: datetime, weights: scoring.ScoringWeights, top_k: int
) -> list[int]:
    """Positions (in `inputs`) of the candidates that can be among the `top_k` (`relevance`: each one's, in the
    same order): the pool is scored at once in numpy and only those within `SCORE_SLACK` of the k-th best
    numpy score are scored exactly (and tie-broken) in Python. Exact: every one of the true top_k scores at
    least the k-th best exact score, which is within the slack of the k-th best numpy score, so the ranking
    and scores are those of scoring every candidate exactly."""
    count = len(inputs.ids)
    if count <= 2 * top_k:
        return list(range(count))
    approx = scoring.composite_arrays(
        relevance, inputs.created_us, inputs.importance, inputs.access_count, to_micros(now), weights
    )
    kth = float(np.partition(approx, count - top_k)[count - top_k])
    return np.flatnonzero(approx >= kth - SCORE_SLACK).tolist()
