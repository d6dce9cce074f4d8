"""Memories and edges in PostgreSQL: written with their text rows and pending marks in one transaction."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from engine import config
from engine.models import Edge, EdgeType, Memory, MemoryKind
from engine.store.postgres import text
from engine.store.postgres.bookkeeping import write_also
from engine.store.postgres.connection import PostgresConnection
from engine.store.postgres.reads import VectorSync
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

INSERT = (
    "INSERT INTO memories (id, content, importance, context, entity_id, kind, created_at, updated_at,"
    " last_accessed_at, access_count, structure, embedding, episode)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def episode_of(context: dict[str, Any]) -> str:
    """The episode key as the SQLite store's `json_extract(context, ...)` prints it (rows.NO_EPISODE if none)."""
    return json.dumps([context.get(k) for k in config.EPISODE_KEYS], separators=(",", ":"), ensure_ascii=False)


def memory_params(r: MemoryRecord) -> tuple[Any, ...]:
    return (*record_params(r), episode_of(r.memory.context))


def edge_params(e: Edge) -> tuple[Any, ...]:
    return (e.source, e.target, e.type.value, e.confidence, json.dumps(e.attrs, sort_keys=True) if e.attrs else "{}")


def insert_edges(cur: Any, edges: Sequence[Edge]) -> None:
    cur.executemany(
        "INSERT INTO edges (source, target, type, confidence, attrs) VALUES (%s, %s, %s, %s, %s)"
        " ON CONFLICT (source, target, type) DO UPDATE SET confidence = excluded.confidence, attrs = excluded.attrs",
        [edge_params(e) for e in edges],
    )


def refresh_windows(cur: Any, edges: Sequence[Edge]) -> None:
    ends = {i for e in edges if e.type == EdgeType.FOLLOWED_BY for i in (e.source, e.target)}
    text.refresh_around(cur, sorted(ends))


def mark_pending(cur: Any, ids: Sequence[str]) -> None:
    cur.executemany("INSERT INTO pending_structures (id) VALUES (%s) ON CONFLICT DO NOTHING", [(i,) for i in ids])


def mark_checks(cur: Any, ids: Sequence[str]) -> None:
    """Record that these memories' contradiction check is still to run (same transaction as the write)."""
    cur.executemany("INSERT INTO pending_checks (id) VALUES (%s) ON CONFLICT DO NOTHING", [(i,) for i in ids])


