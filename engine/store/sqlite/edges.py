"""The edges table: typed, weighted links between memories (followed_by edges also shape the text windows)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from engine.models import Edge, EdgeType
from engine.store.rows import AlsoWrite
from engine.store.sqlite import fulltext
from engine.store.sqlite.bookkeeping import write_also
from engine.store.sqlite.connection import SqliteConnection, chunks


class EdgeTable(SqliteConnection):
    """Edges: added with their memories or alone, read whole (the graph index) or around some memories."""

    def add_edges(self, edges: Sequence[Edge]) -> None:
        with self.transaction() as cur:
            insert_edges(cur, edges)
            refresh_windows(cur, edges)

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
        for chunk in chunks(list(wanted), 250):
            marks = ",".join("?" * len(chunk))
            rows = self._query(
                f"SELECT source, target, type, confidence, attrs FROM edges WHERE source IN ({marks})", chunk
            )
            for r in rows:
                if r[1] in wanted:
                    found[(r[0], r[1], r[2])] = Edge(r[0], r[1], EdgeType(r[2]), r[3], json.loads(r[4]))
        return [found[k] for k in sorted(found)]

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

    def count_edges(self) -> int:
        return int(self._query("SELECT count(*) FROM edges")[0][0])

    def count_edges_by_type(self, origin: str) -> dict[str, int]:
        """Edges whose `attrs.origin` is `origin` (derived by ingestion), counted by type."""
        rows = self._query(
            "SELECT type, count(*) FROM edges WHERE json_extract(attrs, '$.origin') = ? GROUP BY type", (origin,)
        )
        return {r[0]: int(r[1]) for r in rows}

    def replace_derived_edges(
        self, origin: str, edges: Sequence[Edge], also: AlsoWrite | None = None
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
                [edge_params(e) for e in edges],
            )
            refresh_windows(cur, [*removed, *edges])  # windows around edges that went or came
            write_also(cur, also)

    def followed_by_neighbours(self, ids: Sequence[str]) -> dict[str, set[str]]:
        """Both directions of the followed_by edges touching the given memories."""
        with self._lock:
            return fulltext.followed_by(self._conn.cursor(), ids)


def edge_params(e: Edge) -> tuple[Any, ...]:
    # Most edges carry no attributes: "{}" without a json.dumps call each (bulk writes add thousands).
    return (e.source, e.target, e.type.value, e.confidence, json.dumps(e.attrs, sort_keys=True) if e.attrs else "{}")


def insert_edges(cur: sqlite3.Cursor, edges: Sequence[Edge]) -> None:
    cur.executemany(
        "INSERT OR REPLACE INTO edges (source, target, type, confidence, attrs) VALUES (?, ?, ?, ?, ?)",
        [edge_params(e) for e in edges],
    )


def refresh_windows(cur: sqlite3.Cursor, edges: Sequence[Edge]) -> None:
    """New followed_by edges change the windows around both ends."""
    ends = {i for e in edges if e.type == EdgeType.FOLLOWED_BY for i in (e.source, e.target)}
    fulltext.refresh_around(cur, sorted(ends))
