"""BM25 with configurable saturation over the FTS5 tables, checked against a hand computation, and the
scores following writes and forgets (real SQLite, real record store; no model needed)."""

from __future__ import annotations

import math
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from engine import config
from engine.models import Memory, MemoryKind
from engine.store import windows
from engine.store.records import RecordStore
from engine.store.rows import MemoryRecord
from engine.store.sqlite import fulltext

DOCS = {
    "a": "the dog runs and the dog barks",
    "b": "a cat sleeps",
    "c": "dogs running in the park with a cat near",
    "d": "nothing to see here",
}


@pytest.fixture()
def cur() -> sqlite3.Cursor:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    fulltext.prepare(conn)
    conn.executescript(fulltext.SCHEMA)
    cursor = conn.cursor()
    for rowid, (memory_id, text) in enumerate(DOCS.items(), start=1):
        cursor.execute("INSERT INTO fulltext_rows (rowid, id) VALUES (?, ?)", (rowid, memory_id))
        cursor.execute("INSERT INTO memory_text (rowid, body) VALUES (?, ?)", (rowid, text))
    return cursor


def _by_hand(query_stems: list[str], k1: float, b: float) -> dict[str, float]:
    """Okapi BM25 with Lucene's idf over DOCS, tokens compared by their Porter stem (dog/dogs, run/running)."""
    stem = {"dogs": "dog", "running": "run", "runs": "run"}
    docs = {i: [stem.get(w, w) for w in text.split()] for i, text in DOCS.items()}
    rows, mean = len(docs), sum(len(d) for d in docs.values()) / len(docs)
    out = {}
    for i, tokens in docs.items():
        total = 0.0
        for term in query_stems:
            tf = tokens.count(term)
            n = sum(1 for d in docs.values() if term in d)
            if tf:
                idf = math.log(1 + (rows - n + 0.5) / (n + 0.5))
                total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(tokens) / mean))
        if total:
            out[i] = total
    return out


@pytest.mark.parametrize(("k1", "b"), [(0.7, 0.0), (1.2, 0.75), (2.0, 1.0)])
def test_bm25_equals_a_hand_computation(cur: sqlite3.Cursor, k1: float, b: float) -> None:
    got = dict(fulltext.bm25(cur, "memory_text", ["Dogs", "cat", "running"], 10, k1, b))
    want = _by_hand(["dog", "cat", "run"], k1, b)
    assert got.keys() == want.keys()
    for memory_id, score in want.items():
        assert got[memory_id] == pytest.approx(score, rel=1e-9)


def test_saturation_and_length_change_the_order(cur: sqlite3.Cursor) -> None:
    # "a" says dog twice in 7 words, "c" once in 9: without a length penalty and with early saturation the
    # repeated term counts for less than a second distinct term ("c" also has cat).
    flat = [i for i, _ in fulltext.bm25(cur, "memory_text", ["dog", "cat"], 10, 0.7, 0.0)]
    assert flat[0] == "c"
    assert fulltext.bm25(cur, "memory_text", ["dog"], 10, 1.2, 1.0)[0][0] == "a"


def test_cue_words_become_the_index_terms_and_the_totals_come_from_fts5(cur: sqlite3.Cursor) -> None:
    assert fulltext.stems(cur, ["Running", "dogs", "running", "cats"]) == ["run", "dog", "cat"]
    rows, mean = fulltext.totals(cur, "memory_text")
    assert rows == 4 and mean == pytest.approx(sum(len(t.split()) for t in DOCS.values()) / 4)
    assert fulltext.bm25(cur, "memory_text", ["zebra"], 10, 0.7, 0.0) == []
    assert fulltext.bm25(cur, "memory_text", [], 10, 0.7, 0.0) == []


