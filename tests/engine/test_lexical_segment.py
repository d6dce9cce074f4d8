"""The lexical segment: BM25's posting lists as arrays in the data dir, reopened without a rebuild, merged
with the changes since, and rebuilt from the record store when missing, damaged or another store's."""

from __future__ import annotations

import logging
import mmap
import shutil
from pathlib import Path

import numpy as np
import pytest

from engine import MemoryEngine, config
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.index import lexical_segment, postings
from engine.index.postings import LexicalPostings
from engine.store.lexical import TABLES
from engine.store.sqlite import fulltext

TOPICS = ["webhook retry", "invoice export", "contract pricing", "launch night", "partner legal"]
CUES = [["webhook"], ["invoice", "pricing"], ["launch", "legal", "night"], ["zebra"], ["retry", "partner"]]
K1, B = config.LEXICAL_BM25_K1, config.LEXICAL_BM25_B


def _fill(engine: MemoryEngine, count: int, start: int = 0) -> list[str]:
    """`count` memories in one batch, some linked into windows (conversations of three turns)."""
    items = [{"content": f"{TOPICS[n % 5]} note {n} of {TOPICS[(n * 3) % 5]}", "entity_id": f"e{n % 3}",
              "context": {"conversation": f"c{n // 3}", "session": 1}} for n in range(start, start + count)]
    return [m.id for m in engine.remember_many(items)]


def _same_as_the_store(engine: MemoryEngine) -> None:
    """The engine's BM25 equals SQLite's own (`fulltext.bm25`) and a rebuild in memory, for every cue."""
    store = engine._store  # noqa: SLF001 - the postings under test against the store's own search
    held = engine._indexes.lexical_postings()  # noqa: SLF001
    assert held is not None
    fresh = LexicalPostings(store)
    for table in TABLES:
        for words in CUES:
            got = held.search(table, words, 20, K1, B)
            assert got == fresh.search(table, words, 20, K1, B)
            sql = store.lexical_search(table, words, 20)
            assert [i for i, _ in got] == [i for i, _ in sql]
            assert np.allclose([s for _, s in got], [s for _, s in sql], rtol=1e-9, atol=0)


def _segment_dir(data_dir: Path) -> Path:
    folder = data_dir / lexical_segment.DIRNAME
    return folder / (folder / "CURRENT").read_text()


def _mapped(array: np.ndarray) -> bool:
    """Whether the array's memory is a map of a file (not a copy in this process's heap)."""
    base = array
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    return base is not None


def _reopen(data_dir: Path, embedder: Embedder, clock: ManualClock) -> MemoryEngine:
    return MemoryEngine(data_dir, embedder=embedder, clock=clock)


