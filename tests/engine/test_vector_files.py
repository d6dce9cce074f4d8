"""Erasure inside Chroma's queue must not break Chroma's own bookkeeping of what it has consumed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from engine import MemoryEngine, NewMemory, config
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.index.vector import VectorIndex
from engine.store import vector_files
from tests.engine.concurrency import failures_beside


def _queue(path: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(path / vector_files.CHROMA_SQLITE) as conn:
        return list(conn.execute("SELECT seq_id, id FROM embeddings_queue ORDER BY seq_id"))


def test_purging_the_newest_rows_does_not_hand_their_numbers_to_later_writes(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vectors = {f"m{i}": rng.normal(size=384).astype(np.float32) for i in range(6)}
    index = VectorIndex.open_embedded(tmp_path)
    index.upsert(["m0", "m1", "m2", "m3"], np.stack([vectors[k] for k in ("m0", "m1", "m2", "m3")]))
    index.query(vectors["m0"], 4)  # the segment consumes the queue
    index.delete(["m2", "m3"])
    newest_before = max(seq for seq, _ in _queue(tmp_path))

    live = {"m0", "m1", "m4", "m5"}
    assert vector_files.purge_queue(tmp_path, lambda ids: set(ids) & live) == 2
    assert all(i not in {"m2", "m3"} or seq == newest_before for seq, i in _queue(tmp_path))

    index.upsert(["m4", "m5"], np.stack([vectors["m4"], vectors["m5"]]))
    assert min(seq for seq, i in _queue(tmp_path) if i in {"m4", "m5"}) > newest_before
    del index
    reopened = VectorIndex.open_embedded(tmp_path)
    assert reopened.count() == 4
    assert {n.id for n in reopened.query(vectors["m4"], 4)} == live


def test_memories_written_after_a_forget_stay_findable(
    data_dir: Path, embedder: Embedder, clock: ManualClock
) -> None:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        old = engine.remember_many([NewMemory(f"Globex shipped release {i} of the billing service.") for i in range(4)])
        engine.recall("Globex release", strategies=["similarity"], top_k=4)
        engine.forget(memory_ids=[m.id for m in old])
        kept = engine.remember("Umbrella renewed its lab lease.")
        other = engine.remember("Umbrella's lab failed its safety audit.")
        found = {r.memory.id for r in engine.recall("Umbrella lab lease", strategies=["similarity"], top_k=2)}
        assert found == {kept.id, other.id}
    # Chroma's own count, before the engine's reconcile on open could paper over a gap by rebuilding.
    raw = VectorIndex.open_embedded(data_dir / config.VECTOR_DIRNAME)
    assert raw.count() == 2
    assert {n.id for n in raw.query(embedder.encode(["Umbrella lab lease"])[0], 2)} == {kept.id, other.id}


@pytest.mark.slow
def test_erasing_forgets_beside_recalls_in_other_threads_leave_chromas_file_sound(
    data_dir: Path, embedder: Embedder, clock: ManualClock
) -> None:
    """An erasing forget rewrites Chroma's SQLite file with Python's own SQLite while recalls in other threads
    query Chroma through its copy of the library; file locks do not separate the two copies in one process,
    so without the index's own lock around the rewrite recalls failed ("database disk image is malformed",
    "Failed to get segments") within a few forgets."""
    texts = [f"Initech audit note {i}: the {w} ledger was reconciled." for i, w in enumerate("abcdefghijklmnop")]
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        engine.remember_many([NewMemory(t) for t in texts])
        cue = embedder.encode(["Initech ledger audit"])[0]

        def write() -> None:
            for n in range(40):
                drafts = [NewMemory(f"Hooli draft {n}.{k} of the merger memo.") for k in range(3)]
                written = engine.remember_many(drafts)
                engine.forget(memory_ids=[written[0].id, written[1].id])

        failures = failures_beside(lambda n: engine.raw_vector_query(cue, 10), write)
        assert not failures, failures
        stats = engine.stats()
        assert stats["memories"] == stats["vector_index"] == len(texts) + 40
    with sqlite3.connect(data_dir / config.VECTOR_DIRNAME / vector_files.CHROMA_SQLITE) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
