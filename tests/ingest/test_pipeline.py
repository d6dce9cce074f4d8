"""Indexing through the facade (real spaCy, model, Chroma): memories, edges, times, aliases, idempotence,
bad inputs and recovery after a failure."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from engine import EdgeType, MemoryEngine, MemoryKind
from engine.clock import ManualClock
from engine.embedding import SentenceTransformerEmbedder
from engine.errors import AmbiguousEntityError, MemoryNotFoundError, StoreError
from engine.ingest import pipeline
from engine.ingest.summary import IngestSummary
from tests.conftest import START

Write = Callable[[str, str | bytes], Path]

SIGNED = """---
title: DPA signed
date: 2026-01-15
entity_id: meridian
---
# DPA signed

## Summary

On 2026-01-15, Meridian Analytics signed a Data Processing Agreement with CloudVault.
Dana Whitfield signed the DPA for Meridian Analytics.
"""
CHANGE = """---
title: Backup change
date: 2026-03-02
---
# Ops log

Meridian Analytics was not notified when CloudVault changed its backup subprocessor to NordHost on 2026-03-02.
NordHost is a hosting company in Oslo.
"""
VIOLATION = """Violation note
Date: 2026-03-20

On 2026-03-20, Meridian Analytics discovered a violation of its Data Processing Agreement with CloudVault.
The violation was caused by CloudVault's unannounced subprocessor change.
"""
ESCALATION = """---
title: Escalation
date: 2026-04-03
---
On 2026-04-03, Meridian Analytics escalated the CloudVault risk to the board risk committee.
The risk was escalated to the board because of the DPA violation.
Meridian Analytics will review the vendor again in May.
"""
CHAT = json.dumps([
    {"speaker": "Sofia Lindqvist", "text": "I paused new backups to CloudVault last night.",
     "time": "2026-03-21T08:33:00Z"},
    {"speaker": "Dana Whitfield", "text": "Good. I will write to Peter Okafor.", "time": "2026-03-21T08:35:00Z"},
])


def story(write: Write) -> Path:
    write("legal/2026-01-15-signed.md", SIGNED)
    write("legal/2026-03-02-change.md", CHANGE)
    write("legal/2026-03-20-violation.txt", VIOLATION)
    write("legal/2026-04-03-escalation.md", ESCALATION)
    write("legal/2026-03-21-triage.json", CHAT)
    write("legal/README.md", "# About these notes\n\nNot a story.\n")
    return write("legal/2026-01-15-signed.md", SIGNED).parent


def by_content(engine: MemoryEngine, fragment: str) -> str:
    found = [m for m in engine.list_memories(kind="proposition", limit=1000) if fragment in m.content]
    assert len(found) == 1, (fragment, [m.content for m in found])
    return found[0].id


@pytest.fixture(scope="module")
def indexed(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder, nlp: object
) -> tuple[MemoryEngine, IngestSummary]:
    """The small story above, indexed once for the read-only tests of this module."""
    root = tmp_path_factory.mktemp("story")

    def write(name: str, content: str | bytes) -> Path:
        path = root / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else content.decode())
        return path

    folder = story(write)
    engine = MemoryEngine(root / "data", embedder=embedder, clock=ManualClock(START))
    return engine, engine.ingest([folder])


def test_documents_and_propositions_with_their_edges(indexed: tuple[MemoryEngine, IngestSummary]) -> None:
    engine, summary = indexed
    assert (summary.documents, summary.documents_indexed, summary.skipped) == (5, 5, [])  # README passed over
    docs = engine.list_memories(kind="document", limit=100)
    props = engine.list_memories(kind="proposition", limit=1000)
    assert len(docs) == 4 and len(props) == summary.propositions_total == summary.propositions_added
    assert (summary.conversations, summary.messages_total) == (1, 2)  # the chat: one memory per message
    for p in props:
        parents = [e.target for e in engine.edges_of(p.id) if e.type == EdgeType.PROPOSITION_OF and e.source == p.id]
        assert len(parents) == 1 and engine.get(parents[0]).kind == MemoryKind.DOCUMENT
    signed = engine.get(by_content(engine, "signed a Data Processing Agreement"))
    assert signed.context["heading_path"] == ["DPA signed", "Summary"]
    assert signed.context["source"] == "legal/2026-01-15-signed.md"
    paused = [m for m in engine.list_memories(kind="episode", limit=10) if "paused new backups" in m.content]
    assert [m.content for m in paused] == ["Sofia Lindqvist: I paused new backups to CloudVault last night."]
    assert paused[0].entity_id == "sofia lindqvist" and paused[0].context["source"] == "legal/2026-03-21-triage.json"
    assert set(summary.edges) == {"proposition_of", "caused_by", "followed_by", "entity_relation"}
    assert summary.entities >= 5


def test_each_proposition_is_dated_by_its_text_else_its_document(indexed: tuple[MemoryEngine, IngestSummary]) -> None:
    engine, _ = indexed

    def when(fragment: str) -> datetime:
        return engine.get(by_content(engine, fragment)).created_at

    assert when("was not notified") == datetime(2026, 3, 2, tzinfo=UTC)  # the date in the sentence
    assert when("NordHost is a hosting company") == datetime(2026, 3, 2, tzinfo=UTC)  # frontmatter date
    assert when("Dana Whitfield signed the DPA") == datetime(2026, 1, 15, tzinfo=UTC)
    assert when("The violation was caused") == datetime(2026, 3, 20, tzinfo=UTC)  # the text file's Date: header
    assert when("will review the vendor again in May") == datetime(2026, 4, 3, tzinfo=UTC)  # a plan


def test_entities_are_normalised_and_frontmatter_overrides(indexed: tuple[MemoryEngine, IngestSummary]) -> None:
    engine, _ = indexed
    # frontmatter `entity_id: meridian` names Meridian Analytics: every proposition of that document is its
    assert engine.get(by_content(engine, "Dana Whitfield signed the DPA")).entity_id == "meridian analytics"
    # without frontmatter, the grammatical subject is the primary entity
    assert engine.get(by_content(engine, "NordHost is a hosting company")).entity_id == "nordhost"
    # a chat message's entity is its speaker, a person in the registry like any other
    (paused,) = [m for m in engine.list_memories(kind="episode", limit=10) if "paused new backups" in m.content]
    assert paused.entity_id == "sofia lindqvist" and engine.resolve_entity("Sofia") == "sofia lindqvist"
    assert engine.resolve_entity("meridian") == "meridian analytics"
    assert engine.resolve_entity("cloud") == "cloudvault"


def test_temporal_recall_by_alias_tells_the_story_in_order(indexed: tuple[MemoryEngine, IngestSummary]) -> None:
    engine, _ = indexed
    results = engine.recall("what happened with Meridian?", strategies=["temporal"], entity_id="meridian",
                            top_k=50)
    contents = [r.memory.content for r in results if r.memory.kind == MemoryKind.PROPOSITION]
    order = [next(i for i, c in enumerate(contents) if key in c) for key in
             ("signed a Data Processing Agreement", "was not notified", "discovered a violation", "escalated the")]
    assert order == sorted(order)
    assert [r.memory.created_at for r in results] == sorted(r.memory.created_at for r in results)


def test_causal_recall_walks_from_the_escalation_to_the_change(indexed: tuple[MemoryEngine, IngestSummary]) -> None:
    engine, _ = indexed
    seed = by_content(engine, "escalated the CloudVault risk")
    change = by_content(engine, "was not notified")
    results = engine.recall("why?", strategies=["causal"], seed_memory_id=seed, max_depth=3,
                            edge_types=["caused_by"], top_k=50)
    reached = {r.memory.id: r.strategy_details[0].fields for r in results}
    assert change in reached and reached[change]["depth"] <= 3


def test_caused_by_edges_point_from_effect_to_cause(indexed: tuple[MemoryEngine, IngestSummary]) -> None:
    engine, _ = indexed
    restated = by_content(engine, "The risk was escalated to the board because")
    edges = [e for e in engine.edges_of(restated) if e.type == EdgeType.CAUSED_BY and e.source == restated]
    assert len(edges) == 1
    assert "violation" in engine.get(edges[0].target).content
    assert edges[0].attrs["cue"] == "because of" and 0.5 < edges[0].confidence <= 0.9


def test_followed_by_links_an_entitys_events_in_time_order(indexed: tuple[MemoryEngine, IngestSummary]) -> None:
    engine, _ = indexed
    signed = by_content(engine, "signed a Data Processing Agreement")
    nxt = [e for e in engine.edges_of(signed) if e.type == EdgeType.FOLLOWED_BY and e.source == signed]
    assert len(nxt) == 1
    later = engine.get(nxt[0].target)
    assert later.entity_id == "meridian analytics" and later.created_at >= engine.get(signed).created_at


def test_entity_relation_keeps_the_verb(indexed: tuple[MemoryEngine, IngestSummary]) -> None:
    engine, _ = indexed
    signed = by_content(engine, "On 2026-01-15, Meridian Analytics signed")
    (edge,) = [e for e in engine.edges_of(signed) if e.type == EdgeType.ENTITY_RELATION and e.source == signed]
    assert edge.attrs["verb"] == "sign" and edge.attrs["object"] == "cloudvault"
    assert engine.get(edge.target).entity_id == "cloudvault"


def test_analogical_cues_are_read_with_the_same_extractor(indexed: tuple[MemoryEngine, IngestSummary]) -> None:
    engine, _ = indexed
    assert "chain:omit>causes>fail" in engine.analyze("The launch failed because testing was skipped.")["features"]
    reopened = MemoryEngine(engine.data_dir, embedder=engine.embedder)
    assert type(reopened.extractor).__name__ == "EpisodeExtractor"


def test_reindexing_an_unchanged_folder_changes_nothing(engine: MemoryEngine, write: Write, nlp: object) -> None:
    folder = story(write)
    engine.ingest([folder])
    before = {m.id for m in engine.list_memories(limit=1000)}
    edges_before = all_edges(engine, before)
    again = engine.ingest([folder])
    assert (again.documents_unchanged, again.documents_indexed, again.propositions_added) == (5, 0, 0)
    assert {m.id for m in engine.list_memories(limit=1000)} == before
    assert all_edges(engine, before) == edges_before


def all_edges(engine: MemoryEngine, ids: set[str]) -> set[tuple]:
    return {(e.source, e.target, e.type, e.confidence) for i in ids for e in engine.edges_of(i)}


def test_a_changed_document_keeps_unchanged_propositions_and_their_access_counts(
    engine: MemoryEngine, write: Write, nlp: object, clock: ManualClock
) -> None:
    folder = story(write)
    engine.ingest([folder])
    kept = by_content(engine, "NordHost is a hosting company")
    changed = by_content(engine, "was not notified")
    engine.recall("x", strategies=["temporal"], entity_id="nordhost", top_k=5)
    assert engine.get(kept).access_count == 1
    write("legal/2026-03-02-change.md", CHANGE.replace("in Oslo", "in Oslo and Reykjavik")
          + "\nThe nightly backup job completed successfully.\n")
    clock.advance(days=1)
    summary = engine.ingest([folder])
    assert (summary.documents_indexed, summary.documents_unchanged) == (1, 4)
    assert (summary.propositions_kept, summary.propositions_added, summary.propositions_removed) == (1, 2, 1)
    assert engine.get(changed).access_count == 0  # kept: same id (it was never recalled)
    assert kept not in engine.get_many([kept])  # its sentence changed: replaced
    assert by_content(engine, "in Oslo and Reykjavik") != kept
    by_content(engine, "The nightly backup job completed")


def test_access_counts_survive_a_change_elsewhere_in_the_document(
    engine: MemoryEngine, write: Write, nlp: object
) -> None:
    folder = story(write)
    engine.ingest([folder])
    notified = by_content(engine, "was not notified")
    engine.recall("x", strategies=["temporal"], entity_id="meridian", top_k=100)
    count = engine.get(notified).access_count
    assert count == 1
    write("legal/2026-03-02-change.md", CHANGE.replace("NordHost is a hosting company in Oslo.", ""))
    summary = engine.ingest([folder])
    assert summary.propositions_removed == 1
    assert engine.get(notified).access_count == count  # same id, same count
    assert not [m for m in engine.list_memories(limit=1000) if "hosting company" in m.content]


def test_a_removed_file_is_forgotten(engine: MemoryEngine, write: Write, nlp: object) -> None:
    folder = story(write)
    engine.ingest([folder])
    (folder / "2026-03-21-triage.json").unlink()
    summary = engine.ingest([folder])
    assert summary.documents_removed == 1 and summary.documents == 4
    assert not [m for m in engine.list_memories(limit=1000) if "paused new backups" in m.content]
    assert engine.stats()["vector_index"] == engine.stats()["memories"]


def test_user_edges_survive_reindexing(engine: MemoryEngine, write: Write, nlp: object) -> None:
    folder = story(write)
    engine.ingest([folder])
    a, b = by_content(engine, "Dana Whitfield signed"), by_content(engine, "NordHost is a hosting company")
    engine.add_edge(a, b, "related_to", 0.7)
    write("legal/2026-04-03-escalation.md", ESCALATION + "\nEleanor Voss opened the item.\n")
    engine.ingest([folder])
    assert any(e.type == EdgeType.RELATED_TO and e.target == b for e in engine.edges_of(a))


def test_forget_and_list_take_an_alias(engine: MemoryEngine, write: Write, nlp: object) -> None:
    engine.ingest([story(write)])
    assert {m.entity_id for m in engine.list_memories(entity_id="sofia", limit=10)} == {"sofia lindqvist"}
    with pytest.raises(MemoryNotFoundError):  # a delete takes an alias only when told to
        engine.forget(entity_id="sofia")
    forgotten = engine.forget(entity_id="sofia", prefix=True)
    assert forgotten and not engine.list_memories(entity_id="sofia lindqvist", limit=10)


def test_bad_files_are_skipped_with_a_reason(
    engine: MemoryEngine, write: Write, nlp: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine import config

    monkeypatch.setattr(config, "INGEST_MAX_FILE_BYTES", 4096)
    write("ok.md", "# Fine\n\nThe vendor renewed the contract.\n")
    write("empty.txt", "")
    write("binary.md", b"\x00\x01\x02\x03")
    write("huge.txt", "The vendor renewed the contract. " * 200)
    write("broken.json", "[{]")
    write("latin.txt", "caf\xe9".encode("latin-1"))
    summary = engine.ingest([write("ok.md", "# Fine\n\nThe vendor renewed the contract.\n").parent])
    assert summary.documents_indexed == 1 and summary.propositions_added == 1
    reasons = {s.path.split("/")[-1]: s.reason.split(" (")[0] for s in summary.skipped}
    assert reasons == {"empty.txt": "empty file", "binary.md": "binary file", "huge.txt": "too large",
                       "broken.json": "invalid JSON", "latin.txt": "not UTF-8 text"}


def test_a_failure_midway_keeps_what_was_indexed_and_a_rerun_completes_it(
    engine: MemoryEngine, write: Write, nlp: object, monkeypatch: pytest.MonkeyPatch
) -> None:

    folder = story(write)
    monkeypatch.setattr(pipeline, "INGEST_DOCUMENT_BATCH", 1)
    real_write, calls = pipeline._write, []

    def failing(*args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk full")
        real_write(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "_write", failing)
    with pytest.raises(StoreError, match="disk full"):  # an OS error is a one-line StoreError
        engine.ingest([folder])
    assert len(engine.list_memories(kind="document", limit=10)) == 2  # two batches committed, intact
    monkeypatch.setattr(pipeline, "_write", real_write)
    summary = engine.ingest([folder])
    assert (summary.documents_unchanged, summary.documents_indexed) == (3, 2)  # the chat was written first
    assert len(engine.list_memories(kind="document", limit=10)) == 4
    contents = [m.content for m in engine.list_memories(kind="proposition", limit=1000)]
    assert len(contents) == len(set(contents)) == summary.propositions_total
    assert summary.edges["caused_by"] >= 2  # the edge pass ran over everything
    assert engine.stats()["vector_index"] == engine.stats()["memories"]


def test_a_missing_path_is_reported(engine: MemoryEngine, tmp_path: Path) -> None:
    summary = engine.ingest([tmp_path / "nope"])
    assert [s.reason for s in summary.skipped] == ["no such file or folder"]
    assert summary.documents == 0


def test_files_without_dates_use_their_modification_time(engine: MemoryEngine, write: Write, nlp: object) -> None:
    path = write("notes.txt", "Notes\n\nThe vendor renewed the contract.\n")
    os.utime(path, (1767225600, 1767225600))
    engine.ingest([path])
    (memory,) = engine.list_memories(kind="proposition", limit=10)
    assert memory.created_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert memory.context["time_source"] == "document"


def test_an_ambiguous_entity_name_is_a_clear_error(engine: MemoryEngine, write: Write, nlp: object) -> None:
    write("legal/2026-05-01-hire.md", "# Hire\n\nDana Scott joined the legal team of Meridian Analytics.\n")
    engine.ingest([story(write)])
    with pytest.raises(AmbiguousEntityError) as err:
        engine.recall("x", strategies=["temporal"], entity_id="dana", top_k=5)
    assert "'dana scott' (person)" in str(err.value) and "'dana whitfield' (person)" in str(err.value)
    assert engine.resolve_entity("dana w") == "dana whitfield"


def test_a_document_the_extractor_fails_on_is_skipped_not_fatal(
    engine: MemoryEngine, write: Write, nlp: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.ingest.analysis import OfflineExtractor

    real = OfflineExtractor.analyse

    def fragile(self: OfflineExtractor, documents: list, known: object = None) -> list:  # type: ignore[type-arg]
        if any("BOOM" in b.text for d in documents for b in d.blocks):
            raise RuntimeError("parser exploded")
        return real(self, documents, known)  # type: ignore[arg-type]

    monkeypatch.setattr(OfflineExtractor, "analyse", fragile)
    write("a.md", "# A\n\nThe vendor renewed the contract.\n")
    summary = engine.ingest([write("b.md", "# B\n\nBOOM went the parser.\n").parent])
    assert summary.documents_indexed == 1
    assert [(s.path, s.reason) for s in summary.skipped] == [("docs/b.md", "could not be analysed (parser exploded)")]


def test_recall_structures_catch_up_once_per_ingest_and_match_a_reopened_store(
    data_dir: Path, embedder: SentenceTransformerEmbedder, clock: ManualClock, write: Write, nlp: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The candidate table and posting lists follow an ingest once, at its end (not after every batch's commit),
    and what recall then reads is what a reopened store builds from the record store."""
    from engine import build_request
    from engine.index.derived import DerivedIndexes

    monkeypatch.setattr(pipeline, "INGEST_DOCUMENT_BATCH", 1)  # a commit per document
    follow = DerivedIndexes._follow
    caught_up: list[int] = []

    def counted(self: DerivedIndexes) -> None:
        caught_up.append(self._deferring)
        follow(self)

    monkeypatch.setattr(DerivedIndexes, "_follow", counted)
    folder = story(write)
    request = build_request(cue="CloudVault backup subprocessor", top_k=10)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        engine.ingest([folder])
        assert caught_up.count(0) == 1, caught_up  # several commits, one catch-up
        after = [(r.memory.id, round(r.score, 9)) for r in engine.retrieve(request)]
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as reopened:
        assert [(r.memory.id, round(r.score, 9)) for r in reopened.retrieve(request)] == after
    assert after


