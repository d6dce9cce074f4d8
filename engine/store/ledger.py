"""The ingestion ledger: which memories came from which document, with their content hashes.

One row per `document`, `proposition` or conversation `message` memory, in the record store's SQLite
file. Rows go away with their memory (ON DELETE CASCADE), so forgetting a memory by hand never leaves
the ledger pointing at it.
Re-indexing compares hashes here: an unchanged document is not analysed again; in a changed one,
propositions whose hash is unchanged keep their ids (and access counts).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.store.interface import Storage

_TABLES = """
CREATE TABLE IF NOT EXISTS ingested (
    memory_id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    role TEXT NOT NULL,
    position INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    analysis TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS ingested_source ON ingested (source, role);
"""
DOCUMENT = "document"
PROPOSITION = "proposition"
MESSAGE = "message"  # one turn of a conversation (a JSON chat transcript); its analysis holds the file's stamp


@dataclass(frozen=True, slots=True)
class LedgerRow:
    memory_id: str
    source: str
    role: str
    position: int
    content_hash: str
    analysis: dict[str, Any]

    def params(self) -> tuple[Any, ...]:
        return (self.memory_id, self.source, self.role, self.position, self.content_hash,
                json.dumps(self.analysis, sort_keys=True, separators=(",", ":")))


@dataclass(frozen=True, slots=True)
class LinkRow:
    """What the linker reads for one ingested memory: its ledger entry plus entity and time."""

    memory_id: str
    source: str
    role: str
    position: int
    analysis: dict[str, Any]
    entity_id: str | None
    created_at: int  # microseconds


class Ledger:
    def __init__(self, store: Storage) -> None:
        self.store = store

    def ensure_tables(self) -> None:
        self.store.ensure_tables(_TABLES)

    def sources(self) -> set[str]:
        """Every source file that still has a memory (empty before the first ingestion)."""
        if not self.store.read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ingested'"):
            return set()
        return {r[0] for r in self.store.read("SELECT DISTINCT source FROM ingested")}

    def documents(self) -> dict[str, tuple[str, str]]:
        """source -> (document memory id, content hash)."""
        rows = self.store.read("SELECT source, memory_id, content_hash FROM ingested WHERE role = ?", (DOCUMENT,))
        return {r[0]: (r[1], r[2]) for r in rows}

    def propositions(self, source: str) -> dict[str, str]:
        """content hash -> memory id of a document's propositions."""
        rows = self.store.read(
            "SELECT content_hash, memory_id FROM ingested WHERE source = ? AND role = ?", (source, PROPOSITION)
        )
        return {r[0]: r[1] for r in rows}

    def conversations(self) -> dict[str, str]:
        """source -> stamp of every conversation that still has a message."""
        rows = self.store.read(
            "SELECT source, max(json_extract(analysis, '$.stamp')) FROM ingested WHERE role = ? GROUP BY source",
            (MESSAGE,),
        )
        return {r[0]: str(r[1] or "") for r in rows}

    def messages(self, source: str) -> dict[str, str]:
        """chained content hash -> memory id of a conversation's messages."""
        rows = self.store.read(
            "SELECT content_hash, memory_id FROM ingested WHERE source = ? AND role = ?", (source, MESSAGE)
        )
        return {r[0]: r[1] for r in rows}

    def role_counts(self, sources: Sequence[str]) -> dict[str, int]:
        """How many memories of each role the given sources have."""
        counts: dict[str, int] = {}
        for start in range(0, len(sources), 500):
            chunk = list(sources[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for role, n in self.store.read(
                f"SELECT role, count(*) FROM ingested WHERE source IN ({marks}) GROUP BY role", tuple(chunk)
            ):
                counts[role] = counts.get(role, 0) + int(n)
        return counts

    def derived_from(self, memory_ids: Sequence[str]) -> list[str]:
        """The propositions indexed from the documents among `memory_ids` (what forgetting them forgets too)."""
        if not self.store.read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ingested'"):
            return []
        found: list[str] = []
        for start in range(0, len(memory_ids), 500):
            chunk = list(memory_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            found.extend(r[0] for r in self.store.read(
                "SELECT p.memory_id FROM ingested d JOIN ingested p ON p.source = d.source AND p.role = ?"
                f" WHERE d.role = ? AND d.memory_id IN ({marks})", (PROPOSITION, DOCUMENT, *chunk)
            ))
        return found

    def memory_ids(self, sources: Iterable[str]) -> list[str]:
        found: list[str] = []
        for source in sources:
            found.extend(r[0] for r in self.store.read("SELECT memory_id FROM ingested WHERE source = ?", (source,)))
        return found

    def count_propositions(self, sources: Sequence[str]) -> int:
        total = 0
        for start in range(0, len(sources), 500):
            chunk = list(sources[start : start + 500])
            marks = ",".join("?" * len(chunk))
            total += int(self.store.read(
                f"SELECT count(*) FROM ingested WHERE role = ? AND source IN ({marks})", (PROPOSITION, *chunk)
            )[0][0])
        return total

    @staticmethod
    def write(cur: sqlite3.Cursor, rows: Sequence[LedgerRow]) -> None:
        cur.executemany(
            "INSERT OR REPLACE INTO ingested (memory_id, source, role, position, content_hash, analysis)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [r.params() for r in rows],
        )

    def link_rows(self) -> list[LinkRow]:
        rows = self.store.read(
            "SELECT i.memory_id, i.source, i.role, i.position, i.analysis, m.entity_id, m.created_at"
            " FROM ingested i JOIN memories m ON m.id = i.memory_id ORDER BY i.source, i.position"
        )
        return [LinkRow(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6]) for r in rows]
