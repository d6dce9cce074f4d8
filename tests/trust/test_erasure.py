"""Forget erases: afterwards no file under the data dir holds the memory's text or its embedding's bytes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from engine import MemoryEngine
from engine.embedding import SentenceTransformerEmbedder
from engine.index.vector import stored_forms
from engine.store.records import RecordStore
from engine.uploads import remove_unreferenced_uploads, uploads_dir
from tests.trust.crash_worker import HashEmbedder  # deterministic vectors, only to pass the flush threshold fast

MARKER = "Quokka-7731 wired the payroll overflow to account 88-1142 via zyzzogetonx"
TERM = b"zyzzogetonx"  # a word only the marker has: its term must leave the text index too


def files_holding(root: Path, needles: Sequence[bytes]) -> list[str]:
    """Every file under `root` (recursively) that contains any needle."""
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)
    )


def needles_of(engine: MemoryEngine, memory_id: str, text: str) -> list[bytes]:
    """The text, the embedding's raw bytes (float32 little-endian) and the form hnswlib normalises it to."""
    return [text.encode("utf-8"), TERM, *stored_forms(engine.embed([text])[0])]


def test_forget_leaves_no_text_and_no_vector_bytes(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    data = tmp_path / "data"
    with MemoryEngine(data, embedder=embedder) as engine:
        engine.remember_many([{"content": f"Ordinary note {i} about the quarterly plan."} for i in range(5)])
        secret = engine.remember(MARKER, entity_id="quokka-7731", context={"account": "88-1142"})
        engine.recall("payroll overflow")  # the vector is used, the access recorded
        needles = needles_of(engine, secret.id, MARKER)
        for needle in needles[:3]:  # text, index term, raw vector: each is on disk before the forget
            assert files_holding(data, [needle]), needle[:20]
        engine.forget(secret.id)
        assert files_holding(data, needles) == []  # while the engine is still open
        assert engine.stats()["vector_index"] == engine.stats()["memories"] == 5
    assert files_holding(data, needles) == []


def test_forget_rewrites_a_flushed_hnsw_file(tmp_path: Path) -> None:
    """Past Chroma's flush threshold the vector sits in the HNSW segment file: forget rebuilds it."""
    data = tmp_path / "data"
    fake = HashEmbedder()
    with MemoryEngine(data, embedder=fake) as engine:
        secret = engine.remember(MARKER)
        engine.remember_many([{"content": f"Filler memory number {i}."} for i in range(1200)])
        needles = needles_of(engine, secret.id, MARKER)
        segment_files = [p for p in (data / "chroma").rglob("*.bin")]
        assert any(needles[3] in p.read_bytes() for p in segment_files), "expected a flushed HNSW file"
        started = time.perf_counter()
        engine.forget(secret.id)
        elapsed = time.perf_counter() - started
        assert files_holding(data, needles) == []
        hits = engine.recall("Filler memory number 7.", top_k=1)
        assert hits[0].memory.content == "Filler memory number 7."  # the rebuilt index still finds things
        assert engine.stats()["vector_index"] == 1200
        # A second forget of a fresh (unflushed) memory needs no rebuild: only the queue purge.
        fresh = engine.remember(MARKER + " again")
        fresh_needles = needles_of(engine, fresh.id, MARKER + " again")
        started = time.perf_counter()
        engine.forget(fresh.id)
        cheap = time.perf_counter() - started
        assert files_holding(data, fresh_needles) == []
    print(f"forget with rebuild of 1,200 vectors: {elapsed:.2f} s; without: {cheap:.2f} s")


def test_an_interrupted_erasure_finishes_on_reopen(tmp_path: Path) -> None:
    data = tmp_path / "data"
    fake = HashEmbedder()
    with MemoryEngine(data, embedder=fake) as engine:
        secret = engine.remember(MARKER)
        engine.remember_many([{"content": f"Filler memory number {i}."} for i in range(1100)])
        needles = needles_of(engine, secret.id, MARKER)
    # What a crash right after the delete committed leaves: the record gone, the erase mark set, Chroma untouched.
    store = RecordStore(data / "records.sqlite3")
    store.delete([secret.id], erase=True)
    assert store.erase_pending()
    store.close()
    with MemoryEngine(data, embedder=fake) as engine:
        assert engine.stats()["vector_index"] == 1100  # opening the vector index reconciles and erases
    assert files_holding(data, needles) == []
    store = RecordStore(data / "records.sqlite3")
    assert not store.erase_pending()
    store.close()


def test_uploads_without_memories_are_deleted(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    folder = uploads_dir(data)
    folder.mkdir()
    (folder / "old-notes.md").write_text(MARKER)
    store = RecordStore(data / "records.sqlite3")
    try:
        assert [p.name for p in remove_unreferenced_uploads(data, store)] == ["old-notes.md"]
    finally:
        store.close()
    assert files_holding(data, [MARKER.encode()]) == []