def test_an_ingest_commits_each_batch_marked_synced_in_one_transaction(
    engine: MemoryEngine, write: Write, nlp: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vectors go in before each batch's transaction (as `remember` does), so no second transaction marks
    them synced afterwards, and every stored memory is in the vector index."""
    from engine.store.sqlite.vector_sync import VectorSync

    marked: list[int] = []
    mark = VectorSync.mark_synced

    def counted(self: VectorSync, ids: list[str]) -> None:
        marked.append(len(ids))
        mark(self, ids)

    monkeypatch.setattr(VectorSync, "mark_synced", counted)
    engine.ingest([story(write)])
    assert not marked
    stats = engine.stats()
    assert stats["memories"] > 0 and stats["vector_index"] == stats["memories"]


def _chat(speakers: tuple[str, str], day: str, n: int) -> str:
    """A chat of `n` messages of varied lengths (several runs of the model, padded differently)."""
    words = ["the", "backup", "job", "to", "CloudVault", "was", "paused", "after", "the", "subprocessor",
             "change", "and", "we", "will", "review", "it"]
    return json.dumps([
        {"speaker": speakers[i % 2], "text": " ".join(words[: 3 + (i * 7) % len(words)]) + f" (note {i}).",
         "time": f"{day}T08:{10 + i:02d}:00Z"} for i in range(n)
    ])


def test_messages_embedded_while_documents_are_analysed_get_the_same_vectors(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, nlp: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With documents to analyse, the messages are embedded on the worker during the first batch's analysis,
    one model call per conversation as when they are written alone: the stored vectors are the same bits."""
    import threading

    from engine.writer import Writer

    chats = {"a.json": _chat(("Sofia Lindqvist", "Dana Whitfield"), "2026-03-21", 13),
             "b.json": _chat(("Peter Okafor", "Dana Whitfield"), "2026-03-22", 9)}
    alone, mixed = tmp_path / "alone", tmp_path / "mixed"
    for folder in (alone, mixed):
        folder.mkdir()
        for name, text in chats.items():
            (folder / name).write_text(text)
    (mixed / "signed.md").write_text(SIGNED)
    (mixed / "change.md").write_text(CHANGE)
    threads: dict[str, str] = {}
    embed = Writer.embed

    def spy(self: Writer, texts: list[str], progress: object = None) -> object:
        threads.update((t, threading.current_thread().name) for t in texts)
        return embed(self, texts, progress)  # type: ignore[arg-type]

    monkeypatch.setattr(Writer, "embed", spy)
    vectors = []
    for folder in (alone, mixed):
        with MemoryEngine(tmp_path / f"data-{folder.name}", embedder=embedder, clock=ManualClock(START)) as eng:
            summary = eng.ingest([folder])
            assert summary.messages_added == 22
            messages = eng.list_memories(kind=MemoryKind.EPISODE, limit=100)
            stored = eng._store.embeddings([m.id for m in messages])
            vectors.append({m.content: stored[m.id] for m in messages})
        if folder is alone:
            assert {threads[t] for t in vectors[0]} == {threading.main_thread().name}
    assert {threads[t] for t in vectors[1]} != {threading.main_thread().name}  # embedded on the worker
    assert vectors[0].keys() == vectors[1].keys()
    for text, vector in vectors[0].items():
        assert np.array_equal(vector, vectors[1][text]), text


def test_a_changed_chat_reindexed_beside_documents_is_planned_once_and_gets_the_same_vectors(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, nlp: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-indexing a changed chat with documents to analyse: each conversation's plan (the ledger's kept and
    dropped messages, the dropped ones' reusable vectors) is read once, for the worker's embedding and the
    writing alike, and the stored vectors are the bits of the same re-index with no document beside it."""
    from engine.ingest import conversation_writer

    before = {"a.json": _chat(("Sofia Lindqvist", "Dana Whitfield"), "2026-03-21", 13),
              "b.json": _chat(("Peter Okafor", "Dana Whitfield"), "2026-03-22", 9)}
    after = dict(before)
    changed = json.loads(before["a.json"])
    changed[4]["text"] = "the backup job was moved to another region (note 4)."  # messages 5.. are new
    changed.append({"speaker": "Dana Whitfield", "text": "the job to CloudVault (note 1).",  # a reused text
                    "time": "2026-03-21T09:00:00Z"})
    after["a.json"] = json.dumps(changed)
    plans: list[str] = []
    plan = conversation_writer.plan_conversation

    def counted(writer: object, ledger: object, conversation: conversation_writer.Conversation) -> object:
        plans.append(Path(conversation.display).name)
        return plan(writer, ledger, conversation)  # type: ignore[arg-type]

    monkeypatch.setattr(conversation_writer, "plan_conversation", counted)
    vectors = []
    for mixed in (False, True):
        folder = tmp_path / f"chats-{mixed}"
        folder.mkdir()
        with MemoryEngine(tmp_path / f"data-{mixed}", embedder=embedder, clock=ManualClock(START)) as eng:
            for round_, chats in enumerate((before, after)):
                for name, text in chats.items():
                    (folder / name).write_text(text)
                if mixed:
                    (folder / "doc.md").write_text(SIGNED if round_ == 0 else CHANGE)  # a document to analyse
                plans.clear()
                summary = eng.ingest([folder])
                assert summary.messages_added == (22 if round_ == 0 else 10)
                if round_ == 1:
                    assert sorted(plans) == ["a.json"], plans  # b.json is unchanged; a.json planned once
            messages = eng.list_memories(kind=MemoryKind.EPISODE, limit=100)
            stored = eng._store.embeddings([m.id for m in messages])
            vectors.append({m.content: stored[m.id] for m in messages})
    assert vectors[0].keys() == vectors[1].keys()
    for text, vector in vectors[0].items():
        assert np.array_equal(vector, vectors[1][text]), text
