"""Property tests: the parse step never raises anything but a ValidationError and never lets invalid text
through; the composite score stays in [0, 1] when the weights sum to 1 and never falls as a signal rises."""

from __future__ import annotations

import contextlib
import json
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import config
from engine.api import parse_request
from engine.api.requests import ListRequest, RecallRequest, RememberRequest
from engine.errors import ValidationError
from engine.models import Signals
from engine.recall.scoring import ScoringWeights, composite, signals_from
from engine.validation import MAX_CONTEXT_BYTES

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text including lone surrogates, NUL and control characters.
any_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=20,
)
anything = json_values | st.binary(max_size=8) | st.tuples(st.integers(), any_text) | st.sets(st.integers())


def _valid_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in value and unicodedata.is_normalized("NFC", value)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@FAST
@given(content=any_text, entity=st.none() | any_text, context=st.none() | json_values)
def test_remember_parse_accepts_only_valid_text(content: str, entity: str | None, context: Any) -> None:
    try:
        request = RememberRequest.parse({"content": content, "entity_id": entity, "context": context})
    except ValidationError:
        return
    assert _valid_text(request.content) and request.content.strip()
    assert request.entity_id is None or _valid_text(request.entity_id)
    assert all(_valid_text(s) for s in _strings(request.context))
    assert len(json.dumps(request.context).encode()) <= MAX_CONTEXT_BYTES


@FAST
@given(op=st.sampled_from(["remember", "recall", "list", "forget", "get", "revise", "prime", "neighbourhood"]),
       fields=st.dictionaries(st.sampled_from(["content", "cue", "entity_id", "limit", "offset", "top_k",
                                               "strategies", "time_range", "memory_ids", "memory_id", "context",
                                               "importance", "created_at", "edges", "depth", "prefix"]),
                              anything, max_size=5))
def test_any_request_fails_only_with_a_validation_error(op: str, fields: dict[str, Any]) -> None:
    # Anything but a ValidationError (TypeError, OverflowError, RecursionError...) fails the test.
    with contextlib.suppress(ValidationError):
        parse_request(op, fields)


@FAST
@given(limit=st.integers(min_value=-(2**80), max_value=2**80), offset=st.integers(min_value=-(2**80), max_value=2**80))
def test_list_limits_are_bounded(limit: int, offset: int) -> None:
    try:
        request = ListRequest.parse({"limit": limit, "offset": offset})
    except ValidationError:
        assert not (1 <= limit <= config.MAX_LIST_LIMIT and 0 <= offset <= 2**53)
        return
    assert 1 <= request.limit <= config.MAX_LIST_LIMIT and request.offset == offset


@FAST
@given(cue=any_text)
def test_a_parsed_cue_is_valid_text(cue: str) -> None:
    try:
        request = RecallRequest.parse({"cue": cue})
    except ValidationError:
        return
    assert _valid_text(request.cue) and request.cue.strip()


unit = st.floats(min_value=0.0, max_value=1.0)


@st.composite
def weights_summing_to_one(draw: st.DrawFn) -> ScoringWeights:
    raw = [draw(st.floats(min_value=0.0, max_value=1.0)) for _ in range(4)]
    total = sum(raw)
    if total == 0:
        return ScoringWeights(1.0, 0.0, 0.0, 0.0)
    return ScoringWeights(*(w / total for w in raw))


@FAST
@given(weights=weights_summing_to_one(), signals=st.tuples(unit, unit, unit, unit))
def test_score_is_in_unit_interval(weights: ScoringWeights, signals: tuple[float, float, float, float]) -> None:
    score = composite(Signals(*signals), weights)
    assert -1e-9 <= score <= 1 + 1e-9


@FAST
@given(weights=weights_summing_to_one(), signals=st.tuples(unit, unit, unit, unit),
       which=st.integers(min_value=0, max_value=3), bump=unit)
def test_score_is_monotone_in_each_signal(
    weights: ScoringWeights, signals: tuple[float, float, float, float], which: int, bump: float
) -> None:
    higher = list(signals)
    higher[which] = min(1.0, higher[which] + bump)
    assert composite(Signals(*higher), weights) >= composite(Signals(*signals), weights) - 1e-12


@FAST
@given(relevance=unit, importance=unit, age_days=st.floats(min_value=0, max_value=400),
       older_by=st.floats(min_value=0, max_value=400), accesses=st.integers(min_value=0, max_value=10**6),
       more=st.integers(min_value=0, max_value=1000))
def test_signals_from_memory_fields_are_bounded_and_ordered(
    relevance: float, importance: float, age_days: float, older_by: float, accesses: int, more: int
) -> None:
    now = datetime(2026, 6, 1, tzinfo=UTC)
    newer = signals_from(relevance, now - timedelta(days=age_days), importance, accesses + more, now)
    older = signals_from(relevance, now - timedelta(days=age_days + older_by), importance, accesses, now)
    for s in (newer, older):
        assert all(0.0 <= v <= 1.0 for v in (s.relevance, s.recency, s.importance, s.reinforcement))
    assert newer.recency >= older.recency and newer.reinforcement >= older.reinforcement
