"""The record store: one SQLite file in WAL mode, the source of truth for memories, edges and counters.

Every index (Chroma, timeline, graph) is rebuilt or reconciled from here. Embeddings are stored with the
memory so the vector index can be rebuilt without the model. Writes that must reach Chroma are marked
(`vector_synced = 0`, `pending_vector_deletes`) in the same transaction as the write itself, so a crash
between the two stores is repaired on the next open (a remember whose vectors reached Chroma just before
its transaction stores them marked synced: `Indexes.commit_with_vectors`).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from engine import config
from engine.models import Edge, EdgeType, Memory, MemoryKind
from engine.store import fulltext

SCHEMA_VERSION = 1
# Set in the transaction that forgets memories, cleared once the vector index's files hold none of them.
ERASE_PENDING = "vector_erase_pending"
# `fusion_rows`' episode key of a memory whose context names no episode (SQLite's JSON array of nulls).
NO_EPISODE = "[" + ",".join("null" for _ in config.EPISODE_KEYS) + "]"
# The SQL expression of a memory's episode key (fusion_rows, candidate_rows).
_EPISODE_KEY = "json_extract(context, " + ", ".join(f"'$.{k}'" for k in config.EPISODE_KEYS) + ")"

_SCHEMA = """
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
-- Memories whose relational structure is not extracted yet (config.DEFER_STRUCTURES): marked in the write's
-- own transaction, cleared in the one that stores the structure. Readers of structures extract these first.
CREATE TABLE IF NOT EXISTS pending_structures (id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE);
"""

_MEMORY_COLUMNS = (
    "id, content, importance, context, entity_id, kind, created_at, updated_at, last_accessed_at, access_count"
)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_micros(ts: datetime) -> int:
    return (ts - _EPOCH) // timedelta(microseconds=1)


def from_micros(value: int | None) -> datetime | None:
    if value is None:
        return None
    return _EPOCH + timedelta(microseconds=value)


def _row_to_memory(row: Sequence[Any]) -> Memory:
    created = from_micros(row[6])
    updated = from_micros(row[7])
    assert created is not None and updated is not None
    return Memory(
        id=row[0],
        content=row[1],
        importance=row[2],
        context=json.loads(row[3]),
        entity_id=row[4],
        kind=MemoryKind(row[5]),
        created_at=created,
        updated_at=updated,
        last_accessed_at=from_micros(row[8]),
        access_count=row[9],
    )


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """A memory with what only the engine needs: its embedding and relational structure."""

    memory: Memory
    embedding: np.ndarray
    structure: dict[str, Any]
    structure_pending: bool = False  # not extracted yet: `structure` is {} until the store's mark is cleared


class FusionRow(NamedTuple):
    """What a fused recall reads of one candidate (`RecordStore.fusion_rows`)."""

    episode: str  # the JSON array of its context's episode keys; NO_EPISODE when it names none
    embedding: np.ndarray | None  # None when not asked for
    entity_id: str | None


class ScoreInputs(NamedTuple):
    """What the composite score reads of each candidate (`RecordStore.score_inputs`): row n is memory ids[n]."""

    ids: list[str]
    importance: np.ndarray  # float64
    created_us: np.ndarray  # int64, microseconds since the epoch
    access_count: np.ndarray  # int64


class CandidateColumns(NamedTuple):
    """Every memory's `fusion_rows` values as columns (`RecordStore.candidate_rows`): row n is memory ids[n]."""

    ids: list[str]
    episodes: list[str]
    entities: list[str | None]
    embeddings: np.ndarray  # (memories x width) float32


class RecordStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self.read_only = path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
        self._generation = 0  # commits of this connection that may change what recall reads (see `version`)
        self._committed = threading.local()  # per thread: the generation its last counted commit made
        # Structures extracted for a read-only store's pending memories: kept here, since the file cannot be written.
        self._filled: dict[str, str] = {}
        if self.read_only:
            self._conn = _open_read_only(path)
            fulltext.prepare(self._conn)
            self._scores = _scores_hint(self._conn)
            return
        # One connection shared by the engine's threads; every use holds the lock.
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        fulltext.prepare(self._conn)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")  # acknowledged means on disk
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("PRAGMA cache_size=-65536")
        # Deleted content is overwritten with zeros, whatever this SQLite's compile-time default is.
        self._conn.execute("PRAGMA secure_delete=ON")
        self._conn.executescript(_SCHEMA)
        self._conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        self._conn.executescript(fulltext.SCHEMA)
        self._scores = _scores_hint(self._conn)
        if self.get_meta(fulltext.META_KEY) != fulltext.VERSION:
            # A store written before the lexical index existed (or by another version of it): fill it once.
            with self.transaction() as cur:
                fulltext.rebuild(cur)
                cur.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (fulltext.META_KEY, fulltext.VERSION)
                )

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self, *, counted: bool = True) -> Iterator[sqlite3.Cursor]:
        """One write transaction. `counted=False`: a write that changes nothing a recall's candidate table
        reads (access counts), so `version` stays the same and in-memory caches stay valid."""
        with self._lock:
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            else:
                cur.execute("COMMIT")
                if counted:
                    self._committed.generation = self._generation + 1
            finally:
                if counted:
                    self._generation += 1

    def last_commit(self) -> int | None:
        """The generation (`version()[0]`) that this thread's last counted commit made, or None: an index that
        follows a write right after it commits knows from it whether that write is the only change since its
        own version (another thread's commit in between makes it one of several)."""
        return getattr(self._committed, "generation", None)

    def version(self) -> tuple[int, int]:
        """Changes whenever the store may have changed: (this connection's counted commits, SQLite's
        `data_version`, which moves when another connection, in this process or another, commits). An
        in-memory cache built at one version is valid while the version is the same."""
        with self._lock:
            return self._generation, int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def ensure_tables(self, schema: str) -> None:
        """Create the tables of a module that keeps its own in this file (`;`-separated, IF NOT EXISTS)."""
        with self.transaction() as cur:
            for statement in schema.split(";"):
                if statement.strip():
                    cur.execute(statement)

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Rows of a read-only query, for modules that keep their own tables in this file (ingestion)."""
        return self._query(sql, params)

    # --- meta ------------------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as cur:
            cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # --- writes ----------------------------------------------------------------------------------------
    def insert(
        self,
        records: Sequence[MemoryRecord],
        edges: Sequence[Edge],
        also: Callable[[sqlite3.Cursor], None] | None = None,
        *,
        synced: bool = False,
    ) -> None:
        """Insert memories and their edges atomically; `also` writes rows that must commit with them.
        `synced`: their vectors are in the vector index already (upserted before this commit, see
        `Indexes.commit_with_vectors`), so they are stored marked synced rather than marked after."""
        with self.transaction() as cur:
            cur.executemany(
                "INSERT INTO memories (id, content, importance, context, entity_id, kind, created_at, updated_at,"
                " last_accessed_at, access_count, structure, embedding, vector_synced)"
                f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {int(synced)})",
                [_record_params(r) for r in records],
            )
            _mark_pending(cur, [r.memory.id for r in records if r.structure_pending])
            _insert_edges(cur, edges)
            fulltext.index_new(
                cur,
                [
                    (r.memory.id, r.memory.content, to_micros(r.memory.created_at), r.memory.context)
                    for r in records
                    if r.memory.kind != MemoryKind.REVISION
                ],
                (i for e in edges if e.type == EdgeType.FOLLOWED_BY for i in (e.source, e.target)),
            )
            if also is not None:
                also(cur)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        with self.transaction() as cur:
            _insert_edges(cur, edges)
            _refresh_windows(cur, edges)

    def revise(self, updated: MemoryRecord, revision: MemoryRecord, edge: Edge) -> None:
        """Replace a memory's state and keep the old state as a revision memory, atomically."""
        m = updated.memory
        with self.transaction() as cur:
            cur.execute(
                "INSERT INTO memories (id, content, importance, context, entity_id, kind, created_at, updated_at,"
                " last_accessed_at, access_count, structure, embedding, vector_synced)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                _record_params(revision),
            )
            cur.execute(
                "UPDATE memories SET content = ?, importance = ?, context = ?, entity_id = ?, updated_at = ?,"
                " structure = ?, embedding = ?, vector_synced = 0 WHERE id = ?",
                (
                    m.content,
                    m.importance,
                    json.dumps(m.context, sort_keys=True),
                    m.entity_id,
                    to_micros(m.updated_at),
                    json.dumps(updated.structure, sort_keys=True),
                    updated.embedding.astype(np.float32).tobytes(),
                    m.id,
                ),
            )
            cur.execute("DELETE FROM pending_structures WHERE id = ?", (m.id,))
            _mark_pending(cur, [r.memory.id for r in (updated, revision) if r.structure_pending])
            _insert_edges(cur, [edge])
            fulltext.index(cur, [m.id])

    def delete(self, ids: Sequence[str], *, erase: bool = False) -> list[str]:
        """Delete memories (and, by cascade, their edges); returns the ids that existed. With `erase`, the
        same transaction records that the vector index's files still need scrubbing (ERASE_PENDING), so a
        crash before that is finished on the next open."""
        with self.transaction() as cur:
            existing = _existing(cur, ids)
            around = fulltext.neighbourhood(cur, existing)
            fulltext.remove(cur, existing)
            for chunk in _chunks(existing, 500):
                marks = ",".join("?" * len(chunk))
                cur.execute(f"DELETE FROM memories WHERE id IN ({marks})", chunk)
            cur.executemany("INSERT OR IGNORE INTO pending_vector_deletes (id) VALUES (?)", [(i,) for i in existing])
            fulltext.refresh_windows(cur, around - set(existing))
            if erase and existing:
                cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, '1')", (ERASE_PENDING,))
        return existing

    def erase_pending(self) -> bool:
        return self.get_meta(ERASE_PENDING) is not None

    def clear_erase_pending(self) -> None:
        with self.transaction() as cur:
            cur.execute("DELETE FROM meta WHERE key = ?", (ERASE_PENDING,))

    def purge_deleted_text(self) -> None:
        """Drop forgotten memories' terms from the text index's segments (see `fulltext.purge_deleted`)."""
        with self.transaction() as cur:
            fulltext.purge_deleted(cur)

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database and truncate it: deleted text must not linger in the
        WAL. (A reader in another process can keep it from completing; the next checkpoint finishes it.)"""
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def lexical_search(self, table: str, words: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The best `limit` BM25 matches of any of the words in `memory_text` or `window_text` (see fulltext),
        with the saturation and length normalisation of `config.LEXICAL_BM25_K1` / `LEXICAL_BM25_B`."""
        with self._lock:
            return fulltext.bm25(
                self._conn.cursor(), table, words, limit, config.LEXICAL_BM25_K1, config.LEXICAL_BM25_B
            )

    def lexical_terms(self, words: Sequence[str]) -> list[str]:
        """The index terms (stems) of cue words, as the lexical tables' tokenizer makes them."""
        with self._lock:
            return fulltext.stems(self._conn.cursor(), words)

    def lexical_totals(self, table: str) -> tuple[int, float]:
        """(rows, mean length in tokens) of a lexical table."""
        with self._lock:
            return fulltext.totals(self._conn.cursor(), table)

    def lexical_postings(self, table: str, term: str) -> tuple[np.ndarray, np.ndarray]:
        """One index term's posting list in a lexical table: (row numbers, occurrences), int32 arrays."""
        with self._lock:
            docs, counts = fulltext.postings(self._conn.cursor(), table, term)
        return np.array(docs, dtype=np.int32), np.array(counts, dtype=np.int32)

    def lexical_row_ids(self) -> tuple[np.ndarray, np.ndarray]:
        """(row numbers ascending, memory ids) of the lexical tables' rows: int64 and object arrays."""
        with self._lock:
            rows = fulltext.row_ids(self._conn.cursor())
        return np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=object)

    def lexical_doc_sizes(self, table: str) -> tuple[np.ndarray, np.ndarray]:
        """(row numbers ascending, lengths in tokens) of a lexical table's rows: int64 arrays."""
        with self._lock:
            rows = fulltext.doc_sizes(self._conn.cursor(), table)
        return np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64)

    def lexical_marks(self, match: str, ids: Sequence[str]) -> dict[str, str]:
        """The given memories' contents with the words matching an FTS5 expression in [brackets]."""
        with self._lock:
            try:
                return fulltext.marks(self._conn.cursor(), match, ids)
            except sqlite3.OperationalError:
                return {}

    def followed_by_neighbours(self, ids: Sequence[str]) -> dict[str, set[str]]:
        """Both directions of the followed_by edges touching the given memories."""
        with self._lock:
            return fulltext.followed_by(self._conn.cursor(), ids)

    def fusion_rows(self, ids: Sequence[str], with_embeddings: bool) -> dict[str, FusionRow]:
        """Episode key, embedding (or None) and entity id of the given memories that exist, in one read: what a
        fused recall needs of each candidate. The key is the JSON array of the context's `config.EPISODE_KEYS`
        values (null where absent): equal keys, same episode; `NO_EPISODE` is a memory in none."""
        found: dict[str, FusionRow] = {}
        columns = f"id, {_EPISODE_KEY}, {'embedding' if with_embeddings else 'NULL'}, entity_id"
        for r in self._query_ids(f"SELECT {columns} FROM memories", ids):
            found[r[0]] = FusionRow(r[1], None if r[2] is None else np.frombuffer(r[2], dtype=np.float32), r[3])
        return found

    def candidate_rows(self) -> tuple[tuple[int, int], CandidateColumns, list[tuple[str, str]]]:
        """Everything a recall's candidate table holds, read in one read transaction with the version it
        was read at: (version, every memory's id, episode key, entity id and embedding as `fusion_rows` gives
        them, every followed_by edge as (source, target)). The embeddings are copied into one matrix a few
        thousand rows at a time (never all the rows' blobs at once: at 100,000 memories that doubled the
        peak memory); equal episode keys and entity ids share one string."""
        with self._lock:
            version = self.version()  # read first: a commit meanwhile makes the table look older, never newer
            cur = self._conn.cursor()
            cur.execute("BEGIN")
            try:
                count = int(cur.execute("SELECT count(*) FROM memories").fetchone()[0])
                width = cur.execute("SELECT length(embedding) FROM memories LIMIT 1").fetchone()
                matrix = np.empty((count, (width[0] // 4) if width else 0), dtype=np.float32)
                ids: list[str] = []
                episodes: list[str] = []
                entities: list[str | None] = []
                shared: dict[str | None, str | None] = {}
                rows = cur.execute(f"SELECT id, {_EPISODE_KEY}, embedding, entity_id FROM memories")
                while batch := rows.fetchmany(4096):
                    start = len(ids)
                    for n, (memory_id, episode, blob, entity) in enumerate(batch, start):
                        matrix[n] = np.frombuffer(blob, dtype=np.float32)
                        ids.append(memory_id)
                        episodes.append(shared.setdefault(episode, episode))  # type: ignore[arg-type]
                        entities.append(shared.setdefault(entity, entity))
                edges = cur.execute(
                    "SELECT source, target FROM edges WHERE type = ?", (EdgeType.FOLLOWED_BY.value,)
                ).fetchall()
            finally:
                cur.execute("COMMIT")
        return version, CandidateColumns(ids, episodes, entities, matrix[: len(ids)]), edges

    def record_access(self, ids: Sequence[str], when: datetime) -> None:
        if not ids:
            return
        with self.transaction(counted=False) as cur:
            cur.executemany(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? WHERE id = ?",
                [(to_micros(when), i) for i in ids],
            )

    # --- vector-index bookkeeping ------------------------------------------------------------------------
    def unsynced(self) -> list[tuple[str, np.ndarray]]:
        rows = self._query("SELECT id, embedding FROM memories WHERE vector_synced = 0")
        return [(r[0], np.frombuffer(r[1], dtype=np.float32)) for r in rows]

    def count_unsynced(self) -> int:
        return int(self._query("SELECT count(*) FROM memories WHERE vector_synced = 0")[0][0])

    def mark_synced(self, ids: Sequence[str]) -> None:
        """Not counted in `version`: whether a vector reached the vector index is nothing recall's caches hold."""
        with self.transaction(counted=False) as cur:
            for chunk in _chunks(list(ids), 500):
                marks = ",".join("?" * len(chunk))
                cur.execute(f"UPDATE memories SET vector_synced = 1 WHERE id IN ({marks})", chunk)

    def mark_all_unsynced(self) -> None:
        with self.transaction() as cur:
            cur.execute("UPDATE memories SET vector_synced = 0")

    def pending_deletes(self) -> list[str]:
        return [r[0] for r in self._query("SELECT id FROM pending_vector_deletes")]

    def clear_pending_deletes(self, ids: Sequence[str]) -> None:
        """Not counted in `version`, like `mark_synced`: the memories are gone already."""
        with self.transaction(counted=False) as cur:
            cur.executemany("DELETE FROM pending_vector_deletes WHERE id = ?", [(i,) for i in ids])

    # --- reads -----------------------------------------------------------------------------------------
    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]:
        return {row[0]: _row_to_memory(row) for row in self._query_ids(f"SELECT {_MEMORY_COLUMNS} FROM memories", ids)}

    def score_inputs(self, ids: Sequence[str]) -> ScoreInputs:
        """Importance, created_at (microseconds) and access_count of the given memories that exist, as columns:
        what the composite score needs, without reading and parsing whole memories."""
        sql = f"SELECT id, importance, created_at, access_count FROM memories {self._scores}"
        rows = self._query_ids(sql, ids)
        if not rows:
            return ScoreInputs([], np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        found, importance, created, access = zip(*rows, strict=True)
        return ScoreInputs(list(found), np.array(importance, dtype=np.float64), np.array(created, dtype=np.int64),
                           np.array(access, dtype=np.int64))

    def get_record(self, memory_id: str) -> MemoryRecord | None:
        rows = self._query(f"SELECT {_MEMORY_COLUMNS}, embedding, structure FROM memories WHERE id = ?", (memory_id,))
        if not rows:
            return None
        row = rows[0]
        structure = self._filled.get(memory_id, row[11])
        pending = memory_id not in self._filled and bool(self._pending_of([memory_id]))
        return MemoryRecord(_row_to_memory(row), np.frombuffer(row[10], dtype=np.float32), json.loads(structure),
                            pending)

    def created_at_of(self, ids: Sequence[str]) -> dict[str, int]:
        """created_at (microseconds) of the given memories that exist."""
        return dict(self._query_ids(f"SELECT id, created_at FROM memories {self._scores}", ids))

    def existing(self, ids: Iterable[str]) -> set[str]:
        with self._lock:
            return set(_existing(self._conn.cursor(), list(ids)))

    def ids_matching(self, fragment: str, limit: int = 10) -> list[str]:
        """Ids that start or end with `fragment` (ids are upper-case base32; case is ignored), at most `limit`."""
        text = fragment.upper()
        if not text or any(c in text for c in "%_\\"):
            return []
        with self._lock:
            rows = self._conn.execute(
                "SELECT id FROM memories WHERE id LIKE ? OR id LIKE ? ORDER BY id LIMIT ?",
                (text + "%", "%" + text, limit),
            ).fetchall()
        return [r[0] for r in rows]

    def list_memories(
        self,
        *,
        entity_id: str | None = None,
        kind: MemoryKind | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
        min_importance: float | None = None,
        include_revisions: bool = True,
        limit: int = 100,
        offset: int = 0,
        contains: str | None = None,
    ) -> tuple[list[Memory], int]:
        """One page of the memories that pass every filter, newest first, and how many pass in all.

        `contains`: only memories whose content holds this text (case-insensitive for ASCII letters)."""
        clauses, params = _filters(entity_id, kind, start, end)
        if contains:
            clauses.append("content LIKE ? ESCAPE '\\'")
            params.append("%" + re.sub(r"([\\%_])", r"\\\1", contains) + "%")
        if min_importance is not None:
            clauses.append("importance >= ?")
            params.append(min_importance)
        if not include_revisions:
            clauses.append("kind != ?")
            params.append(MemoryKind.REVISION.value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories {where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
            total = self._conn.execute(f"SELECT count(*) FROM memories {where}", params).fetchone()[0]
        return [_row_to_memory(r) for r in rows], int(total)

    def ids_with_revisions(self, ids: Sequence[str]) -> list[str]:
        """The ids plus, transitively, the revision memories that hold their earlier states."""
        result, frontier = list(dict.fromkeys(ids)), list(ids)
        seen = set(result)
        while frontier:
            marks = ",".join("?" * len(frontier))
            rows = self._query(
                f"SELECT target FROM edges WHERE type = ? AND source IN ({marks})",
                (EdgeType.REVISED_FROM.value, *frontier),
            )
            frontier = [r[0] for r in rows if r[0] not in seen]
            seen.update(frontier)
            result.extend(frontier)
        return result

    def ids_of_kind(self, kind: MemoryKind) -> list[str]:
        # The kind is written into the statement (an enum value, not user text) so that SQLite can use the
        # partial index memories_revisions for revisions, which a bound parameter would not allow.
        return [r[0] for r in self._query(f"SELECT id FROM memories WHERE kind = '{MemoryKind(kind).value}'")]

    def ids_of_entity(self, entity_id: str) -> list[str]:
        return [r[0] for r in self._query("SELECT id FROM memories WHERE entity_id = ?", (entity_id,))]

    def timeline_rows(self) -> list[tuple[str, int, str]]:
        """(entity_id, created_at in microseconds, id) of every memory that has an entity."""
        return self._query("SELECT entity_id, created_at, id FROM memories WHERE entity_id IS NOT NULL")

    def structures(self) -> list[tuple[str, dict[str, Any]]]:
        rows = self._query("SELECT id, structure FROM memories")
        return [(r[0], json.loads(self._filled.get(r[0], r[1]))) for r in rows]

    def features(self) -> list[tuple[str, list[str]]]:
        """(id, structure["features"]) of every memory. SQLite extracts the list, so opening a store parses
        a few bytes per memory instead of its whole structure."""
        try:
            rows = self._query("SELECT id, json_extract(structure, '$.features') FROM memories")
        except sqlite3.OperationalError:  # an SQLite built without JSON functions
            return [(i, s.get("features", [])) for i, s in self.structures()]
        found = [(r[0], _string_list(r[1])) for r in rows]
        if self._filled:
            found = [(i, json.loads(self._filled[i]).get("features", []) if i in self._filled else f) for i, f in found]
        return found

    def structure_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """The stored structures of some memories as their JSON text, unparsed: analogical recall parses
        each distinct text once per process (engine/analogy/text.py `stored_episode`)."""
        return {r[0]: self._filled.get(r[0], r[1]) for r in self._query_ids("SELECT id, structure FROM memories", ids)}

    def stale_structures(self, version: int) -> list[tuple[str, str]]:
        """(id, content) of memories whose structure was written by another extractor version."""
        try:
            rows = self._query(
                "SELECT id, content FROM memories WHERE json_extract(structure, '$.version') IS NOT ?", (version,)
            )
            return [(r[0], r[1]) for r in rows]
        except sqlite3.OperationalError:  # an SQLite built without JSON functions
            rows = self._query("SELECT id, content, structure FROM memories")
            return [(r[0], r[1]) for r in rows if json.loads(r[2]).get("version") != version]

    def set_structures(self, structures: Sequence[tuple[str, str, dict[str, Any]]], *, pending_only: bool = False
                       ) -> list[str]:
        """Store structures extracted from (id, content): a rebuild after the extractor changed, or (with
        `pending_only`) the catch-up of pending ones. A structure is written only while the memory still has
        that content (a revise meanwhile leaves it pending for its new text) and, with `pending_only`, only
        if still pending (another engine or process may have stored it first): idempotent under the write
        lock. Clears the pending marks of what it wrote; returns those ids. A read-only store keeps them in
        memory for this process."""
        if self.read_only:
            ids = [i for i, _, _ in structures]
            pending = self._pending_of(ids)
            current = dict(self._query_ids("SELECT id, content FROM memories", ids))
            written = [(i, s) for i, c, s in structures
                       if current.get(i) == c and (not pending_only or i in pending) and i not in self._filled]
            self._filled.update((i, json.dumps(s, sort_keys=True)) for i, s in written)
            return [i for i, _ in written]
        written_ids: list[str] = []
        guard = " AND id IN (SELECT id FROM pending_structures)" if pending_only else ""
        with self.transaction() as cur:
            for memory_id, content, structure in structures:
                cur.execute(
                    f"UPDATE memories SET structure = ? WHERE id = ? AND content = ?{guard}",
                    (json.dumps(structure, sort_keys=True), memory_id, content),
                )
                if cur.rowcount:
                    written_ids.append(memory_id)
            cur.executemany("DELETE FROM pending_structures WHERE id = ?", [(i,) for i in written_ids])
        return written_ids

    def pending_structures(self, limit: int) -> list[tuple[str, str]]:
        """(id, content) of up to `limit` memories whose structure is not extracted yet, oldest ids first."""
        try:
            rows = self._query(
                "SELECT p.id, m.content FROM pending_structures p JOIN memories m ON m.id = p.id ORDER BY p.id"
                " LIMIT ?", (limit + len(self._filled),)
            )
        except sqlite3.OperationalError:  # a read-only store written before structures could be pending
            return []
        return [(r[0], r[1]) for r in rows if r[0] not in self._filled][:limit]

    def count_pending_structures(self) -> int:
        try:
            total = int(self._query("SELECT count(*) FROM pending_structures")[0][0])
        except sqlite3.OperationalError:
            return 0
        return total - len(self._pending_of(list(self._filled))) if self._filled else total

    def pending_structure_ids(self) -> set[str]:
        try:
            found = {r[0] for r in self._query("SELECT id FROM pending_structures")}
        except sqlite3.OperationalError:
            return set()
        return found - self._filled.keys()

    def _pending_of(self, ids: Sequence[str]) -> set[str]:
        """Which of these memories still have a pending structure (as marked in the file)."""
        try:
            return {r[0] for r in self._query_ids("SELECT id FROM pending_structures", ids)}
        except sqlite3.OperationalError:
            return set()

    def features_of(self, ids: Sequence[str]) -> list[tuple[str, list[str]]]:
        """(id, structure["features"]) of those of the memories whose structure is extracted."""
        pending = self._pending_of(ids) - self._filled.keys()
        found = self.structure_texts([i for i in ids if i not in pending])
        return [(i, json.loads(text).get("features", [])) for i, text in found.items()]

    def _query_ids(self, select: str, ids: Sequence[str]) -> list[Any]:
        """`select` (a statement without WHERE) restricted to rows whose id is among `ids`, in chunks."""
        rows: list[Any] = []
        for chunk in _chunks(list(ids), 500):
            marks = ",".join("?" * len(chunk))
            rows.extend(self._query(f"{select} WHERE id IN ({marks})", chunk))
        return rows

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        rows = self._query_ids("SELECT id, embedding FROM memories", ids)
        return {r[0]: np.frombuffer(r[1], dtype=np.float32) for r in rows}

    def all_embeddings(self, batch: int = 5000) -> Iterator[list[tuple[str, np.ndarray]]]:
        last = ""
        while True:
            rows = self._query("SELECT id, embedding FROM memories WHERE id > ? ORDER BY id LIMIT ?", (last, batch))
            if not rows:
                return
            yield [(r[0], np.frombuffer(r[1], dtype=np.float32)) for r in rows]
            last = rows[-1][0]

    def edges(self) -> list[Edge]:
        rows = self._query("SELECT source, target, type, confidence, attrs FROM edges")
        # This runs on every open, once per edge: look types up in a dict, and skip parsing empty attrs.
        types: dict[str, EdgeType] = {t.value: t for t in EdgeType}
        return [
            Edge(r[0], r[1], types.get(r[2]) or EdgeType(r[2]), r[3], {} if r[4] == "{}" else json.loads(r[4]))
            for r in rows
        ]

    def edges_of(self, memory_id: str) -> list[Edge]:
        rows = self._query(
            "SELECT source, target, type, confidence, attrs FROM edges WHERE source = ? OR target = ?",
            (memory_id, memory_id),
        )
        return [Edge(r[0], r[1], EdgeType(r[2]), r[3], json.loads(r[4])) for r in rows]

    def edges_among(self, ids: Sequence[str]) -> list[Edge]:
        """Every stored edge whose two ends are both among `ids`."""
        wanted = set(ids)
        found: dict[tuple[str, str, str], Edge] = {}
        for chunk in _chunks(list(wanted), 250):
            marks = ",".join("?" * len(chunk))
            rows = self._query(
                f"SELECT source, target, type, confidence, attrs FROM edges WHERE source IN ({marks})", chunk
            )
            for r in rows:
                if r[1] in wanted:
                    found[(r[0], r[1], r[2])] = Edge(r[0], r[1], EdgeType(r[2]), r[3], json.loads(r[4]))
        return [found[k] for k in sorted(found)]

    def count(self) -> int:
        return int(self._query("SELECT count(*) FROM memories")[0][0])

    def count_edges_by_type(self, origin: str) -> dict[str, int]:
        """Edges whose `attrs.origin` is `origin` (derived by ingestion), counted by type."""
        rows = self._query(
            "SELECT type, count(*) FROM edges WHERE json_extract(attrs, '$.origin') = ? GROUP BY type", (origin,)
        )
        return {r[0]: int(r[1]) for r in rows}

    def replace_derived_edges(
        self, origin: str, edges: Sequence[Edge], also: Callable[[sqlite3.Cursor], None] | None = None
    ) -> None:
        """Swap every edge of `attrs.origin == origin` for `edges`, atomically (`also` commits with them)."""
        with self.transaction() as cur:
            removed = [
                Edge(r[0], r[1], EdgeType.FOLLOWED_BY, 1.0, {})
                for r in cur.execute(
                    "SELECT source, target FROM edges WHERE json_extract(attrs, '$.origin') = ? AND type = ?",
                    (origin, EdgeType.FOLLOWED_BY.value),
                )
            ]
            cur.execute("DELETE FROM edges WHERE json_extract(attrs, '$.origin') = ?", (origin,))
            cur.executemany(
                "INSERT OR IGNORE INTO edges (source, target, type, confidence, attrs) VALUES (?, ?, ?, ?, ?)",
                [_edge_params(e) for e in edges],
            )
            _refresh_windows(cur, [*removed, *edges])  # windows around edges that went or came
            if also is not None:
                also(cur)

    def ingested_propositions(self) -> list[tuple[str, str, int, dict[str, Any], np.ndarray, float]]:
        """(id, entity_id, created_at us, context, embedding, importance) of propositions with an entity:
        what salience reads."""
        rows = self._query(
            "SELECT id, entity_id, created_at, context, embedding, importance FROM memories"
            " WHERE kind = 'proposition' AND entity_id IS NOT NULL"
        )
        return [(r[0], r[1], r[2], json.loads(r[3]), np.frombuffer(r[4], dtype=np.float32), r[5]) for r in rows]

    def set_importances(self, values: Sequence[tuple[str, float]]) -> None:
        """Set importance per memory id, in one transaction."""
        with self.transaction() as cur:
            cur.executemany("UPDATE memories SET importance = ? WHERE id = ?", [(v, i) for i, v in values])

    def count_edges(self) -> int:
        return int(self._query("SELECT count(*) FROM edges")[0][0])

    def count_entities(self) -> int:
        return int(self._query("SELECT count(DISTINCT entity_id) FROM memories WHERE entity_id IS NOT NULL")[0][0])


def _open_read_only(path: Path) -> sqlite3.Connection:
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


def _scores_hint(conn: sqlite3.Connection) -> str:
    """`INDEXED BY memories_scores` where the store has that index (a read-only store written before it
    existed has not). SQLite's planner would otherwise pick the primary key's index and read each row."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'memories_scores'").fetchone()
    return "INDEXED BY memories_scores" if found else ""


def _string_list(text: str | None) -> list[str]:
    """A JSON list of strings as SQLite prints it (`["a","b"]`, minified). Plain ones are split directly,
    ten times faster than json.loads on 100,000 rows; anything escaped or unusual goes through json.loads."""
    if not text or text == "[]":
        return []
    if "\\" in text or not (text.startswith('["') and text.endswith('"]')):
        value = json.loads(text)
        return value if isinstance(value, list) else []
    return text[2:-2].split('","')


def _record_params(r: MemoryRecord) -> tuple[Any, ...]:
    m = r.memory
    return (
        m.id,
        m.content,
        m.importance,
        json.dumps(m.context, sort_keys=True),
        m.entity_id,
        m.kind.value,
        to_micros(m.created_at),
        to_micros(m.updated_at),
        None if m.last_accessed_at is None else to_micros(m.last_accessed_at),
        m.access_count,
        json.dumps(r.structure, sort_keys=True),
        np.asarray(r.embedding, dtype=np.float32).tobytes(),
    )


def _edge_params(e: Edge) -> tuple[Any, ...]:
    # Most edges carry no attributes: "{}" without a json.dumps call each (bulk writes add thousands).
    return (e.source, e.target, e.type.value, e.confidence, json.dumps(e.attrs, sort_keys=True) if e.attrs else "{}")


def _mark_pending(cur: sqlite3.Cursor, ids: Sequence[str]) -> None:
    """Record that these memories' structures are still to be extracted (same transaction as the write)."""
    cur.executemany("INSERT OR IGNORE INTO pending_structures (id) VALUES (?)", [(i,) for i in ids])


def _insert_edges(cur: sqlite3.Cursor, edges: Sequence[Edge]) -> None:
    cur.executemany(
        "INSERT OR REPLACE INTO edges (source, target, type, confidence, attrs) VALUES (?, ?, ?, ?, ?)",
        [_edge_params(e) for e in edges],
    )


def _existing(cur: sqlite3.Cursor, ids: Sequence[str]) -> list[str]:
    found: set[str] = set()
    for chunk in _chunks(list(ids), 500):
        marks = ",".join("?" * len(chunk))
        found.update(r[0] for r in cur.execute(f"SELECT id FROM memories WHERE id IN ({marks})", chunk))
    return [i for i in dict.fromkeys(ids) if i in found]


def _filters(
    entity_id: str | None, kind: MemoryKind | None, start: datetime | None, end: datetime | None
) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if entity_id is not None:
        clauses.append("entity_id = ?")
        params.append(entity_id)
    if kind is not None:
        clauses.append("kind = ?")
        params.append(kind.value)
    if start is not None:
        clauses.append("created_at >= ?")
        params.append(to_micros(start))
    if end is not None:
        clauses.append("created_at <= ?")
        params.append(to_micros(end))
    return clauses, params


def _refresh_windows(cur: sqlite3.Cursor, edges: Sequence[Edge]) -> None:
    """New followed_by edges change the windows around both ends."""
    ends = {i for e in edges if e.type == EdgeType.FOLLOWED_BY for i in (e.source, e.target)}
    fulltext.refresh_around(cur, sorted(ends))


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
