"""The SQLite connection under the record store: one file in WAL mode, its schema, transactions and version.

Every table class of the store (memories, edges, vector sync, structures, full text) is a mixin over this
one connection and its lock, so the tables of one store commit together in one transaction.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from engine.store.sqlite import changes, fulltext
from engine.store.sqlite.checkpoints import FALLBACK_PAGES, WalCheckpointer

SCHEMA_VERSION = 1
# Each memory's structure version, indexed: a process's first analogical recall asks which structures another
# extractor version wrote (engine/structures.py), and without the index that read every row's structure (2.5 s at a
# million memories with the file in the page cache; more from disk) in every process, to find none.
STRUCTURE_VERSION = "json_extract(structure, '$.version')"  # a query uses the index only when written the same
STRUCTURE_VERSIONS = f"CREATE INDEX IF NOT EXISTS memories_structure_version ON memories ({STRUCTURE_VERSION})"
# The memories whose structure keeps a plot (the plot index's build reads only these: at 100,000 memories 0.08 s,
# against 0.4 s for a scan that looks for the key in every structure's text and 0.9 s for one that parses them all).
PLOTTED = "json_type(structure, '$.plot') IS NOT NULL"  # a query uses the index only when written the same
PLOTTED_INDEX = f"CREATE INDEX IF NOT EXISTS memories_plots ON memories (id) WHERE {PLOTTED}"
# Set in the transaction that forgets memories, cleared once the vector index's files hold none of them.
ERASE_PENDING = "vector_erase_pending"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    importance REAL NOT NULL,
    context TEXT NOT NULL,
    entity_id TEXT,
    kind TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_accessed_at INTEGER,
    access_count INTEGER NOT NULL DEFAULT 0,
    structure TEXT NOT NULL DEFAULT '{}',
    embedding BLOB NOT NULL,
    vector_synced INTEGER NOT NULL DEFAULT 0
);
-- Opening a store reads the timeline (entity, time, id of every memory) and the revision ids: both from small
-- indexes, not from the table, whose rows carry the embedding and structure (about 7 KiB a memory).
-- memories_timeline replaces memories_entity_time (same order, plus the id).
DROP INDEX IF EXISTS memories_entity_time;
CREATE INDEX IF NOT EXISTS memories_timeline ON memories (entity_id, created_at, id);
CREATE INDEX IF NOT EXISTS memories_revisions ON memories (id) WHERE kind = 'revision';
CREATE INDEX IF NOT EXISTS memories_unsynced ON memories (vector_synced) WHERE vector_synced = 0;
-- What ranking reads of a candidate (score_inputs, created_at_of), covered by an index:
-- a few dozen entries per page instead of one table row (embedding included) per page.
CREATE UNIQUE INDEX IF NOT EXISTS memories_scores ON memories (id, importance, created_at, access_count);
CREATE TABLE IF NOT EXISTS edges (
    source TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    target TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    confidence REAL NOT NULL,
    attrs TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (source, target, type)
);
CREATE INDEX IF NOT EXISTS edges_target ON edges (target);
CREATE TABLE IF NOT EXISTS pending_vector_deletes (id TEXT PRIMARY KEY);
-- Memories whose relational structure is not extracted yet: marked in the write's
-- own transaction, cleared in the one that stores the structure. Readers of structures extract these first.
CREATE TABLE IF NOT EXISTS pending_structures (id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE);
-- Memories whose contradiction check (engine/contradictions/follow.py) has not run yet: marked in the write's own
-- transaction, cleared in the one that stores the check's candidates; rowid order is write order. Readers of
-- contradiction candidates check these first.
CREATE TABLE IF NOT EXISTS pending_checks (id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE);
-- The ingestion ledger (engine/store/ledger.py): rows go away with their memory.
CREATE TABLE IF NOT EXISTS ingested (
    memory_id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    role TEXT NOT NULL,
    position INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    analysis TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS ingested_source ON ingested (source, role);
-- The entity registry (engine/store/entities.py).
CREATE TABLE IF NOT EXISTS entities (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    mentions INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS entity_aliases (
    alias TEXT NOT NULL,
    entity_id TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (alias, entity_id)
);
CREATE INDEX IF NOT EXISTS entity_aliases_entity ON entity_aliases (entity_id);
-- Replies kept under idempotency keys (engine/store/replies.py).
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    operation TEXT NOT NULL,
    reply TEXT NOT NULL,
    stored_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS replies_age ON replies (stored_at);
-- Contradiction candidates waiting for an agent's verdict (engine/contradictions/review.py): a = older memory.
CREATE TABLE IF NOT EXISTS pending_contradictions (
    pending_id TEXT PRIMARY KEY,
    memory_a TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    memory_b TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    verdict TEXT NOT NULL,
    reason TEXT NOT NULL,
    confidence REAL NOT NULL,
    similarity REAL NOT NULL,
    detail TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (memory_a, memory_b)
);
CREATE INDEX IF NOT EXISTS pending_contradictions_b ON pending_contradictions (memory_b);
-- What is left of a memory forgotten by criteria or by the auto-forget sweep (engine/store/tombstones.py):
-- no text, the SHA-256 of its content. Not tied to memories: it outlives them.
CREATE TABLE IF NOT EXISTS tombstones (
    memory_id TEXT NOT NULL,
    forgotten_at INTEGER NOT NULL,
    content_sha256 TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tombstones_time ON tombstones (forgotten_at);
-- Clusters handed out by reflect_prepare (JSON lists of memory ids), until expires_at (unix seconds).
CREATE TABLE IF NOT EXISTS reflect_sessions (
    session_id TEXT PRIMARY KEY,
    clusters TEXT NOT NULL,
    expires_at REAL NOT NULL
);
"""


