"""Relational structures stored with each memory, and the pending marks of those not extracted yet.

A read-only store keeps structures it extracts for its pending memories in memory (`_filled`), since the
file cannot be written.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.store.rows import MEMORY_COLUMNS, MemoryRecord, row_to_memory
from engine.store.sqlite.connection import PLOTTED, STRUCTURE_VERSION, SqliteConnection

# Memories whose structure another extractor version wrote (`IS NOT ?`, the version twice), as three ranges of the
# version index (connection.STRUCTURE_VERSIONS): SQLite searches the index for each part of a UNION ALL, where for
# IS NOT, or an OR of the three, it reads every row's structure.
STALE = " UNION ALL ".join(f"SELECT id, content FROM memories WHERE {STRUCTURE_VERSION} {test}"
                           for test in ("IS NULL", "< ?", "> ?"))


class StructureTable(SqliteConnection):
    """Structures (what analogical recall compares) and their pending marks."""

    def get_record(self, memory_id: str) -> MemoryRecord | None:
        rows = self._query(f"SELECT {MEMORY_COLUMNS}, embedding, structure FROM memories WHERE id = ?", (memory_id,))
        if not rows:
            return None
        row = rows[0]
        structure = self._filled.get(memory_id, row[11])
        pending = memory_id not in self._filled and bool(self._pending_of([memory_id]))
        try:
            check = bool(self._query("SELECT 1 FROM pending_checks WHERE id = ?", (memory_id,)))
        except sqlite3.OperationalError:  # a read-only store written before checks could be pending
            check = False
        return MemoryRecord(row_to_memory(row), np.frombuffer(row[10], dtype=np.float32), json.loads(structure),
                            pending, check)

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
        found = [(r[0], string_list(r[1])) for r in rows]
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
            rows = self._query(STALE, (version, version))
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

    def plots(self) -> list[tuple[str, dict[str, Any]]]:
        """(id, structure["plot"]) of every memory whose structure keeps one, found through a partial index
        (`PLOTTED`): the rows without one (most, in a store of short facts) are not read."""
        try:
            rows = self._query(f"SELECT id, json_extract(structure, '$.plot') FROM memories WHERE {PLOTTED}")
        except sqlite3.OperationalError:  # an SQLite built without JSON functions
            return [(i, s["plot"]) for i, s in self.structures() if s.get("plot") is not None]
        found = [(r[0], json.loads(r[1])) for r in rows if r[0] not in self._filled]
        filled = ((i, json.loads(text).get("plot")) for i, text in self._filled.items())
        return found + [(i, plot) for i, plot in filled if plot is not None]

    def extracted_structures(self, ids: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
        """(id, structure) of those of the memories whose structure is extracted."""
        pending = self._pending_of(ids) - self._filled.keys()
        found = self.structure_texts([i for i in ids if i not in pending])
        return [(i, json.loads(text)) for i, text in found.items()]


def string_list(text: str | None) -> list[str]:
    """A JSON list of strings as SQLite prints it (`["a","b"]`, minified). Plain ones are split directly,
    ten times faster than json.loads on 100,000 rows; anything escaped or unusual goes through json.loads."""
    if not text or text == "[]":
        return []
    if "\\" in text or not (text.startswith('["') and text.endswith('"]')):
        value = json.loads(text)
        return value if isinstance(value, list) else []
    return text[2:-2].split('","')
