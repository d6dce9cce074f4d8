"""kill -9 during writes and during indexing: no acknowledged write is lost, the store reopens consistent
(its vector index matches the record store), and the dead owner's lock does not outlive it.

Children come from a fork server that imported the engine and loaded spaCy once, so each trial costs a fork,
not an interpreter start and a model load; the parent never opens Chroma before the last trial.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine import MemoryEngine
from engine.store.records import RecordStore
from tests.trust.crash_worker import (
    HashEmbedder,
    index_until_killed,
    remember_deferred_until_killed,
    write_until_killed,
)

pytestmark = pytest.mark.slow

WRITE_TRIALS = 16
INDEX_TRIALS = 8
DEFERRED_TRIALS = 6
DOCUMENTS = 48  # six batches of INGEST_DOCUMENT_BATCH


@pytest.fixture(scope="module")
def forkserver() -> Iterator[multiprocessing.context.BaseContext]:
    context = multiprocessing.get_context("forkserver")
    # spaCy too: every write parses its text; loading the model in each child cost 13 s of a 14 s trial
    context.set_forkserver_preload(["engine.facade", "chromadb", "tests.trust.crash_worker", "tests.trust.preload_nlp"])
    yield context


def _wait_for(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


def _acknowledged(path: Path) -> list[str]:
    if not path.exists():
        return []
    text = path.read_text()
    return [line for line in text.split("\n")[: text.count("\n")] if line]  # complete lines only


def _kill_after_acks(
    forkserver: multiprocessing.context.BaseContext, target: Callable[..., None], data: Path, ack: Path,
    trial: int, wanted: int, jitter: float,
) -> list[str]:
    """Run `target` in a child until it has acknowledged `wanted` writes (or died), let it go on for
    `jitter` seconds so the kill lands anywhere inside a later write (not a wait for a condition), kill -9
    it, and return what it acknowledged."""
    child = forkserver.Process(target=target, args=(str(data), str(ack), trial))
    child.start()
    _wait_for(lambda: len(_acknowledged(ack)) >= wanted or not child.is_alive())
    time.sleep(jitter)
    os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
    child.join()
    assert child.exitcode == -signal.SIGKILL
    return _acknowledged(ack)


def test_kill_9_during_writes_loses_no_acknowledged_write(
    tmp_path: Path, forkserver: multiprocessing.context.BaseContext
) -> None:
    data = tmp_path / "data"
    rng = random.Random(14)
    acknowledged: set[str] = set()
    for trial in range(WRITE_TRIALS):
        wanted = rng.randint(1, 20)
        ids = _kill_after_acks(forkserver, write_until_killed, data, tmp_path / f"ack-{trial}.txt", trial,
                               wanted, rng.random() * 0.05)
        assert len(ids) >= wanted
        acknowledged.update(ids)
        store = RecordStore(data / "records.sqlite3")
        try:
            assert store.existing(sorted(acknowledged)) == acknowledged, f"trial {trial} lost a write"
        finally:
            store.close()
    with MemoryEngine(data, embedder=HashEmbedder()) as engine:  # the dead owners' locks are gone
        stats = engine.stats()
        assert stats["memories"] == stats["vector_index"] >= len(acknowledged)
        assert engine.recall("trial 0 memory 0", top_k=1)[0].memory.content == "trial 0 memory 0"
    print(f"{WRITE_TRIALS} kill -9 trials during writes: {len(acknowledged)} acknowledged, 0 lost")


def test_kill_9_with_structures_pending_loses_none_and_the_next_analogical_recall_is_complete(
    tmp_path: Path, forkserver: multiprocessing.context.BaseContext
) -> None:
    """Deferred structures with the idle worker extracting meanwhile: after each
    kill every acknowledged memory is stored, and the next open's analogical recall first extracts every
    structure left pending, each equal to what the write path would have extracted."""
    from engine.analogy.text import EpisodeExtractor

    data = tmp_path / "data"
    rng = random.Random(23)
    acknowledged: set[str] = set()
    for trial in range(DEFERRED_TRIALS):
        acknowledged.update(_kill_after_acks(forkserver, remember_deferred_until_killed, data,
                                             tmp_path / f"deferred-{trial}.txt", trial, rng.randint(8, 60),
                                             rng.random() * 0.1))
    with MemoryEngine(data, embedder=HashEmbedder()) as engine:
        pending = engine.pending_structures()
        hits = engine.recall("The mechanic repaired the engine because it broke.", strategies=["analogical"],
                             analogical_alpha=0.0, top_k=5)
        assert hits and engine.pending_structures() == 0
        memories = {m.id: m.content for m in engine.list_memories(limit=100_000)}
        assert acknowledged <= memories.keys()
        ids = sorted(memories)
        stored = [engine.structure_of(i) for i in ids]
    assert stored == EpisodeExtractor().extract([memories[i] for i in ids])
    print(f"{DEFERRED_TRIALS} kill -9 trials with deferred structures: {len(acknowledged)} acknowledged, "
          f"0 lost, {pending} structures pending at reopen, all extracted by the first analogical recall")


def _documents_and_propositions(data: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Per source: the proposition count its document memory declares, and the propositions stored and linked
    to it (a document committed without its proposition_of edges counts as half-written)."""
    store = RecordStore(data / "records.sqlite3")
    try:
        assert store.read("PRAGMA integrity_check")[0][0] == "ok"
        source = "json_extract(context, '$.source')"
        declared = dict(store.read(
            f"SELECT {source}, json_extract(context, '$.propositions') FROM memories WHERE kind = 'document'"))
        stored = dict(store.read(f"SELECT {source}, count(*) FROM memories WHERE kind = 'proposition' GROUP BY 1"))
        linked = dict(store.read(
            "SELECT json_extract(d.context, '$.source'), count(*) FROM edges e JOIN memories d ON d.id = e.target"
            " WHERE e.type = 'proposition_of' AND d.kind = 'document' GROUP BY 1"))
        assert linked == stored, "a committed document is missing its proposition_of edges"
        return declared, stored
    finally:
        store.close()


