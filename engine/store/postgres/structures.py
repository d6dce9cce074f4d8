"""Relational structures and their pending marks in PostgreSQL (`StructureStorage`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.store.postgres.connection import PostgresConnection
from engine.store.rows import MEMORY_COLUMNS, MemoryRecord, row_to_memory

# Memories whose structure another extractor version wrote (IS DISTINCT FROM the version, given twice), as three
# ranges of the `memories_structure_version` index: a UNION ALL lets the planner search it for each part, where for
# IS DISTINCT FROM it reads every row's structure. (jsonb orders every other type, and JSON null, apart from a number.)
_VERSION = "((structure::jsonb) -> 'version')"
STALE = " UNION ALL ".join(f"SELECT id, content FROM memories WHERE {_VERSION} {test}"
                           for test in ("IS NULL", "< to_jsonb(%s::int)", "> to_jsonb(%s::int)"))


class StructureTable(PostgresConnection):
    def get_record(self, memory_id: str) -> MemoryRecord | None:
        rows = self._query(
            f"SELECT {MEMORY_COLUMNS}, embedding, structure,"
            " EXISTS (SELECT 1 FROM pending_structures p WHERE p.id = m.id),"
            " EXISTS (SELECT 1 FROM pending_checks c WHERE c.id = m.id) FROM memories m WHERE id = %s",
            (memory_id,),
        )
        if not rows:
            return None
        r = rows[0]
        return MemoryRecord(row_to_memory(r), np.frombuffer(r[10], dtype=np.float32), json.loads(r[11]), bool(r[12]),
                            bool(r[13]))

    def structures(self) -> list[tuple[str, dict[str, Any]]]:
        return [(r[0], json.loads(r[1])) for r in self._query("SELECT id, structure FROM memories")]

    def features(self) -> list[tuple[str, list[str]]]:
        rows = self._query("SELECT id, structure::jsonb -> 'features' FROM memories")
        return [(r[0], r[1] if isinstance(r[1], list) else []) for r in rows]

    def structure_texts(self, ids: Sequence[str]) -> dict[str, str]:
        return dict(self._query_ids("SELECT id, structure FROM memories", ids))

    def stale_structures(self, version: int) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self._query(STALE, (version, version))]

    def set_structures(self, structures: Sequence[tuple[str, str, dict[str, Any]]], *, pending_only: bool = False
                       ) -> list[str]:
        written: list[str] = []
        guard = " AND id IN (SELECT id FROM pending_structures)" if pending_only else ""
        with self.transaction() as cur:
            for memory_id, content, structure in structures:
                cur.execute(f"UPDATE memories SET structure = %s WHERE id = %s AND content = %s{guard}",
                            (json.dumps(structure, sort_keys=True), memory_id, content))
                if cur.rowcount:
                    written.append(memory_id)
            cur.execute("DELETE FROM pending_structures WHERE id = ANY(%s)", (written,))
        return written

    def pending_structures(self, limit: int) -> list[tuple[str, str]]:
        rows = self._query("SELECT p.id, m.content FROM pending_structures p JOIN memories m ON m.id = p.id"
                           " ORDER BY p.id LIMIT %s", (limit,))
        return [(r[0], r[1]) for r in rows]

    def count_pending_structures(self) -> int:
        return int(self._query("SELECT count(*) FROM pending_structures")[0][0])

    def pending_structure_ids(self) -> set[str]:
        return {r[0] for r in self._query("SELECT id FROM pending_structures")}

    def plots(self) -> list[tuple[str, dict[str, Any]]]:
        rows = self._query("SELECT id, (structure::jsonb) -> 'plot' FROM memories"
                           " WHERE ((structure::jsonb) -> 'plot') IS NOT NULL")  # (the `memories_plots` index)
        return [(r[0], r[1]) for r in rows if r[1] is not None]

    def extracted_structures(self, ids: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
        rows = self._query(
            "SELECT id, structure FROM memories WHERE id = ANY(%s)"
            " AND id NOT IN (SELECT id FROM pending_structures WHERE id = ANY(%s))", (list(ids), list(ids))
        )
        found = {r[0]: r[1] for r in rows}
        return [(i, json.loads(found[i])) for i in ids if i in found]
