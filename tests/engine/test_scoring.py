"""The composite score arithmetic, exactly as GUIDE section 2 states it."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from engine.errors import InvalidWeightsError
from engine.models import Memory, MemoryKind, RecallResult, Signals
from engine.recall import scoring
from engine.recall.scoring import ScoringWeights

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def memory(age_days: float = 0, importance: float = 0.5, access_count: int = 0, mid: str = "A") -> Memory:
    created = NOW - timedelta(days=age_days)
    return Memory(mid, "x", importance, {}, None, MemoryKind.EPISODE, created, created, None, access_count)


def test_defaults_are_the_documented_ones() -> None:
    assert ScoringWeights().as_tuple() == (0.5, 0.2, 0.2, 0.1)


def test_brand_new_memory_scores_at_most_080_with_defaults() -> None:
    s = scoring.signals_for(memory(), relevance=1.0, now=NOW)
    assert s == Signals(1.0, 1.0, 0.5, 0.0)
    assert scoring.composite(s) == pytest.approx(0.80)


@pytest.mark.parametrize(("age_days", "expected"), [(0, 1.0), (15, 0.5), (30, 0.0), (45, 0.0), (-1, 1.0)])
def test_recency_is_linear_over_30_days_and_clamped(age_days: float, expected: float) -> None:
    assert scoring.recency(NOW - timedelta(days=age_days), NOW) == pytest.approx(expected)


@pytest.mark.parametrize(("count", "expected"), [(0, 0.0), (1, 1 / math.log2(101)), (100, 1.0), (5000, 1.0)])
def test_reinforcement_is_log_scaled_and_capped(count: int, expected: float) -> None:
    assert scoring.reinforcement(count) == pytest.approx(expected)


def test_composite_is_the_weighted_sum() -> None:
    s = Signals(relevance=0.7, recency=0.4, importance=0.9, reinforcement=0.25)
    w = ScoringWeights(0.3, 0.5, 0.2, 0.0)
    assert scoring.composite(s, w) == pytest.approx(0.3 * 0.7 + 0.5 * 0.4 + 0.2 * 0.9)
    assert sum(scoring.contributions(s, w).values()) == pytest.approx(scoring.composite(s, w))


def test_rescore_reorders_without_touching_signals() -> None:
    found = [memory(age_days=20, importance=1.0, mid="OLD"), memory(age_days=0, importance=0.1, mid="NEW")]
    unranked = [RecallResult(m, 0.0, scoring.signals_for(m, 0.5, NOW), ()) for m in reversed(found)]
    ranked = scoring.rescore(unranked, ScoringWeights(0, 0, 1, 0))
    assert [r.memory.id for r in ranked] == ["OLD", "NEW"]
    flipped = scoring.rescore(ranked, ScoringWeights(0, 1, 0, 0))
    assert [r.memory.id for r in flipped] == ["NEW", "OLD"]
    assert {r.memory.id: r.signals for r in flipped} == {r.memory.id: r.signals for r in ranked}


@pytest.mark.parametrize("text", ["1:2:3", "a:b:c:d", "0.5:0.2:0.2:-0.1", "nan:0:0:0", "inf:0:0:0", "", "1:1:1:1:1"])
def test_bad_weight_strings_are_rejected(text: str) -> None:
    with pytest.raises(InvalidWeightsError):
        ScoringWeights.parse(text)


def test_weight_mapping_rejects_unknown_keys_and_non_numbers() -> None:
    with pytest.raises(InvalidWeightsError, match="unknown weight"):
        ScoringWeights.from_mapping({"w_relevance": 1, "w_fun": 2})
    with pytest.raises(InvalidWeightsError):
        ScoringWeights.from_mapping({"w_relevance": "1"})
    with pytest.raises(InvalidWeightsError):
        ScoringWeights.from_mapping({"w_relevance": True})
    assert ScoringWeights.from_mapping({"w_recency": 0.9}).as_tuple() == (0.5, 0.9, 0.2, 0.1)