class MemoryTable(VectorSync):
    """Memories (`MemoryStorage`)."""

    def insert(self, records: Sequence[MemoryRecord], edges: Sequence[Edge], also: AlsoWrite | None = None, *,
               synced: bool = False) -> None:
        with self.transaction() as cur:
            cur.executemany(INSERT, [memory_params(r) for r in records])
            mark_pending(cur, [r.memory.id for r in records if r.structure_pending])
            mark_checks(cur, [r.memory.id for r in records if r.check_pending])
            insert_edges(cur, edges)
            text.index_new(
                cur,
                [(r.memory.id, r.memory.content, to_micros(r.memory.created_at), r.memory.context)
                 for r in records if r.memory.kind != MemoryKind.REVISION],
                (i for e in edges if e.type == EdgeType.FOLLOWED_BY for i in (e.source, e.target)),
            )
            write_also(cur, also)
        self.vectors_changed([r.memory.id for r in records], synced=synced)

    def revise(self, updated: MemoryRecord, revision: MemoryRecord, edge: Edge) -> None:
        m = updated.memory
        with self.transaction() as cur:
            cur.execute(INSERT, memory_params(revision))
            cur.execute(
                "UPDATE memories SET content = %s, importance = %s, context = %s, entity_id = %s, updated_at = %s,"
                " structure = %s, embedding = %s, episode = %s WHERE id = %s",
                (m.content, m.importance, json.dumps(m.context, sort_keys=True), m.entity_id, to_micros(m.updated_at),
                 json.dumps(updated.structure, sort_keys=True), updated.embedding.astype(np.float32).tobytes(),
                 episode_of(m.context), m.id),
            )
            cur.execute("DELETE FROM pending_structures WHERE id = %s", (m.id,))
            mark_pending(cur, [r.memory.id for r in (updated, revision) if r.structure_pending])
            insert_edges(cur, [edge])
            text.index(cur, [m.id])
        self.vectors_changed([m.id, revision.memory.id])

    def delete(self, ids: Sequence[str], *, erase: bool = False) -> list[str]:
        with self.transaction() as cur:
            found = {r[0] for r in cur.execute("SELECT id FROM memories WHERE id = ANY(%s)", (list(ids),))}
            existing = [i for i in dict.fromkeys(ids) if i in found]
            around = text.neighbourhood(cur, existing)
            text.remove(cur, existing)
            cur.execute("DELETE FROM memories WHERE id = ANY(%s)", (existing,))
            text.refresh_windows(cur, around - set(existing))
        self.vectors_changed(deleted=existing, erase=erase)
        return existing

    def record_access(self, ids: Sequence[str], when: datetime) -> None:
        """One atomic UPDATE per memory: concurrent recalls on any replica never lose a count. The rows are locked
        in id order first: an UPDATE ... FROM locks them in its join's order, so two recalls of the same memories on
        two replicas could each hold a row the other waits for (a deadlock the server breaks by failing one)."""
        if not ids:
            return
        with self.transaction(counted=False, durable=False) as cur:  # bookkeeping: see `transaction`
            cur.execute("SELECT id FROM memories WHERE id = ANY(%s) ORDER BY id FOR UPDATE", (sorted(set(ids)),))
            cur.execute(
                "UPDATE memories SET access_count = access_count + c.n, last_accessed_at = %s"
                " FROM (SELECT i, count(*) AS n FROM unnest(%s::text[]) AS i GROUP BY i) AS c WHERE id = c.i",
                (to_micros(when), list(ids)),
            )

    def set_importances(self, values: Sequence[tuple[str, float]]) -> None:
        with self.transaction() as cur:
            cur.executemany("UPDATE memories SET importance = %s WHERE id = %s", [(v, i) for i, v in values])

    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]:
        return {r[0]: row_to_memory(r) for r in self._query_ids(f"SELECT {MEMORY_COLUMNS} FROM memories", ids)}

    def existing(self, ids: Iterable[str]) -> set[str]:
        return {r[0] for r in self._query_ids("SELECT id FROM memories", list(ids))}

    def ids_matching(self, fragment: str, limit: int = 10) -> list[str]:
        text_ = fragment.upper()
        if not text_ or any(c in text_ for c in "%_\\"):
            return []
        rows = self._query("SELECT id FROM memories WHERE id LIKE %s OR id LIKE %s ORDER BY id LIMIT %s",
                           (text_ + "%", "%" + text_, limit))
        return [r[0] for r in rows]

    def list_memories(self, *, entity_id: str | None = None, kind: MemoryKind | None = None,
                      start: datetime | None = None, end: datetime | None = None,
                      min_importance: float | None = None, include_revisions: bool = True, limit: int = 100,
                      offset: int = 0, contains: str | None = None) -> tuple[list[Memory], int]:
        clauses: list[str] = []
        params: list[Any] = []
        for clause, value in (("entity_id = %s", entity_id), ("kind = %s", kind.value if kind else None),
                              ("created_at >= %s", to_micros(start) if start else None),
                              ("created_at <= %s", to_micros(end) if end else None),
                              ("importance >= %s", min_importance)):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        if contains:
            # SQLite's LIKE ignores the case of ASCII letters; ILIKE does so here.
            clauses.append("content ILIKE %s ESCAPE '\\'")
            params.append("%" + re.sub(r"([\\%_])", r"\\\1", contains) + "%")
        if not include_revisions:
            clauses.append("kind != %s")
            params.append(MemoryKind.REVISION.value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._query(
            f"SELECT {MEMORY_COLUMNS} FROM memories {where} ORDER BY created_at DESC, id DESC LIMIT %s OFFSET %s",
            (*params, limit, offset),
        )
        total = self._query(f"SELECT count(*) FROM memories {where}", params)[0][0]
        return [row_to_memory(r) for r in rows], int(total)

    def ids_of_kind(self, kind: MemoryKind) -> list[str]:
        return [r[0] for r in self._query("SELECT id FROM memories WHERE kind = %s", (MemoryKind(kind).value,))]

    def ids_of_entity(self, entity_id: str) -> list[str]:
        return [r[0] for r in self._query("SELECT id FROM memories WHERE entity_id = %s", (entity_id,))]

    def count(self) -> int:
        return int(self._query("SELECT count(*) FROM memories")[0][0])

    def decay_inputs(self, *, entity_id: str | None = None, kind: MemoryKind | None = None,
                     accessed_before: datetime | None = None, access_count_below: int | None = None
                     ) -> list[DecayInputs]:
        where, params = ["kind = %s" if kind is not None else "kind != 'revision'"], list[Any]()
        if kind is not None:
            params.append(MemoryKind(kind).value)
        for clause, value in (("entity_id = %s", entity_id),
                              ("coalesce(last_accessed_at, created_at) < %s",
                               to_micros(accessed_before) if accessed_before is not None else None),
                              ("access_count < %s", access_count_below)):
            if value is not None:
                where.append(clause)
                params.append(value)
        rows = self._query("SELECT id, importance, created_at, last_accessed_at, access_count FROM memories WHERE "
                           + " AND ".join(where), params)
        return [DecayInputs(r[0], r[1], from_micros(r[2]), from_micros(r[3]), r[4]) for r in rows]  # type: ignore[arg-type]

    def count_entities(self) -> int:
        return int(self._query("SELECT count(DISTINCT entity_id) FROM memories WHERE entity_id IS NOT NULL")[0][0])

    def ingested_propositions(self) -> list[tuple[str, str, int, dict[str, Any], np.ndarray, float]]:
        rows = self._query(
            "SELECT id, entity_id, created_at, context, embedding, importance FROM memories"
            " WHERE kind = 'proposition' AND entity_id IS NOT NULL"
        )
        return [(r[0], r[1], r[2], json.loads(r[3]), np.frombuffer(r[4], dtype=np.float32), r[5]) for r in rows]


class EdgeTable(PostgresConnection):
    """Edges (`EdgeStorage`)."""

    def add_edges(self, edges: Sequence[Edge]) -> None:
        with self.transaction() as cur:
            insert_edges(cur, edges)
            refresh_windows(cur, edges)

    def _edges(self, where: str = "", params: Sequence[Any] = ()) -> list[Edge]:
        types = {t.value: t for t in EdgeType}
        rows = self._query(f"SELECT source, target, type, confidence, attrs FROM edges {where}", params)
        return [Edge(r[0], r[1], types.get(r[2]) or EdgeType(r[2]), r[3], {} if r[4] == "{}" else json.loads(r[4]))
                for r in rows]

    def edges(self) -> list[Edge]:
        return self._edges()

    def edges_of(self, memory_id: str) -> list[Edge]:
        return self._edges("WHERE source = %s OR target = %s", (memory_id, memory_id))

    def edges_among(self, ids: Sequence[str]) -> list[Edge]:
        wanted = sorted(set(ids))
        found = self._edges("WHERE source = ANY(%s) AND target = ANY(%s)", (wanted, wanted))
        return sorted(found, key=lambda e: (e.source, e.target, e.type.value))

    def ids_with_revisions(self, ids: Sequence[str]) -> list[str]:
        result, frontier = list(dict.fromkeys(ids)), list(ids)
        seen = set(result)
        while frontier:
            rows = self._query("SELECT target FROM edges WHERE type = %s AND source = ANY(%s)",
                               (EdgeType.REVISED_FROM.value, frontier))
            frontier = [r[0] for r in rows if r[0] not in seen]
            seen.update(frontier)
            result.extend(frontier)
        return result

    def count_edges(self) -> int:
        return int(self._query("SELECT count(*) FROM edges")[0][0])

    def count_edges_by_type(self, origin: str) -> dict[str, int]:
        rows = self._query("SELECT type, count(*) FROM edges WHERE attrs::jsonb ->> 'origin' = %s GROUP BY type",
                           (origin,))
        return {r[0]: int(r[1]) for r in rows}

    def replace_derived_edges(self, origin: str, edges: Sequence[Edge], also: AlsoWrite | None = None) -> None:
        with self.transaction() as cur:
            removed = [
                Edge(r[0], r[1], EdgeType.FOLLOWED_BY, 1.0, {})
                for r in cur.execute("SELECT source, target FROM edges WHERE attrs::jsonb ->> 'origin' = %s"
                                     " AND type = %s", (origin, EdgeType.FOLLOWED_BY.value)).fetchall()
            ]
            cur.execute("DELETE FROM edges WHERE attrs::jsonb ->> 'origin' = %s", (origin,))
            cur.executemany(
                "INSERT INTO edges (source, target, type, confidence, attrs) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT DO NOTHING", [edge_params(e) for e in edges],
            )
            refresh_windows(cur, [*removed, *edges])
            write_also(cur, also)

    def followed_by_neighbours(self, ids: Sequence[str]) -> dict[str, set[str]]:
        with self._pool.connection() as conn:
            return text.followed_by(conn.cursor(), ids)