def test_stems_are_remembered_per_word_and_handed_out_as_copies(cur: sqlite3.Cursor) -> None:
    first = fulltext.stems(cur, ["Walking", "parks"])
    first.append("mutated")
    statements: list[str] = []
    cur.connection.set_trace_callback(statements.append)
    try:
        assert fulltext.stems(cur, ["Walking", "parks"]) == ["walk", "park"]
        assert not any("cue_terms (rowid" in s for s in statements)  # the second call did not tokenize again
        assert fulltext.stems(cur, ["parks", "Benches", "walking"]) == ["park", "bench", "walk"]
    finally:
        cur.connection.set_trace_callback(None)
    inserted = [s for s in statements if "cue_terms (rowid" in s]
    assert len(inserted) == 2 and all("park" not in s for s in inserted)  # only the two new words tokenized


def test_the_scratch_tables_live_in_memory_not_in_a_temp_file(cur: sqlite3.Cursor) -> None:
    """Every recall writes the cue's words (and its marked results) into scratch tables: an in-memory database,
    so they never cost a temp file's writes nor leave memory text outside the data dir."""
    assert fulltext.stems(cur, ["gardening"]) == ["garden"]
    files = {name: file for _, name, file in cur.execute("PRAGMA database_list")}
    assert files["scratch"] == ""  # in memory
    assert cur.execute("SELECT count(*) FROM scratch.sqlite_master WHERE name = 'cue_terms'").fetchone()[0] == 1
    assert cur.execute("SELECT count(*) FROM temp.sqlite_master WHERE name = 'cue_terms'").fetchone()[0] == 0


def test_varints_read_as_sqlite_writes_them() -> None:
    assert fulltext._varints(bytes([0x05, 0x81, 0x00, 0xFF, 0x7F])) == [5, 128, 16383]


def _record(memory_id: str, text: str) -> MemoryRecord:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    memory = Memory(memory_id, text, 0.5, {}, None, MemoryKind.EPISODE, at, at, None, 0)
    return MemoryRecord(memory, np.zeros(4, dtype=np.float32), {})


def test_scores_follow_writes_and_forgets_in_the_record_store(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "records.db")
    store.insert([_record(i, text) for i, text in DOCS.items()], [])
    before = dict(store.lexical_search("memory_text", ["dog", "cat"], 10))
    assert set(before) == {"a", "b", "c"}
    store.delete(["c"])
    after = dict(store.lexical_search("memory_text", ["dog", "cat"], 10))
    assert set(after) == {"a", "b"}
    # Fewer rows, fewer holders of each term: the idf (and so every score) moves with the forget.
    k1, b = config.LEXICAL_BM25_K1, config.LEXICAL_BM25_B
    rows, mean = 3, (7 + 3 + 4) / 3  # "b" (3 words) is now the only row with "cat"
    want = math.log(1 + (rows - 1 + 0.5) / 1.5) * (k1 + 1) / (1 + k1 * (1 - b + b * 3 / mean))
    assert after["b"] == pytest.approx(want, rel=1e-9) and after["b"] > before["b"]


def test_a_conversation_messages_window_carries_the_day_it_was_said(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "records.db")
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    chat = Memory("m", "Ann: we finally went hiking", 0.5, {"conversation": "c", "session": 1}, None,
                  MemoryKind.EPISODE, said, said, None, 0)
    note = Memory("n", "hiking boots need new laces", 0.5, {}, None, MemoryKind.EPISODE, said, said, None, 0)
    store.insert([MemoryRecord(m, np.zeros(4, dtype=np.float32), {}) for m in (chat, note)], [])
    assert windows.date_line(1_683_554_160_000_000, {"conversation": "c"}) == "8 May 2023"
    # The month and year match the chat's window only (a note's creation time is not when it happened),
    # and never its own text.
    assert [i for i, _ in store.lexical_search("window_text", ["hiking", "2023"], 10)][0] == "m"
    assert {i for i, _ in store.lexical_search("window_text", ["2023"], 10)} == {"m"}
    assert store.lexical_search("memory_text", ["2023"], 10) == []
