"""The issue's done-when, on the real sample corpus: temporal story, causal reach, cross-domain analogy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import MemoryEngine
from engine.ingest.summary import IngestSummary
from interfaces.cli import main

pytestmark = pytest.mark.slow
Indexed = tuple[MemoryEngine, IngestSummary]
MERIDIAN_STORY = (
    "On 2026-01-15, Meridian Analytics signed a Data Processing Agreement with CloudVault.",
    "Meridian Analytics was not notified when CloudVault changed its backup subprocessor to NordHost on 2026-03-02.",
    "On 2026-03-20, Meridian Analytics discovered a violation of its Data Processing Agreement with CloudVault.",
    "On 2026-04-03, Meridian Analytics escalated the CloudVault risk to the board risk committee.",
)


def proposition(engine: MemoryEngine, content: str) -> str:
    (found,) = [m.id for m in engine.list_memories(kind="proposition", limit=5000) if m.content == content]
    return found


def test_the_corpus_is_indexed_without_skips(sample_engine: Indexed) -> None:
    engine, summary = sample_engine
    assert summary.documents == 48 and summary.skipped == []  # README.md is not part of the story
    assert summary.conversations == 5 and summary.messages_total > 40  # the chats: one memory per message
    assert summary.propositions_total > 800
    assert min(summary.edges.values()) > 50
    assert engine.resolve_entity("meridian") == "meridian analytics"


# The four events of the done-when, as (date, a word every statement of it uses).
MERIDIAN_EVENTS = (("2026-01-15", "signed"), ("2026-03-02", "NordHost"), ("2026-03-20", "violation"),
                   ("2026-04-03", "escalated"))


def event_positions(memories: list[dict]) -> list[int]:
    """Where each of the four events first appears in a list of memories (as JSON)."""
    return [
        next(i for i, m in enumerate(memories) if m["created_at"].startswith(day) and word in m["content"])
        for day, word in MERIDIAN_EVENTS
    ]


def test_temporal_recall_tells_the_meridian_story_in_order(sample_engine: Indexed) -> None:
    engine, _ = sample_engine
    results = engine.recall("what happened with Meridian?", strategies=["temporal"], entity_id="meridian")
    memories = [r.memory.to_dict() for r in results]
    assert len(memories) == 10
    positions = event_positions(memories)
    assert positions == sorted(positions)
    assert [m["created_at"] for m in memories] == sorted(m["created_at"] for m in memories)


def test_restatements_are_shown_once_on_the_timeline(sample_engine: Indexed) -> None:
    engine, _ = sample_engine
    results = engine.recall(strategies=["temporal"], entity_id="meridian", top_k=20)
    signed = [r for r in results if r.memory.created_at.date().isoformat() == "2026-01-15"
              and "signed" in r.memory.content]
    assert len(signed) == 1 and signed[0].memory.importance > 0.5
    restated = [m for m in engine.list_memories(entity_id="meridian", kind="proposition", limit=1000)
                if m.created_at.date().isoformat() == "2026-01-15" and "signed a Data Processing" in m.content
                and m.id != signed[0].memory.id]
    assert restated and all(m.importance < 0.5 for m in restated)


def test_temporal_recall_in_the_cli(sample_engine: Indexed) -> None:
    engine, _ = sample_engine
    result = CliRunner().invoke(main, ["--data-dir", str(engine.data_dir), "recall", "what happened with Meridian?",
                                       "--strategy", "temporal", "--entity-id", "meridian", "--format", "json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    memories = [r["memory"] for r in json.loads(result.stdout)["results"]]
    positions = event_positions(memories)
    assert positions == sorted(positions)


def test_causal_recall_reaches_the_subprocessor_change_from_the_escalation(sample_engine: Indexed) -> None:
    engine, _ = sample_engine
    escalation = proposition(engine, MERIDIAN_STORY[3])
    change = proposition(engine, MERIDIAN_STORY[1])
    results = engine.recall("why was the risk escalated?", strategies=["causal"], seed_memory_id=escalation,
                            max_depth=3, edge_types=["caused_by"], top_k=100)
    reached = {r.memory.id: r.strategy_details[0].fields for r in results}
    assert change in reached
    assert reached[change]["depth"] <= 3 and reached[change]["edge_type"] == "caused_by"


def test_analogical_recall_finds_a_failure_from_another_domain(sample_engine: Indexed) -> None:
    engine, _ = sample_engine
    results = engine.recall("Our app launch failed because QA testing was skipped to hit the release date.",
                            strategies=["analogical"], top_k=5)
    sources = [Path(r.memory.context.get("source", "")).name for r in results]
    other_domains = ("bistro-lumen", "helix", "juniper", "northside")
    assert any(any(d in s for d in other_domains) for s in sources), sources
    for r in results:
        shared = r.strategy_details[0].fields["shared_structure"]
        assert "act:fail" in shared or "val:failure" in shared, shared  # each result is a failure too