class SqliteConnection:
    """One SQLite connection shared by the engine's threads (every use holds the lock), with the schema."""

    shared = False  # one owner per data dir (engine/lock.py)

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self.read_only = path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
        self._generation = 0  # commits of this connection that may change what recall reads (see `version`)
        # Structures extracted for a read-only store's pending memories: kept here, since the file cannot be written.
        self._filled: dict[str, str] = {}
        self._checkpointer: WalCheckpointer | None = None  # (a read-only store writes no log)
        if self.read_only:
            self._conn = open_read_only(path)
            fulltext.prepare(self._conn)
            self._scores = scores_hint(self._conn)
            self._logged = changes.kept(self._conn.cursor())
            return
        # One connection shared by the engine's threads; every use holds the lock.
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        fulltext.prepare(self._conn)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")  # acknowledged means on disk
        self._conn.execute(f"PRAGMA wal_autocheckpoint={FALLBACK_PAGES}")  # the checkpointer's thread copies first
        self._checkpointer = WalCheckpointer(path)
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("PRAGMA cache_size=-65536")
        # Deleted content is overwritten with zeros, whatever this SQLite's compile-time default is.
        self._conn.execute("PRAGMA secure_delete=ON")
        self._conn.executescript(SCHEMA)
        with suppress(sqlite3.OperationalError):  # (no JSON functions: `stale_structures` and `plots` scan)
            self._conn.execute(STRUCTURE_VERSIONS)
            self._conn.execute(PLOTTED_INDEX)
        self._conn.executescript(changes.SCHEMA)
        self._logged = True
        self._conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        self._conn.executescript(fulltext.SCHEMA)
        self._scores = scores_hint(self._conn)
        if self.get_meta(fulltext.META_KEY) != fulltext.VERSION:
            # A store written before the lexical index existed (or by another version of it): fill it once.
            with self.transaction() as cur:
                fulltext.rebuild(cur)
                cur.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (fulltext.META_KEY, fulltext.VERSION)
                )

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
        with self._lock:
            self._conn.close()

    def listen(self, callback: Callable[[], None]) -> None:
        """Nothing to listen to: no other engine writes this store."""
        return None

    @contextmanager
    def transaction(self, *, counted: bool = True, durable: bool = True) -> Iterator[sqlite3.Cursor]:
        """One write transaction. `counted=False`: a write that changes nothing a recall's candidate table
        reads (access counts), so `version` stays the same and in-memory caches stay valid.
        `durable=False`: the commit does not wait for its own fsync (synchronous=NORMAL for this transaction:
        safe from a crash of the process, and on disk with the next durable commit or checkpoint; a power cut
        before either can lose it). Only for bookkeeping whose loss costs nothing: a recall's access counts."""
        with self._lock:
            if not durable:
                self._conn.execute("PRAGMA synchronous=NORMAL")
            cur = self._conn.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE")
                try:
                    yield cur
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
                else:
                    cur.execute("COMMIT")
                finally:
                    if counted:
                        self._generation += 1
            finally:
                if not durable:
                    self._conn.execute("PRAGMA synchronous=FULL")
        if self._checkpointer is not None:
            self._checkpointer.committed()

    def version(self) -> tuple[int, int]:
        """Changes whenever the store may have changed: (this connection's counted commits, SQLite's
        `data_version`, which moves when another connection, in this process or another, commits). An
        in-memory cache built at one version is valid while the version is the same."""
        with self._lock:
            return self._generation, int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _query_ids(self, select: str, ids: Sequence[str], column: str = "id") -> list[Any]:
        """`select` (a statement without WHERE) restricted to rows whose `column` is among `ids`, in chunks."""
        rows: list[Any] = []
        for chunk in chunks(list(ids), 500):
            marks = ",".join("?" * len(chunk))
            rows.extend(self._query(f"{select} WHERE {column} IN ({marks})", chunk))
        return rows

    def change_seq(self) -> int:
        """The number of the store's latest change (0 for none; see engine/store/sqlite/changes.py)."""
        with self._lock:
            return changes.latest(self._conn.cursor()) if self._logged else 0

    def changes_since(self, seq: int) -> tuple[int, list[str]] | None:
        """(the latest change number, the ids of the memories changed after change `seq`), read at once;
        None for a store that keeps no change log (read-only and older than it): rebuild what you hold."""
        with self._lock:
            return changes.since(self._conn.cursor(), seq) if self._logged else None

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Rows of a read-only query: for tests and diagnostics of this backend (not part of `Storage`)."""
        return self._query(sql, params)

    # --- meta ------------------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as cur:
            cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database and truncate it: deleted text must not linger in the
        WAL. (A reader in another process can keep it from completing; the next checkpoint finishes it.)"""
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def open_read_only(path: Path) -> sqlite3.Connection:
    """A store this process may not write (a read-only folder or file): opened for reading only. A WAL
    database needs its -shm file or a writable folder; without either it is opened as immutable (no one
    can be writing a file in a folder nobody may write)."""
    uri = path.resolve().as_uri()
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
        conn.execute("SELECT count(*) FROM meta").fetchone()
        return conn
    except sqlite3.Error:
        return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, check_same_thread=False,
                               isolation_level=None)


def scores_hint(conn: sqlite3.Connection) -> str:
    """`INDEXED BY memories_scores` where the store has that index (a read-only store written before it
    existed has not). SQLite's planner would otherwise pick the primary key's index and read each row."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'memories_scores'").fetchone()
    return "INDEXED BY memories_scores" if found else ""


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
