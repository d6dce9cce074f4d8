"""The composite score: pure functions of (signals, weights). No state, no I/O, no clock of its own.

composite = w_relevance * relevance + w_recency * recency + w_importance * importance
          + w_reinforcement * reinforcement

Beside it, HEBBS' decay score (what a tenant policy's auto-forget reads), built on the same reinforcement.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta

import numpy as np

from engine import config
from engine.errors import InvalidWeightsError
from engine.models import Memory, RecallResult, Signals
from engine.policy import DEFAULT_HALF_LIFE_DAYS
from engine.validation import short_repr

# Recency falls linearly from 1 (now) to 0 at this age; reinforcement grows as log2(1 + recalls) up to the cap.
RECENCY_MAX_AGE_SECONDS = 30 * 24 * 3600
REINFORCEMENT_CAP = 100

_NEWEST_FIRST = datetime.max.replace(tzinfo=UTC)
WEIGHT_NAMES = ("w_relevance", "w_recency", "w_importance", "w_reinforcement")


@dataclass(frozen=True, slots=True)
class ScoringWeights:
    w_relevance: float = config.DEFAULT_SCORING_WEIGHTS["w_relevance"]
    w_recency: float = config.DEFAULT_SCORING_WEIGHTS["w_recency"]
    w_importance: float = config.DEFAULT_SCORING_WEIGHTS["w_importance"]
    w_reinforcement: float = config.DEFAULT_SCORING_WEIGHTS["w_reinforcement"]

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidWeightsError(f"weight {f.name} must be a number, got {short_repr(value)}")
            try:
                finite = math.isfinite(value)
            except OverflowError:  # an integer too large for a float (10**400)
                finite = False
            if not finite or value < 0:
                raise InvalidWeightsError(
                    f"weight {f.name} must be a non-negative finite number, got {short_repr(value)}"
                )

    @classmethod
    def from_mapping(cls, raw: Mapping[str, object]) -> ScoringWeights:
        """From `{w_relevance, w_recency, w_importance, w_reinforcement}`; missing keys keep defaults."""
        if not isinstance(raw, Mapping):
            raise InvalidWeightsError(f"scoring_weights must be an object, got {type(raw).__name__}")
        unknown = set(raw) - set(WEIGHT_NAMES)
        if unknown:
            raise InvalidWeightsError(
                f"unknown weight(s) {', '.join(sorted(unknown))}; expected {', '.join(WEIGHT_NAMES)}"
            )
        return cls(**raw)  # type: ignore[arg-type]

    @classmethod
    def parse(cls, text: str) -> ScoringWeights:
        """From the CLI form `R:T:I:F`, e.g. `0.3:0.5:0.2:0`."""
        parts = text.split(":")
        if len(parts) != 4:
            raise InvalidWeightsError(f"weights must be four numbers R:T:I:F, got {text!r}")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise InvalidWeightsError(f"weights must be four numbers R:T:I:F, got {text!r}") from None
        return cls(*values)

    def as_tuple(self) -> tuple[float, float, float, float]:
        return (self.w_relevance, self.w_recency, self.w_importance, self.w_reinforcement)

    def to_dict(self) -> dict[str, float]:
        return dict(zip(WEIGHT_NAMES, self.as_tuple(), strict=True))


DEFAULT_WEIGHTS = ScoringWeights()

# Named presets (module constants, never mutated).
WEIGHT_PRESETS: dict[str, ScoringWeights] = {
    "default": DEFAULT_WEIGHTS,
    "pure relevance": ScoringWeights(1.0, 0.0, 0.0, 0.0),
    "recency-biased": ScoringWeights(0.3, 0.5, 0.1, 0.1),
}


def clamp01(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def recency(created_at: datetime, now: datetime, max_age_seconds: float = RECENCY_MAX_AGE_SECONDS) -> float:
    age = (now - created_at).total_seconds()
    return clamp01(1.0 - age / max_age_seconds)


def reinforcement(access_count: int, cap: int = REINFORCEMENT_CAP) -> float:
    return min(1.0, math.log2(1 + max(0, access_count)) / math.log2(1 + cap))


def decay_score(importance: float, created_at: datetime, last_accessed_at: datetime | None, access_count: int,
                now: datetime, half_life_days: float = DEFAULT_HALF_LIFE_DAYS) -> float:
    """importance x 2^(-age / half_life) x (1 + reinforcement): HEBBS' formula, in [0, 2 x importance]; age
    from the last access (from creation when never accessed), never negative."""
    age_days = max(0.0, (now - (last_accessed_at or created_at)).total_seconds() / 86_400)
    return importance * 2.0 ** (-age_days / half_life_days) * (1.0 + reinforcement(access_count))


def signals_for(memory: Memory, relevance: float, now: datetime) -> Signals:
    return signals_from(relevance, memory.created_at, memory.importance, memory.access_count, now)


def signals_from(
    relevance: float, created_at: datetime, importance: float, access_count: int, now: datetime
) -> Signals:
    """The signals from the few fields they need, so candidates can be ranked before they are read in full."""
    return Signals(
        relevance=clamp01(relevance),
        recency=recency(created_at, now),
        importance=importance,
        reinforcement=reinforcement(access_count),
    )


def composite_arrays(
    relevance: np.ndarray,
    created_us: np.ndarray,
    importance: np.ndarray,
    access_count: np.ndarray,
    now_us: int,
    weights: ScoringWeights = DEFAULT_WEIGHTS,
) -> np.ndarray:
    """`composite(signals_from(...))` for many candidates at once (same formula, numpy, no Python loop)."""
    age_s = (now_us - created_us.astype(np.int64)) / 1_000_000.0
    recency_ = np.clip(1.0 - age_s / RECENCY_MAX_AGE_SECONDS, 0.0, 1.0)
    reinforcement_ = np.minimum(
        1.0, np.log2(1.0 + np.maximum(0, access_count)) / math.log2(1 + REINFORCEMENT_CAP)
    )
    return (
        weights.w_relevance * np.clip(relevance, 0.0, 1.0)
        + weights.w_recency * recency_
        + weights.w_importance * importance
        + weights.w_reinforcement * reinforcement_
    )


def composite(signals: Signals, weights: ScoringWeights = DEFAULT_WEIGHTS) -> float:
    return (
        weights.w_relevance * signals.relevance
        + weights.w_recency * signals.recency
        + weights.w_importance * signals.importance
        + weights.w_reinforcement * signals.reinforcement
    )


def contributions(signals: Signals, weights: ScoringWeights = DEFAULT_WEIGHTS) -> dict[str, float]:
    """Each signal times its weight: the stacked bars of the workbench."""
    return {
        "relevance": weights.w_relevance * signals.relevance,
        "recency": weights.w_recency * signals.recency,
        "importance": weights.w_importance * signals.importance,
        "reinforcement": weights.w_reinforcement * signals.reinforcement,
    }


def _sort_key(result: RecallResult) -> tuple[float, float, timedelta, str]:
    return sort_key(result.score, result.signals.relevance, result.memory.created_at, result.memory.id)


def sort_key(
    score: float, relevance: float, created_at: datetime, memory_id: str
) -> tuple[float, float, timedelta, str]:
    """Highest score first; ties broken by relevance, then newest first, then id for stability."""
    return (-score, -relevance, _NEWEST_FIRST - created_at, memory_id)


def rescore(results: Sequence[RecallResult], weights: ScoringWeights, top_k: int | None = None) -> list[RecallResult]:
    """Re-rank already retrieved results under new weights, keeping their signals.

    Pure: no retrieval, no access counting. This is what the workbench sliders call.
    """
    rescored = [RecallResult(r.memory, composite(r.signals, weights), r.signals, r.strategy_details) for r in results]
    rescored.sort(key=_sort_key)
    return rescored if top_k is None else rescored[:top_k]
