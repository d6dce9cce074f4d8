"""The memories table: the writes that add, revise and delete memories, and the reads of whole memories."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from engine.models import Edge, EdgeType, Memory, MemoryKind
from engine.store.rows import (
    MEMORY_COLUMNS,
    AlsoWrite,
    DecayInputs,
    MemoryRecord,
    from_micros,
    record_params,
    row_to_memory,
    to_micros,
)
from engine.store.sqlite import fulltext
from engine.store.sqlite.bookkeeping import write_also
from engine.store.sqlite.connection import ERASE_PENDING, SqliteConnection, chunks
from engine.store.sqlite.edges import insert_edges


class MemoryTable(SqliteConnection):
    """Memories: written with their edges, text index rows and pending marks in one transaction."""

    # --- writes ----------------------------------------------------------------------------------------
    def insert(
        self,
        records: Sequence[MemoryRecord],
        edges: Sequence[Edge],
        also: AlsoWrite | None = None,
        *,
        synced: bool = False,
    ) -> None:
        """Insert memories and their edges atomically; `also` writes rows that must commit with them.
        `synced`: their vectors are in the vector index already (upserted before this commit, see
        `DerivedIndexes.commit_with_vectors`), so they are stored marked synced rather than marked after."""
        with self.transaction() as cur:
            cur.executemany(
                "INSERT INTO memories (id, content, importance, context, entity_id, kind, created_at, updated_at,"
                " last_accessed_at, access_count, structure, embedding, vector_synced)"
                f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {int(synced)})",
                [record_params(r) for r in records],
            )
            mark_pending(cur, [r.memory.id for r in records if r.structure_pending])
            mark_checks(cur, [r.memory.id for r in records if r.check_pending])
            insert_edges(cur, edges)
            fulltext.index_new(
                cur,
                [
                    (r.memory.id, r.memory.content, to_micros(r.memory.created_at), r.memory.context)
                    for r in records
                    if r.memory.kind != MemoryKind.REVISION
                ],
                (i for e in edges if e.type == EdgeType.FOLLOWED_BY for i in (e.source, e.target)),
            )
            write_also(cur, also)

    def revise(self, updated: MemoryRecord, revision: MemoryRecord, edge: Edge) -> None:
        """Replace a memory's state and keep the old state as a revision memory, atomically."""
        m = updated.memory
        with self.transaction() as cur:
            cur.execute(
                "INSERT INTO memories (id, content, importance, context, entity_id, kind, created_at, updated_at,"
                " last_accessed_at, access_count, structure, embedding, vector_synced)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                record_params(revision),
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
            mark_pending(cur, [r.memory.id for r in (updated, revision) if r.structure_pending])
            insert_edges(cur, [edge])
            fulltext.index(cur, [m.id])

    def delete(self, ids: Sequence[str], *, erase: bool = False) -> list[str]:
        """Delete memories (and, by cascade, their edges); returns the ids that existed. With `erase`, the
        same transaction records that the vector index's files still need scrubbing (ERASE_PENDING), so a
        crash before that is finished on the next open."""
        with self.transaction() as cur:
            existing = existing_ids(cur, ids)
            around = fulltext.neighbourhood(cur, existing)
            fulltext.remove(cur, existing)
            for chunk in chunks(existing, 500):
                marks = ",".join("?" * len(chunk))
                cur.execute(f"DELETE FROM memories WHERE id IN ({marks})", chunk)
            cur.executemany("INSERT OR IGNORE INTO pending_vector_deletes (id) VALUES (?)", [(i,) for i in existing])
            fulltext.refresh_windows(cur, around - set(existing))
            if erase and existing:
                cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, '1')", (ERASE_PENDING,))
        return existing

    def record_access(self, ids: Sequence[str], when: datetime) -> None:
        if not ids:
            return
        with self.transaction(counted=False, durable=False) as cur:  # bookkeeping: see `transaction`
            cur.executemany(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? WHERE id = ?",
                [(to_micros(when), i) for i in ids],
            )

    def set_importances(self, values: Sequence[tuple[str, float]]) -> None:
        """Set importance per memory id, in one transaction."""
        with self.transaction() as cur:
            cur.executemany("UPDATE memories SET importance = ? WHERE id = ?", [(v, i) for i, v in values])

    # --- reads -----------------------------------------------------------------------------------------
    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]:
        return {row[0]: row_to_memory(row) for row in self._query_ids(f"SELECT {MEMORY_COLUMNS} FROM memories", ids)}

    def existing(self, ids: Iterable[str]) -> set[str]:
        with self._lock:
            return set(existing_ids(self._conn.cursor(), list(ids)))

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
        clauses, params = filters(entity_id, kind, start, end)
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
                f"SELECT {MEMORY_COLUMNS} FROM memories {where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
            total = self._conn.execute(f"SELECT count(*) FROM memories {where}", params).fetchone()[0]
        return [row_to_memory(r) for r in rows], int(total)

    def ids_of_kind(self, kind: MemoryKind) -> list[str]:
        # The kind is written into the statement (an enum value, not user text) so that SQLite can use the
        # partial index memories_revisions for revisions, which a bound parameter would not allow.
        return [r[0] for r in self._query(f"SELECT id FROM memories WHERE kind = '{MemoryKind(kind).value}'")]

    def ids_of_entity(self, entity_id: str) -> list[str]:
        return [r[0] for r in self._query("SELECT id FROM memories WHERE entity_id = ?", (entity_id,))]

    def count(self) -> int:
        return int(self._query("SELECT count(*) FROM memories")[0][0])

    def decay_inputs(
        self,
        *,
        entity_id: str | None = None,
        kind: MemoryKind | None = None,
        accessed_before: datetime | None = None,
        access_count_below: int | None = None,
    ) -> list[DecayInputs]:
        """(id, importance, created_at, last_accessed_at, access_count) of the memories that pass every given
        filter (`accessed_before`: last accessed, or created if never, before that time), revisions left out
        unless `kind` is revision: what a forget by criteria and the auto-forget sweep read."""
        where, params = ["kind = ?" if kind is not None else "kind != 'revision'"], list[Any]()
        if kind is not None:
            params.append(MemoryKind(kind).value)
        if entity_id is not None:
            where.append("entity_id = ?")
            params.append(entity_id)
        if accessed_before is not None:
            where.append("coalesce(last_accessed_at, created_at) < ?")
            params.append(to_micros(accessed_before))
        if access_count_below is not None:
            where.append("access_count < ?")
            params.append(access_count_below)
        rows = self._query("SELECT id, importance, created_at, last_accessed_at, access_count FROM memories WHERE "
                           + " AND ".join(where), params)
        return [DecayInputs(r[0], r[1], from_micros(r[2]), from_micros(r[3]), r[4]) for r in rows]  # type: ignore[arg-type]

    def count_entities(self) -> int:
        return int(self._query("SELECT count(DISTINCT entity_id) FROM memories WHERE entity_id IS NOT NULL")[0][0])

    def ingested_propositions(self) -> list[tuple[str, str, int, dict[str, Any], np.ndarray, float]]:
        """(id, entity_id, created_at us, context, embedding, importance) of propositions with an entity:
        what salience reads."""
        rows = self._query(
            "SELECT id, entity_id, created_at, context, embedding, importance FROM memories"
            " WHERE kind = 'proposition' AND entity_id IS NOT NULL"
        )
        return [(r[0], r[1], r[2], json.loads(r[3]), np.frombuffer(r[4], dtype=np.float32), r[5]) for r in rows]


def existing_ids(cur: sqlite3.Cursor, ids: Sequence[str]) -> list[str]:
    found: set[str] = set()
    for chunk in chunks(list(ids), 500):
        marks = ",".join("?" * len(chunk))
        found.update(r[0] for r in cur.execute(f"SELECT id FROM memories WHERE id IN ({marks})", chunk))
    return [i for i in dict.fromkeys(ids) if i in found]


def filters(
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


def mark_pending(cur: sqlite3.Cursor, ids: Sequence[str]) -> None:
    """Record that these memories' structures are still to be extracted (same transaction as the write)."""
    cur.executemany("INSERT OR IGNORE INTO pending_structures (id) VALUES (?)", [(i,) for i in ids])


def mark_checks(cur: sqlite3.Cursor, ids: Sequence[str]) -> None:
    """Record that these memories' contradiction check is still to run (same transaction as the write)."""
    cur.executemany("INSERT OR IGNORE INTO pending_checks (id) VALUES (?)", [(i,) for i in ids])
