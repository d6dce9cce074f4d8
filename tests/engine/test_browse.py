"""Facade reads for people browsing a store: text search, a memory's revision history, entities a text names."""

from __future__ import annotations

import pytest

from engine import MemoryEngine
from engine.clock import ManualClock
from engine.errors import MemoryNotFoundError, ValidationError


def test_search_text_finds_substrings_with_the_list_filters(engine: MemoryEngine) -> None:
    hit = engine.remember("The Atlas launch slipped by a week", entity_id="atlas")
    engine.remember("Helix firmware shipped", entity_id="helix")
    other = engine.remember("Atlas retro: LAUNCH checklist updated", entity_id="ops")
    found = engine.search_text("launch")
    assert {m.id for m in found.memories} == {hit.id, other.id} and found.total == 2  # case ignored
    assert [m.id for m in engine.search_text("launch", entity_id="atlas").memories] == [hit.id]
    page = engine.search_text("launch", limit=1)
    assert page.total == 2 and len(page.memories) == 1


def test_search_text_takes_wildcards_literally_and_refuses_an_empty_text(engine: MemoryEngine) -> None:
    engine.remember("rates went up 5% this quarter")
    engine.remember("rates went up 5 points")
    assert engine.search_text("5%").total == 1
    assert engine.search_text("_").total == 0
    with pytest.raises(ValidationError):
        engine.search_text("  ")


def test_revisions_of_lists_earlier_states_newest_first(engine: MemoryEngine, clock: ManualClock) -> None:
    memory = engine.remember("draft one", importance=0.3)
    assert engine.revisions_of(memory.id) == []
    clock.advance(seconds=60)
    engine.revise(memory.id, content="draft two")
    clock.advance(seconds=60)
    engine.revise(memory.id, content="draft three", importance=0.8)
    earlier = engine.revisions_of(memory.id)
    assert [m.content for m in earlier] == ["draft two", "draft one"]
    assert engine.get(memory.id).content == "draft three"
    with pytest.raises(MemoryNotFoundError):
        engine.revisions_of("NOPE")


def test_entities_named_in_a_text(engine: MemoryEngine) -> None:
    engine.remember("The launch failed", entity_id="atlas-launch")
    engine.remember("Deal won", entity_id="acme-corp")
    engine.remember("Plain note")
    assert engine.entities_named_in("Why did the Atlas launch fail? Ask Acme Corp.") == ["atlas-launch", "acme-corp"]
    assert engine.entities_named_in("what about acme corp and the atlas launch") == ["acme-corp", "atlas-launch"]
    assert engine.entities_named_in("atlas alone is not the whole name") == []
