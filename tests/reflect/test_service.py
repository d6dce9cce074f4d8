"""Reflection through the engine's requests: insights are memories citing their sources, re-runs add nothing,
forgetting a source makes its insights stale, and an agent's commit is checked against its session."""

from __future__ import annotations

import pytest

from engine import MemoryEngine
from engine.api import parse_request
from engine.clock import ManualClock
from engine.errors import ValidationError
from engine.models import EdgeType, MemoryKind
from tests.reflect.test_reflect import TOPICS


def call(engine: MemoryEngine, op: str, **fields: object) -> object:
    return engine.handle(parse_request(op, fields))


def _seed(engine: MemoryEngine) -> dict[str, str]:
    """memory id -> topic"""
    topic_of = {}
    for topic, texts in TOPICS.items():
        for text in texts:
            topic_of[engine.remember(text, entity_id=topic).id] = topic
    return topic_of


def test_reflect_writes_insights_that_cite_their_topic_and_does_not_repeat(engine: MemoryEngine) -> None:
    topic_of = _seed(engine)
    done = call(engine, "reflect")
    assert done.memories_processed == len(topic_of) and len(done.insights) == 3
    for insight in done.insights:
        assert insight.memory.kind == MemoryKind.INSIGHT
        assert {topic_of[s] for s in insight.source_ids} == {insight.memory.entity_id}
        assert len(insight.source_ids) == len(TOPICS[insight.memory.entity_id])
        edges = [e for e in engine.edges_of(insight.memory.id) if e.type == EdgeType.INSIGHT_FROM]
        assert sorted(e.target for e in edges) == sorted(insight.source_ids)
    again = call(engine, "reflect")
    assert len(again.insights) == 0 and again.unchanged == 3
    listed = call(engine, "insights", max_results=2)
    assert len(listed.insights) == 2
    every = call(engine, "insights", max_results=10).insights
    assert [i.confidence for i in every] == sorted((i.confidence for i in every), reverse=True)
    assert listed.insights == every[:2]  # the true top N, not the first N found
    assert {i.memory.entity_id for i in call(engine, "insights", entity_id="car").insights} == {"car"}
    assert call(engine, "insights", min_confidence=1.0).insights == tuple(i for i in every if i.confidence >= 1.0)
    found = engine.recall("brake pads and oil change for the car", top_k=10, strategies=["similarity"])
    assert any(r.memory.kind == MemoryKind.INSIGHT for r in found)


def test_forgetting_a_source_marks_its_insight_stale(engine: MemoryEngine) -> None:
    _seed(engine)
    call(engine, "reflect", entity_id="garden")
    (garden,) = call(engine, "insights", entity_id="garden").insights
    assert not garden.stale
    engine.forget(garden.source_ids[0])
    (after,) = call(engine, "insights", entity_id="garden").insights
    assert after.stale and len(after.source_ids) == len(garden.source_ids) - 1
    rerun = call(engine, "reflect", entity_id="garden")
    assert len(rerun.insights) == 1  # changed sources: a new insight for them


def test_prepare_then_commit_stores_the_agents_insights(engine: MemoryEngine, clock: ManualClock) -> None:
    topic_of = _seed(engine)
    prepared = call(engine, "reflect_prepare")
    assert len(prepared.clusters) == 3 and prepared.session_id
    first = prepared.clusters[0]
    assert len({topic_of[m.id] for m in first.memories}) == 1 and first.suggestion
    sources = [m.id for m in first.memories]
    before = engine.stats(vector_index=False)["memories"]
    bad = [
        ({"session_id": "nope", "insights": [{"content": "x", "source_memory_ids": sources}]}, "no reflect session"),
        ({"session_id": prepared.session_id, "insights": [{"content": "x", "source_memory_ids": ["01ZZZ"]}]},
         "not among this session"),
        ({"session_id": prepared.session_id, "insights": [{"content": "x", "source_memory_ids": sources,
                                                           "cluster_id": 9}]}, "cluster_id 9"),
        ({"session_id": prepared.session_id, "insights": [{"content": "x", "source_memory_ids": sources,
                                                           "confidence": 2}]}, "confidence"),
        ({"session_id": prepared.session_id, "insights": []}, "at least one insight"),
    ]
    for fields, reason in bad:
        with pytest.raises(ValidationError, match=reason):
            call(engine, "reflect_commit", **fields)
    assert engine.stats(vector_index=False)["memories"] == before  # nothing stored by a refused commit
    done = call(engine, "reflect_commit", session_id=prepared.session_id, insights=[
        {"content": "The agent's summary of one topic.", "confidence": 0.9, "source_memory_ids": sources,
         "cluster_id": 0, "tags": ["summary"]}])
    (insight,) = done.insights
    assert insight.memory.content == "The agent's summary of one topic." and insight.source_ids == tuple(sources)
    assert insight.memory.context["insight"]["written_by"] == "agent"
    with pytest.raises(ValidationError, match="already committed"):
        call(engine, "reflect_commit", session_id=prepared.session_id,
             insights=[{"content": "again", "source_memory_ids": sources}])
    late = call(engine, "reflect_prepare")
    clock.advance(minutes=11)
    with pytest.raises(ValidationError, match="expired"):
        call(engine, "reflect_commit", session_id=late.session_id,
             insights=[{"content": "late", "source_memory_ids": [late.clusters[0].memories[0].id]}])
