"""A remember upserts its vectors just before its one transaction, which stores them marked synced
(`DerivedIndexes.commit_with_vectors`); a failure or crash in between leaves nothing the store does not hold."""

from __future__ import annotations

import gc
import logging
from pathlib import Path

import numpy as np
import pytest

from engine import MemoryEngine, NewMemory
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.errors import StoreError
from engine.index.vector import VectorIndex
from engine.store.records import RecordStore


def _notes(prefix: str, n: int) -> list[NewMemory]:
    return [NewMemory(f"{prefix} note {i} about the cooling fan", entity_id="ops") for i in range(n)]


def test_a_batch_is_stored_synced_in_one_transaction(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_second_transaction(self: RecordStore, ids: object) -> None:
        raise AssertionError("the records were to be stored marked synced")

    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:
        eng.remember("opens the vector index")
        monkeypatch.setattr(RecordStore, "mark_synced", no_second_transaction)
        stored = eng.remember_many(_notes("batch", 8))
        assert eng._store.count_unsynced() == 0
        assert eng.stats()["vector_index"] == eng.stats()["memories"] == 9
        found = eng.recall("batch note 3 about the cooling fan", top_k=1, strategies=["similarity"])
        assert found[0].memory.id == stored[3].id
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:  # nothing left to reconcile
        assert eng.stats()["vector_index"] == 9


def test_vectors_stay_out_when_the_commit_fails(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:
        kept = eng.remember("kept before the failure")

        def failing_insert(self: RecordStore, *args: object, **kwargs: object) -> None:
            raise StoreError("simulated failure of the transaction")

        monkeypatch.setattr(RecordStore, "insert", failing_insert)
        with pytest.raises(StoreError):
            eng.remember_many(_notes("lost", 5))
        monkeypatch.undo()
        assert eng.stats()["memories"] == eng.stats()["vector_index"] == 1
        assert [n.id for n in eng._indexes.vectors.query(embedder.encode(["lost note 2"])[0], 5)] == [kept.id]


def test_vectors_of_a_batch_that_never_committed_are_dropped_on_open(
    data_dir: Path,
    embedder: Embedder,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A crash after the upsert and before the commit (simulated: the transaction fails and so does taking
    the vectors out again) leaves vectors the store never got; the next open drops just those."""
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:
        eng.remember_many(_notes("kept", 3))
        monkeypatch.setattr(RecordStore, "insert", lambda *a, **k: (_ for _ in ()).throw(StoreError("crash")))
        monkeypatch.setattr(VectorIndex, "delete", lambda self, ids: (_ for _ in ()).throw(RuntimeError("crash")))
        with pytest.raises(StoreError):
            eng.remember_many(_notes("never committed", 4))
        monkeypatch.undo()
        assert eng.stats()["vector_index"] == 7  # the strays are in Chroma
    with caplog.at_level(logging.WARNING), MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:
        assert eng.stats() == {**eng.stats(), "memories": 3, "vector_index": 3}
        assert "out of step" not in caplog.text  # the strays dropped, not the whole index rebuilt
        hits = eng.recall("never committed note 1 about the cooling fan", top_k=5, strategies=["similarity"])
        assert {h.memory.content.split(" note")[0] for h in hits} == {"kept"}


def test_built_indexes_are_left_out_of_full_collections(
    data_dir: Path, embedder: Embedder, clock: ManualClock
) -> None:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:
        gc.unfreeze()
        before = gc.get_freeze_count()
        stored = eng.remember_many(_notes("frozen", 20))  # the write path builds the candidate table
        table = eng._indexes.candidates()
        assert table is not None and len(table) == 20
        assert gc.get_freeze_count() > before  # the table's objects moved to the permanent generation
        assert np.isfinite(table.embeddings([m.id for m in stored[:3]])).all()
