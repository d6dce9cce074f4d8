"""The tenant policy's validation and HEBBS' decay score."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from engine.errors import InvalidPolicyError, ValidationError
from engine.policy import DEFAULT_HALF_LIFE_DAYS, Policy
from engine.recall.scoring import decay_score

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def test_a_fresh_never_recalled_memory_scores_its_importance() -> None:
    assert decay_score(0.6, NOW, None, 0, NOW) == pytest.approx(0.6)


def test_the_score_halves_every_half_life_from_the_last_access() -> None:
    created = NOW - timedelta(days=300)
    one = decay_score(0.8, created, NOW - timedelta(days=10), 0, NOW, half_life_days=10)
    two = decay_score(0.8, created, NOW - timedelta(days=20), 0, NOW, half_life_days=10)
    assert one == pytest.approx(0.4) and two == pytest.approx(0.2)
    never = decay_score(0.8, NOW - timedelta(days=10), None, 0, NOW, half_life_days=10)
    assert never == pytest.approx(0.4)  # no access: age from creation


def test_recalls_raise_the_score_up_to_the_cap() -> None:
    base = decay_score(0.5, NOW, None, 0, NOW)
    some = decay_score(0.5, NOW, None, 7, NOW)
    capped = decay_score(0.5, NOW, None, 100, NOW)
    assert base < some < capped == pytest.approx(1.0)
    assert decay_score(0.5, NOW, None, 10_000, NOW) == pytest.approx(capped)
    assert some == pytest.approx(0.5 * (1 + math.log2(8) / math.log2(101)))


def test_a_clock_before_the_last_access_does_not_inflate_the_score() -> None:
    assert decay_score(0.5, NOW, NOW + timedelta(days=3), 0, NOW) == pytest.approx(0.5)


def test_policy_updates_keep_what_is_not_given() -> None:
    policy = Policy().updated(auto_forget_threshold=0.1)
    assert policy.decay_half_life_days == DEFAULT_HALF_LIFE_DAYS and policy.max_snapshots_per_memory is None
    policy = policy.updated(max_snapshots_per_memory=5, decay_half_life_days=7)
    assert (policy.max_snapshots_per_memory, policy.auto_forget_threshold, policy.decay_half_life_days) == (5, 0.1, 7.0)


@pytest.mark.parametrize("changes", [
    {"max_snapshots_per_memory": 0}, {"max_snapshots_per_memory": True}, {"max_snapshots_per_memory": 2.5},
    {"auto_forget_threshold": 1.5}, {"auto_forget_threshold": "0.2"}, {"auto_forget_threshold": -0.1},
    {"decay_half_life_days": 0}, {"decay_half_life_days": float("inf")}, {"decay_half_life_days": float("nan")},
])
def test_out_of_range_values_are_refused_with_the_field_named(changes: dict[str, object]) -> None:
    with pytest.raises(InvalidPolicyError) as caught:
        Policy().updated(**changes)
    assert next(iter(changes)) in str(caught.value)
    assert isinstance(caught.value, ValidationError)