def _committed_documents(records: Path) -> int:
    """Documents committed so far, read the way another process would see them (read-only, WAL)."""
    if not records.exists():
        return 0
    connection = sqlite3.connect(f"file:{records}?mode=ro", uri=True, timeout=5)
    try:
        return int(connection.execute("SELECT count(*) FROM memories WHERE kind = 'document'").fetchone()[0])
    except sqlite3.OperationalError:  # the tables are not there yet
        return 0
    finally:
        connection.close()


def test_kill_9_during_indexing_keeps_every_finished_document_whole(
    tmp_path: Path, forkserver: multiprocessing.context.BaseContext
) -> None:
    """Each trial waits until the run has committed at least one more batch, then kills it at a random
    moment inside the next: every document committed before the kill is still there, with all its
    propositions (none half-written), and the final rerun analyses only what is left."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(DOCUMENTS):
        (folder / f"2026-01-{i % 28 + 1:02d}-note-{i}.md").write_text(
            f"# Note {i}\n\nThe vendor Acme{i} renewed contract {i} because the price fell.\n"
            f"Dana Whitfield approved renewal {i} the next day.\n"
        )
    data = tmp_path / "data"
    rng = random.Random(41)
    kept = 0
    kills = 0
    after_each: list[int] = []
    for trial in range(INDEX_TRIALS):
        ack = tmp_path / f"index-{trial}.txt"
        before = _committed_documents(data / "records.sqlite3")
        child = forkserver.Process(target=index_until_killed, args=(str(data), str(folder), str(ack)))
        child.start()
        _wait_for(lambda child=child, before=before: _committed_documents(data / "records.sqlite3") > before  # type: ignore[misc]
                  or not child.is_alive())
        time.sleep(rng.uniform(0.0, 0.1))  # not a wait for a condition: the kill lands at a random moment
        with contextlib.suppress(ProcessLookupError):  # it may have finished: the forkserver reaps its children
            os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
        child.join()
        finished = "finished" in ack.read_text()
        kills += not finished
        declared, stored = _documents_and_propositions(data)
        assert len(declared) >= max(kept, before + 1) or finished, f"trial {trial} lost finished documents"
        assert {s: n for s, n in stored.items() if n} == {s: n for s, n in declared.items() if n}, \
            f"trial {trial} left a document half-written"
        kept = len(declared)
        after_each.append(kept)
        if finished:
            break
    assert kills >= 1, "the runs finished before they could be interrupted"
    with MemoryEngine(data, embedder=HashEmbedder()) as engine:
        summary = engine.ingest([folder])  # a rerun completes what the killed runs left
        stats = engine.stats()
        assert summary.documents == DOCUMENTS
        assert summary.documents_unchanged >= kept  # what the killed runs finished is not analysed again
        assert stats["memories"] == stats["vector_index"]
        documents = engine.list_memories(kind="document", limit=100)
        assert len(documents) == DOCUMENTS
    declared, stored = _documents_and_propositions(data)
    assert stored == declared and len(declared) == DOCUMENTS
    print(f"{kills} kill -9 trials during indexing: documents kept whole after each {after_each} of {DOCUMENTS}, "
          f"rerun completed (skipping the {summary.documents_unchanged} already done)")