def _dumps(engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the whole-index reads (rebuilds) of the engine's store from now on."""
    store = engine._store  # noqa: SLF001
    calls: list[int] = []
    original = store.lexical_dump
    monkeypatch.setattr(store, "lexical_dump", lambda: calls.append(1) or original())
    return calls


def test_a_reopened_store_maps_its_segment_instead_of_rebuilding_it(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _reopen(data_dir, embedder, clock)
    _fill(engine, 30)
    engine.recall("webhook")
    engine.close()
    engine = _reopen(data_dir, embedder, clock)
    try:
        dumps = _dumps(engine, monkeypatch)
        _fill(engine, 4, start=30)  # changes since the segment, held beside it
        assert dumps == []
        _same_as_the_store(engine)
        held = engine._indexes.lexical_postings()._segment  # noqa: SLF001
        assert _mapped(held.tables["memory_text"].rows)
    finally:
        engine.close()


def test_changes_are_merged_into_a_new_segment(
    engine: MemoryEngine, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings, "MERGE_MIN", 5)
    ids = _fill(engine, 12)
    first = _segment_dir(data_dir)
    engine.revise(ids[0], content="webhook zebra revised")
    engine.forget(memory_ids=[ids[1], ids[2]])
    engine.add_edge(ids[3], ids[6], "followed_by")
    _fill(engine, 8, start=12)  # past MERGE_MIN: merged and saved
    assert _segment_dir(data_dir) != first and not first.exists()
    assert engine._indexes.lexical_postings()._ids == {}  # noqa: SLF001 - nothing held beside it
    _same_as_the_store(engine)


@pytest.mark.parametrize("damage", ["flip", "truncate", "delete", "pointer", "description"])
def test_a_damaged_segment_is_rebuilt_from_the_record_store(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture, damage: str,
) -> None:
    engine = _reopen(data_dir, embedder, clock)
    _fill(engine, 20)
    engine.recall("webhook")
    engine.close()
    folder = _segment_dir(data_dir)
    rows = folder / "window_text.rows.npy"
    if damage == "flip":
        data = bytearray(rows.read_bytes())
        data[-3] ^= 0xFF
        rows.write_bytes(bytes(data))
    elif damage == "truncate":
        rows.write_bytes(rows.read_bytes()[:-8])
    elif damage == "delete":
        (folder / "memory_text.terms.blob.npy").unlink()
    elif damage == "pointer":
        (data_dir / lexical_segment.DIRNAME / "CURRENT").write_text("seg-gone")
    else:
        (folder / "segment.json").write_text("{not json")
    engine = _reopen(data_dir, embedder, clock)
    try:
        dumps = _dumps(engine, monkeypatch)
        with caplog.at_level(logging.WARNING):
            engine.recall("webhook")
        assert dumps == [1]
        _same_as_the_store(engine)
        assert "rebuilding it" in caplog.text
        assert lexical_segment.LexicalSegment.load(data_dir / lexical_segment.DIRNAME, engine._store.get_meta(  # noqa: SLF001
            postings.STORE_KEY) or "", engine._store.change_seq()) is not None  # noqa: SLF001 - saved again
    finally:
        engine.close()


def test_another_stores_segment_is_not_used(
    tmp_path: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, start in ((a, 0), (b, 100)):
        engine = _reopen(folder, embedder, clock)
        _fill(engine, 10 if folder == a else 25, start=start)
        engine.recall("webhook")
        engine.close()
    shutil.rmtree(b / lexical_segment.DIRNAME)
    shutil.copytree(a / lexical_segment.DIRNAME, b / lexical_segment.DIRNAME)  # a's segment, b's records
    engine = _reopen(b, embedder, clock)
    try:
        dumps = _dumps(engine, monkeypatch)
        engine.recall("webhook")
        assert dumps == [1]
        _same_as_the_store(engine)
    finally:
        engine.close()


def test_a_segment_behind_by_another_process_is_caught_up(
    data_dir: Path, embedder: Embedder, clock: ManualClock
) -> None:
    """Writes made while no engine held the segment (here: a second engine) are read from the change log."""
    engine = _reopen(data_dir, embedder, clock)
    _fill(engine, 10)
    engine.recall("webhook")
    segment = _segment_dir(data_dir)
    other = (data_dir.parent / "other")
    engine.close()
    shutil.copytree(data_dir, other)
    engine = _reopen(other, embedder, clock)
    _fill(engine, 6, start=10)
    engine.forget(memory_ids=[engine.list_memories(limit=1)[0].id])
    engine.close()
    shutil.rmtree(other / lexical_segment.DIRNAME)
    shutil.copytree(data_dir / lexical_segment.DIRNAME, other / lexical_segment.DIRNAME)  # the older segment
    assert (other / lexical_segment.DIRNAME / segment.name).exists()
    engine = _reopen(other, embedder, clock)
    try:
        _same_as_the_store(engine)
    finally:
        engine.close()


def test_forgetting_leaves_no_trace_of_the_memory_in_the_segment_files(engine: MemoryEngine, data_dir: Path) -> None:
    kept = engine.remember("the webhook retry failed", entity_id="e1")
    gone = engine.remember("quixotic zeppelin manifest", entity_id="e1")
    engine.recall("webhook")
    engine.forget(memory_ids=[gone.id])
    files = [p for p in (data_dir / lexical_segment.DIRNAME).rglob("*") if p.is_file()]
    assert files
    content = b"".join(p.read_bytes() for p in files)
    assert gone.id.encode() not in content and b"zeppelin" not in content
    assert kept.id.encode() in content
    assert fulltext.TABLES == TABLES
