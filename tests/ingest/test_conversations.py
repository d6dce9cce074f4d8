"""Conversations as an ingest format (real spaCy, model, Chroma through the engine): the three shapes, one
memory per message with speaker, session, time and source id, followed_by edges within sessions,
idempotent re-indexing, growing and changed transcripts, bad shapes, and forgetting inside a session."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engine import EdgeType, Memory, MemoryEngine, MemoryKind
from engine.ingest.conversations import NotAConversation, parse_when, read_conversation
from engine.ingest.summary import IngestSummary

Write = Callable[[str, str | bytes], Path]

FLAT = [
    {"speaker": "Ana", "text": "The Kiln oven passed its inspection this morning.", "time": "2026-04-28T10:00:00Z",
     "id": "m1"},
    {"speaker": "Ben", "text": "Great, then the bakery can open on Friday.", "time": "2026-04-28T10:02:00Z",
     "id": "m2"},
]
SESSIONS = {
    "title": "Garden club",
    "sessions": [
        {"id": "spring", "date": "2026-03-01T18:00:00Z", "messages": [
            {"author": "Cleo", "content": "I planted tomatoes along the south fence."},
            {"author": "Dev", "content": "Mine went into the greenhouse because of the frost."},
        ]},
        [
            {"speaker": "Cleo", "text": "The tomatoes by the fence got blight.", "time": "2026-06-10T09:00:00Z"},
            {"speaker": "Dev", "text": "The greenhouse ones are fine."},
        ],
    ],
}
LOCOMO_SHAPED = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Maya",
        "speaker_b": "Omar",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Maya", "dia_id": "D1:1", "text": "I joined a pottery class last week!"},
            {"speaker": "Omar", "dia_id": "D1:2", "text": "Nice, what did you make?",
             "blip_caption": "a photo of a clay bowl"},
        ],
        "session_2_date_time": "7:10 pm on 20 May, 2023",
        "session_2": [{"speaker": "Omar", "dia_id": "D2:1", "text": "How is the zeppelin model going?"}],
    },
    "qa": [{"question": "What did Maya join?", "answer": "a pottery class", "evidence": ["D1:1"], "category": 4}],
}


@pytest.fixture
def indexer(engine: MemoryEngine, nlp: object) -> Callable[..., IngestSummary]:
    return engine.ingest


def messages_of(engine: MemoryEngine) -> list[Memory]:
    return sorted(engine.list_memories(kind="episode", limit=1000), key=lambda m: (m.created_at, m.id))


def followed_by(engine: MemoryEngine, memories: list[Memory]) -> set[tuple[str, str]]:
    return {(e.source, e.target) for m in memories for e in engine.edges_of(m.id)
            if e.type == EdgeType.FOLLOWED_BY}


def index_three_shapes(write: Write, indexer: Callable[..., IngestSummary]) -> tuple[Path, IngestSummary]:
    write("chats/2026-04-28-kiln.json", json.dumps(FLAT))
    write("chats/garden.json", json.dumps(SESSIONS))
    path = write("chats/conv-x.json", json.dumps(LOCOMO_SHAPED))
    return path.parent, indexer([path.parent])


def test_three_shapes_become_one_memory_per_message(
    engine: MemoryEngine, write: Write, indexer: Callable[..., IngestSummary]
) -> None:
    _, summary = index_three_shapes(write, indexer)
    assert (summary.documents_indexed, summary.conversations, summary.skipped) == (3, 3, [])
    assert summary.messages_added == summary.messages_total == 9 and summary.propositions_total == 0
    memories = messages_of(engine)
    assert all(m.kind == MemoryKind.EPISODE for m in memories)
    assert engine.list_memories(kind="document", limit=10) == []
    by_text = {m.content: m for m in memories}

    kiln = by_text["Ana: The Kiln oven passed its inspection this morning."]
    assert kiln.entity_id == "ana" and engine.resolve_entity("Ana") == "ana"
    assert kiln.created_at == datetime(2026, 4, 28, 10, tzinfo=UTC)
    assert {k: kiln.context[k] for k in ("message_id", "session", "source", "format")} == {
        "message_id": "m1", "session": 1, "source": "chats/2026-04-28-kiln.json", "format": "conversation"}

    planted = by_text["Cleo: I planted tomatoes along the south fence."]
    frost = by_text["Dev: Mine went into the greenhouse because of the frost."]
    blight = by_text["Cleo: The tomatoes by the fence got blight."]
    fine = by_text["Dev: The greenhouse ones are fine."]
    assert planted.context["session"] == "spring" and blight.context["session"] == 2
    assert planted.context["title"] == "Garden club"
    assert planted.created_at == datetime(2026, 3, 1, 18, tzinfo=UTC)  # the session's date, + its order
    assert frost.created_at == planted.created_at + timedelta(seconds=1)
    assert fine.created_at == blight.created_at + timedelta(seconds=1)  # just after the dated message before it

    pottery = by_text["Maya: I joined a pottery class last week!"]
    bowl = by_text["Omar: Nice, what did you make? [shares a photo: a photo of a clay bowl]"]
    zeppelin = by_text["Omar: How is the zeppelin model going?"]
    assert pottery.created_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert zeppelin.created_at == datetime(2023, 5, 20, 19, 10, 2, tzinfo=UTC)  # + its place in the conversation
    assert (pottery.context["conversation"], pottery.context["message_id"], zeppelin.context["session"]) == (
        "conv-x", "D1:1", 2)

    # Consecutive messages of a session are linked; sessions are not linked to each other.
    assert followed_by(engine, memories) == {
        (kiln.id, by_text["Ben: Great, then the bakery can open on Friday."].id),
        (planted.id, frost.id), (blight.id, fine.id), (pottery.id, bowl.id),
    }
    # The speaker's timeline holds their messages (found by the name as written).
    assert {m.id for m in engine.list_memories(entity_id="Omar", limit=10)} == {zeppelin.id, bowl.id}


def test_reindexing_is_idempotent_and_a_grown_chat_keeps_its_messages(
    engine: MemoryEngine, write: Write, indexer: Callable[..., IngestSummary]
) -> None:
    folder, _ = index_three_shapes(write, indexer)
    before = {m.id: m.content for m in messages_of(engine)}
    again = indexer([folder])
    assert (again.documents_unchanged, again.documents_indexed, again.messages_added) == (3, 0, 0)
    assert {m.id: m.content for m in messages_of(engine)} == before

    grown = [*FLAT, {"speaker": "Ana", "text": "I will order flour for the opening.", "id": "m3",
                     "time": "2026-04-28T10:05:00Z"}]
    write("chats/2026-04-28-kiln.json", json.dumps(grown))
    summary = indexer([folder])
    assert (summary.documents_indexed, summary.messages_added, summary.messages_kept, summary.messages_removed) == (
        1, 1, 2, 0)
    after = {m.id: m.content for m in messages_of(engine)}
    assert set(before) < set(after)  # every old message kept its id
    new_id = next(i for i in after if i not in before)
    ben = next(i for i, c in before.items() if c.startswith("Ben: Great"))
    assert {e for e in followed_by(engine, [engine.get(ben)]) if e[0] == ben} == {(ben, new_id)}

    edited = [{**FLAT[0], "text": "The Kiln oven failed its inspection."}, *grown[1:]]
    write("chats/2026-04-28-kiln.json", json.dumps(edited))
    summary = indexer([folder])
    assert (summary.messages_added, summary.messages_kept, summary.messages_removed) == (3, 0, 3)
    kiln = [m for m in messages_of(engine) if m.context["source"].endswith("kiln.json")]
    assert [m.content for m in kiln] == ["Ana: The Kiln oven failed its inspection.",
                                         "Ben: Great, then the bakery can open on Friday.",
                                         "Ana: I will order flour for the opening."]
    assert len(followed_by(engine, kiln)) == 2 and not set(before) & {m.id for m in kiln}

    (folder / "garden.json").unlink()
    summary = indexer([folder])
    assert (summary.documents_removed, summary.messages_removed) == (1, 4)
    assert not [m for m in messages_of(engine) if m.context["source"].endswith("garden.json")]


def test_forgetting_a_message_keeps_edges_and_windows_consistent(
    engine: MemoryEngine, write: Write, indexer: Callable[..., IngestSummary]
) -> None:
    chat = [{"speaker": "Ana" if i % 2 else "Ben", "text": text, "time": f"2026-05-01T10:0{i}:00Z"}
            for i, text in enumerate(["We should test the launch.", "The zeppelin banner is ready.",
                                      "Then we launch on Monday.", "I will tell the team."])]
    write("chats/launch.json", json.dumps(chat))
    indexer([write("chats/launch.json", json.dumps(chat)).parent])
    memories = messages_of(engine)
    # The zeppelin message's words are in its neighbours' windows.
    found = {r.memory.id for r in engine.recall("zeppelin banner", strategies=["lexical"], top_k=10)}
    assert memories[1].id in found and {memories[0].id, memories[2].id} & found

    engine.forget([memories[1].id])
    assert engine.recall("zeppelin banner", strategies=["lexical"], top_k=10) == []
    edges = followed_by(engine, [engine.get(m.id) for m in memories if m.id != memories[1].id])
    assert edges == {(memories[2].id, memories[3].id)}  # no edge points at the forgotten message
    again = indexer([write("chats/launch.json", json.dumps(chat)).parent])
    assert again.documents_unchanged == 1  # an unchanged file is not written again, forgotten stays forgotten
    assert memories[1].id not in {m.id for m in messages_of(engine)}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"speaker": "A"}', "not a chat transcript (expected a list of"),
        ('{"sessions": [{"date": "2026-01-01"}]}', "not a chat transcript (session 1 is neither"),
        ('[{"text": "  "}]', 'not a chat transcript (no message has a "text")'),
        ('["hello"]', "not a chat transcript (a message is str, not an object)"),
        ('[{"conversation": {"session_1": []}}, {"conversation": {}}]', "holds 2 conversations"),
    ],
)
def test_bad_shapes_are_skipped_with_a_reason(
    engine: MemoryEngine, write: Write, indexer: Callable[..., IngestSummary], content: str, reason: str
) -> None:
    path = write("chats/bad.json", content)
    summary = indexer([path])
    assert [(s.path, s.reason[: len(reason)]) for s in summary.skipped] == [("bad.json", reason)]
    assert messages_of(engine) == []


def test_a_message_that_cannot_be_stored_skips_its_file_and_changes_nothing(
    engine: MemoryEngine, write: Write, indexer: Callable[..., IngestSummary]
) -> None:
    folder, _ = index_three_shapes(write, indexer)
    before = {m.id for m in messages_of(engine)}
    write("chats/garden.json", json.dumps({"sessions": [[{"speaker": "Cleo", "text": "Hello."},
                                                          {"speaker": "Dev", "text": "Hi.", "id": "x" * 20_000}]]}))
    summary = indexer([folder])
    assert [(s.path, s.reason[:36]) for s in summary.skipped] == [
        ("chats/garden.json", "message 2 cannot be stored (a string")]
    assert (summary.documents_indexed, summary.documents_unchanged) == (0, 2)
    assert {m.id for m in messages_of(engine)} == before  # the file's old messages are still there


def test_times_in_the_formats_chats_use() -> None:
    assert parse_when("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_when("2026-03-21T08:30:00+01:00") == datetime(2026, 3, 21, 7, 30, tzinfo=UTC)
    assert parse_when(1_700_000_000) == parse_when(1_700_000_000_000) == datetime.fromtimestamp(1_700_000_000, UTC)
    assert parse_when("May 8, 2023") == datetime(2023, 5, 8, tzinfo=UTC)
    assert parse_when("someday") is None and parse_when(True) is None
    undated = read_conversation([{"speaker": "A", "text": "hi"}, {"speaker": "B", "text": "hello"}],
                                path=Path("chat.json"), display="chat.json", content_hash="x",
                                fallback=datetime(2026, 1, 1, tzinfo=UTC), fallback_source="file name")
    assert [(m.at.second, m.time_source) for m in undated.messages] == [(0, "file name"), (1, "file name")]
    with pytest.raises(NotAConversation):
        read_conversation(42, path=Path("x.json"), display="x.json", content_hash="x",
                          fallback=datetime(2026, 1, 1, tzinfo=UTC))
