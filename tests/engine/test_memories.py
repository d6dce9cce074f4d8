"""remember / get / revise / forget / reopen on the real engine, and every bad input rejected unwritten."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine import EdgeType, MemoryEngine, MemoryKind, NewMemory
from engine.api import StatsRequest
from engine.clock import ManualClock
from engine.embedding import Embedder, SentenceTransformerEmbedder
from engine.errors import (
    InvalidContentError,
    InvalidContextError,
    InvalidEdgeError,
    InvalidImportanceError,
    MemoryNotFoundError,
    ValidationError,
)


def test_remember_returns_a_durable_memory_with_defaults(engine: MemoryEngine, clock: ManualClock) -> None:
    m = engine.remember("The quarterly review moved to Friday.", entity_id="team")
    assert m.importance == 0.5 and m.kind == MemoryKind.EPISODE and m.access_count == 0
    assert m.created_at == clock.now() and m.last_accessed_at is None
    assert engine.get(m.id) == m
    assert engine.stats() == {"memories": 1, "vector_index": 1, "edges": 0, "entities": 1, "structures_pending": 1}


def test_counts_without_the_vector_index_do_not_open_it(data_dir: Path, embedder: Embedder) -> None:
    with MemoryEngine(data_dir, embedder=embedder) as first:
        first.remember("The quarterly review moved to Friday.", entity_id="team")
    with MemoryEngine(data_dir, embedder=embedder) as reopened:
        counts = reopened.stats(vector_index=False)
        assert counts == {"memories": 1, "vector_index": None, "edges": 0, "entities": 1, "structures_pending": 1}
        assert not reopened._indexes.vectors_open  # noqa: SLF001 - what the option is for
        assert reopened.stats()["vector_index"] == 1
    with pytest.raises(ValidationError, match="vector_index must be true or false"):
        StatsRequest.parse({"vector_index": "no"})


def test_created_at_can_be_given_for_history(engine: MemoryEngine) -> None:
    m = engine.remember("Founded the company.", created_at="2019-05-04T10:00:00Z")
    assert m.created_at.isoformat() == "2019-05-04T10:00:00+00:00"


def test_batch_is_committed_together_and_ids_sort_by_creation(engine: MemoryEngine) -> None:
    batch = engine.remember_many([NewMemory(f"note {i}", entity_id="e") for i in range(20)])
    assert [m.id for m in batch] == sorted(m.id for m in batch)
    assert engine.stats()["memories"] == 20


BAD_INPUTS = [
    ({"content": ""}, InvalidContentError),
    ({"content": "   "}, InvalidContentError),
    ({"content": "x" * (64 * 1024 + 1)}, InvalidContentError),
    ({"content": "ok", "importance": 1.5}, InvalidImportanceError),
    ({"content": "ok", "importance": -0.1}, InvalidImportanceError),
    ({"content": "ok", "importance": math.nan}, InvalidImportanceError),
    ({"content": "ok", "context": "[1, 2]"}, InvalidContextError),
    ({"content": "ok", "context": "{not json"}, InvalidContextError),
    ({"content": "ok", "context": {"blob": "y" * 17000}}, InvalidContextError),
    ({"content": "ok", "edges": [("01ARZ3NDEKTSV4RRFFQ69G5FAV", "caused_by")]}, InvalidEdgeError),
    ({"content": "ok", "kind": "dream"}, ValidationError),
    ({"content": "ok", "created_at": "last tuesday"}, ValidationError),
]


@pytest.mark.parametrize(("kwargs", "error"), BAD_INPUTS)
def test_bad_input_is_rejected_and_nothing_is_written(
    engine: MemoryEngine, kwargs: dict, error: type[Exception]
) -> None:
    keep = engine.remember("already here")
    content = kwargs.pop("content")
    with pytest.raises(error):
        engine.remember(content, **kwargs)
    assert engine.stats()["memories"] == 1
    assert engine.get(keep.id) == keep


def test_unknown_edge_type_is_rejected(engine: MemoryEngine) -> None:
    target = engine.remember("target")
    with pytest.raises(InvalidEdgeError, match="unknown edge type"):
        engine.remember("source", edges=[(target.id, "because_of")])
    with pytest.raises(InvalidEdgeError, match="confidence"):
        engine.remember("source", edges=[(target.id, "caused_by", 1.5)])
    assert engine.stats()["memories"] == 1


def test_one_bad_item_rejects_the_whole_batch(engine: MemoryEngine) -> None:
    with pytest.raises(InvalidImportanceError):
        engine.remember_many([NewMemory("fine"), NewMemory("bad", importance=7)])
    assert engine.stats()["memories"] == 0


def test_revise_keeps_the_id_and_links_the_old_state(engine: MemoryEngine, clock: ManualClock) -> None:
    m = engine.remember("The launch is on May 3.", entity_id="launch", importance=0.4)
    clock.advance(hours=2)
    revised = engine.revise(m.id, content="The launch moved to May 10.", importance=0.8)
    assert revised.id == m.id and revised.content == "The launch moved to May 10."
    assert revised.updated_at > m.updated_at and revised.created_at == m.created_at
    edges = engine.edges_of(m.id)
    assert [e.type for e in edges] == [EdgeType.REVISED_FROM]
    old = engine.get(edges[0].target)
    assert old.kind == MemoryKind.REVISION and old.content == "The launch is on May 3." and old.importance == 0.4
    # The revision is history: recall finds the current state only.
    found = engine.recall("when is the launch", top_k=5)
    assert [r.memory.id for r in found] == [m.id]
    assert found[0].memory.content == "The launch moved to May 10."


def test_revise_rejects_unknown_ids_and_empty_changes(engine: MemoryEngine) -> None:
    m = engine.remember("x")
    with pytest.raises(MemoryNotFoundError):
        engine.revise("01ARZ3NDEKTSV4RRFFQ69G5FAV", content="y")
    with pytest.raises(ValidationError):
        engine.revise(m.id)
    with pytest.raises(InvalidContentError):
        engine.revise(m.id, content="")
    assert engine.get(m.id).content == "x"


def test_forget_removes_from_every_index(engine: MemoryEngine) -> None:
    a = engine.remember("The server room flooded.", entity_id="ops")
    b = engine.remember(
        "Backups were lost because the server room flooded.", entity_id="ops", edges=[(a.id, "caused_by")]
    )
    keep = engine.remember("The new office opened.", entity_id="ops")
    assert engine.forget([a.id]) == [a.id]
    with pytest.raises(MemoryNotFoundError):
        engine.get(a.id)
    assert engine.stats() == {"memories": 2, "vector_index": 2, "edges": 0, "entities": 1, "structures_pending": 2}
    assert a.id not in {r.memory.id for r in engine.recall("server room flooded", top_k=10)}
    assert [r.memory.id for r in engine.recall(strategies=["temporal"], entity_id="ops")] == [b.id, keep.id]
    assert [r.memory.id for r in engine.recall(strategies=["causal"], seed_memory_id=b.id)] == [b.id]


def test_forget_by_entity_takes_revisions_too(engine: MemoryEngine) -> None:
    m = engine.remember("Alice likes tea.", entity_id="alice")
    engine.revise(m.id, content="Alice likes coffee.")
    other = engine.remember("Bob likes tea.", entity_id="bob")
    forgotten = engine.forget(entity_id="alice")
    assert len(forgotten) == 2
    assert engine.stats()["memories"] == 1
    assert engine.get(other.id) == other


def test_forget_unknown_id_is_an_error_and_forgets_nothing(engine: MemoryEngine) -> None:
    m = engine.remember("stay")
    with pytest.raises(MemoryNotFoundError):
        engine.forget([m.id, "01ARZ3NDEKTSV4RRFFQ69G5FAV"])
    assert engine.get(m.id) == m


def test_reopen_after_close_restores_everything(
    data_dir: Path, embedder: SentenceTransformerEmbedder, clock: ManualClock
) -> None:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:
        a = eng.remember("Ship the beta.", entity_id="beta")
        b = eng.remember(
            "The beta slipped because QA found a crash.", entity_id="beta", edges=[(a.id, "caused_by", 0.8)]
        )
        eng.recall("beta", top_k=1)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:
        assert eng.stats() == {"memories": 2, "vector_index": 2, "edges": 1, "entities": 1, "structures_pending": 2}
        assert eng.get(b.id).content == b.content
        assert sum(eng.get(i).access_count for i in (a.id, b.id)) == 1
        walk = eng.recall(strategies=["causal"], seed_memory_id=b.id)
        assert [r.memory.id for r in walk] == [b.id, a.id]
        assert [r.memory.id for r in eng.recall(strategies=["temporal"], entity_id="beta")] == [a.id, b.id]


def test_vector_index_is_rebuilt_from_the_record_store_when_lost(
    data_dir: Path, embedder: SentenceTransformerEmbedder, clock: ManualClock
) -> None:
    import shutil

    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:
        ids = [m.id for m in eng.remember_many([NewMemory(f"fact number {i}") for i in range(12)])]
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
    shutil.rmtree(data_dir / "chroma")
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:
        assert eng.stats()["vector_index"] == 12
        assert eng.recall("fact number 3", top_k=1)[0].memory.id == ids[3]
