"""Contradiction candidates found on remember, reviewed by an agent's verdicts, and marked in recall."""

from __future__ import annotations

import pytest

from engine import MemoryEngine
from engine.api import parse_request
from engine.errors import ValidationError
from engine.models import EdgeType


def call(engine: MemoryEngine, op: str, **fields: object) -> object:
    return engine.handle(parse_request(op, fields))


def test_a_seeded_pair_is_a_candidate_and_a_compatible_pair_is_not(engine: MemoryEngine) -> None:
    older = engine.remember("Priya works at the Berlin office.", entity_id="priya")
    engine.remember("Priya enjoys hiking in the Alps on weekends.", entity_id="priya")  # compatible
    engine.remember("Priya does not work at the Berlin office.", entity_id="someone-else")  # another entity
    assert call(engine, "contradiction_prepare").candidates == ()
    newer = engine.remember("Priya does not work at the Berlin office.", entity_id="priya")
    (candidate,) = call(engine, "contradiction_prepare").candidates
    assert (candidate.memory_a, candidate.memory_b) == (older.id, newer.id)
    assert candidate.reason == "negation" and candidate.verdict == "contradiction" and 0 < candidate.confidence <= 1
    assert candidate.similarity >= 0.4


def test_verdicts_become_edges_and_recall_names_the_other_side(engine: MemoryEngine) -> None:
    a = engine.remember("The Tigers won the final.", entity_id="tigers")
    b = engine.remember("The Tigers lost the final.", entity_id="tigers")
    c = engine.remember("Priya works at the Berlin office.", entity_id="priya")
    d = engine.remember("Priya no longer works at the Berlin office; she moved to Munich.", entity_id="priya")
    pending = {p.memory_b: p for p in call(engine, "contradiction_prepare").candidates}
    assert set(pending) == {b.id, d.id} and pending[d.id].verdict == "revision"
    before = engine.stats(vector_index=False)["edges"]
    for verdicts, reason in [
        ([{"pending_id": "nope", "verdict": "dismiss"}], "no pending contradiction"),
        ([{"pending_id": pending[b.id].pending_id, "verdict": "maybe"}], "verdict must be one of"),
        ([{"pending_id": pending[b.id].pending_id, "verdict": "dismiss"}] * 2, "twice"),
        ([{"pending_id": pending[b.id].pending_id, "verdict": "contradiction"},
          {"pending_id": "nope", "verdict": "dismiss"}], "no pending contradiction"),
    ]:
        with pytest.raises(ValidationError, match=reason):
            call(engine, "contradiction_commit", verdicts=verdicts)
    assert engine.stats(vector_index=False)["edges"] == before  # refused: nothing written
    assert len(call(engine, "contradiction_prepare").candidates) == 2
    done = call(engine, "contradiction_commit", verdicts=[
        {"pending_id": pending[b.id].pending_id, "verdict": "contradiction", "confidence": 0.9,
         "reasoning": "won and lost"},
        {"pending_id": pending[d.id].pending_id, "verdict": "revision"}])
    assert (done.contradictions_confirmed, done.revisions_created, done.dismissed) == (1, 1, 0)
    assert call(engine, "contradiction_prepare").candidates == ()
    contradicts = {(e.source, e.target) for e in engine.edges_of(a.id) if e.type == EdgeType.CONTRADICTS}
    assert contradicts == {(a.id, b.id), (b.id, a.id)}
    assert any(e.type == EdgeType.REVISED_FROM and (e.source, e.target) == (d.id, c.id) for e in engine.edges_of(c.id))
    results = {r.memory.id: r for r in engine.recall("Tigers final result", top_k=5, strategies=["similarity"])}
    assert all(detail.fields["contradicts"] == [b.id] for detail in results[a.id].strategy_details)
    assert all(detail.fields["contradicts"] == [a.id] for detail in results[b.id].strategy_details)
    one_side = engine.recall("Tigers final result", top_k=1, strategies=["similarity"])
    assert all("contradicts" not in d.fields for d in one_side[0].strategy_details)  # the other side is not listed


def test_dismissed_or_forgotten_candidates_leave_the_list(engine: MemoryEngine) -> None:
    engine.remember("Our gate is B12.", entity_id="trip")
    newer = engine.remember("Our gate is C4.", entity_id="trip")
    engine.remember("Sam is allergic to peanuts.", entity_id="sam")
    engine.remember("Sam is not allergic to peanuts.", entity_id="sam")
    pending = call(engine, "contradiction_prepare").candidates
    assert len(pending) == 2
    engine.forget(newer.id)
    (left,) = call(engine, "contradiction_prepare").candidates
    done = call(engine, "contradiction_commit", verdicts=[{"pending_id": left.pending_id, "verdict": "dismiss"}])
    assert done.dismissed == 1 and call(engine, "contradiction_prepare").candidates == ()
