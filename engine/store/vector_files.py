"""Erasure inside Chroma's own files: its write-ahead queue (a table in `chroma.sqlite3`) and segment folders.

Chroma's delete only marks a vector deleted. Its queue keeps the original upsert (with the vector's bytes)
until the next flush, and rows it purges stay readable in free pages: Chroma's SQLite connection does not
set `secure_delete`. `purge_queue` removes the queue rows of ids that no longer exist (the newest row is
emptied instead, so its number is never reused), with secure_delete on, then VACUUMs, which rewrites the
file from live content only (cheap: the queue holds at most one flush interval of vectors).
`orphan_segment_dirs` finds the folders of segments Chroma no longer lists (left on disk when a collection
is dropped and rebuilt).

Both open `chroma.sqlite3` with Python's SQLite while Chroma has it open with its own copy of the library in
the same process, where file locks do not separate the two: callers hold `VectorIndex.exclusive()`, so no
Chroma call of this process runs meanwhile.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

CHROMA_SQLITE = "chroma.sqlite3"


def _connect(chroma_dir: Path) -> sqlite3.Connection | None:
    path = chroma_dir / CHROMA_SQLITE
    if not path.exists():
        return None
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA secure_delete=ON")
    return conn


def purge_queue(chroma_dir: Path, existing: Callable[[Iterable[str]], set[str]]) -> int:
    """Delete queued operations of ids `existing` no longer knows, zeroing their bytes; VACUUM. Returns the
    number of ids purged."""
    conn = _connect(chroma_dir)
    if conn is None:
        return 0
    try:
        queued = {r[0] for r in conn.execute("SELECT DISTINCT id FROM embeddings_queue")}
        gone = sorted(queued - existing(queued))
        if gone:
            conn.execute("BEGIN IMMEDIATE")
            # `seq_id` is a plain INTEGER PRIMARY KEY: SQLite numbers a new row max(seq_id) + 1, so deleting the
            # newest rows would hand their numbers to the next writes, which Chroma (whose segments remember
            # the highest seq_id they consumed) then ignores. The newest row stays, emptied of its vector.
            newest, newest_id = conn.execute(
                "SELECT seq_id, id FROM embeddings_queue ORDER BY seq_id DESC LIMIT 1"
            ).fetchone()
            conn.executemany(
                "DELETE FROM embeddings_queue WHERE id = ? AND seq_id <> ?", [(i, newest) for i in gone]
            )
            if newest_id in gone:
                conn.execute("UPDATE embeddings_queue SET vector = NULL, metadata = NULL WHERE seq_id = ?", (newest,))
            conn.execute("COMMIT")
        conn.execute("VACUUM")  # free pages of rows Chroma purged itself still hold vectors
        return len(gone)
    except sqlite3.OperationalError:  # a Chroma version without this table: its deletion is all we have
        return 0
    finally:
        conn.close()


def orphan_segment_dirs(chroma_dir: Path) -> list[Path]:
    """Segment folders under `chroma_dir` that Chroma's catalogue no longer lists."""
    conn = _connect(chroma_dir)
    if conn is None:
        return []
    try:
        live = {r[0] for r in conn.execute("SELECT id FROM segments")}
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()
    return [p for p in chroma_dir.iterdir() if p.is_dir() and _looks_like_uuid(p.name) and p.name not in live]


def _looks_like_uuid(name: str) -> bool:
    parts = name.split("-")
    return [len(p) for p in parts] == [8, 4, 4, 4, 12] and all(c in "0123456789abcdef-" for c in name)
