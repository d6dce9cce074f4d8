"""LoCoMo loads through the engine's conversation format (the path a user's chats take) and gives the same
memories the benchmark's old direct importer wrote, so the quality figures stay comparable."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import locomo, paths
from engine import EdgeType, MemoryEngine
from engine.clock import ManualClock
from engine.embedding import SentenceTransformerEmbedder


@pytest.fixture(scope="module")
def conversation() -> locomo.Conversation:
    path = paths.locomo_path()
    if not path.exists():
        pytest.skip(f"LoCoMo data not found at {paths.display(path)}")
    conv = locomo.load(path)[0]
    turns = tuple(t for t in conv.turns if t.session <= 2)  # two sessions: enough to cross a session bound
    return locomo.Conversation(conv.sample_id, conv.speakers, turns, ())


def test_the_ingest_path_gives_the_old_importers_memories(
    conversation: locomo.Conversation, embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    turns = conversation.turns
    with MemoryEngine(tmp_path / "data", embedder=embedder, clock=ManualClock(conversation.last_time)) as engine:
        dia_of = locomo.import_conversation(engine, conversation)
        memories = {dia: engine.get(mid) for mid, dia in dia_of.items()}
        assert sorted(memories) == sorted(t.dia_id for t in turns)  # one memory per turn, each citable
        for t in turns:
            m = memories[t.dia_id]
            # What the old importer wrote: content, the speaker as entity (an entity id is lower case; recall
            # resolves the name as written), the session's date-time plus the turn's order.
            assert (m.content, m.created_at, m.context["session"]) == (t.content, t.at, t.session)
            assert m.entity_id == t.speaker.lower() and engine.resolve_entity(t.speaker) == m.entity_id
            assert m.context["conversation"] == conversation.sample_id
        edges = {(e.source, e.target) for m in memories.values() for e in engine.edges_of(m.id)
                 if e.type == EdgeType.FOLLOWED_BY}
    ids = {t.dia_id: memories[t.dia_id].id for t in turns}
    old = {(ids[a.dia_id], ids[b.dia_id]) for a, b in zip(turns, turns[1:], strict=False)}
    within = {(ids[a.dia_id], ids[b.dia_id]) for a, b in zip(turns, turns[1:], strict=False) if a.session == b.session}
    # The old importer also chained the last turn of a session to the first of the next; sessions are now
    # episodes of their own (windows, smoothing and the episode boost never crossed them anyway).
    assert edges == within and len(old - within) == len({t.session for t in turns}) - 1
