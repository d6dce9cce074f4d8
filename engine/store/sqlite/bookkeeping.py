"""The tables other modules keep in the record store, SQLite's side: the ingestion ledger, the entity
registry and the replies kept under idempotency keys (what each is for: engine/store/ledger.py, entities.py,
replies.py). Their schema is part of the store's (connection.py); a read-only store written before a table
existed reads as if it were empty."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.store.rows import (
    COPIED_TABLES,
    COUNTED_TABLES,
    AlsoWrite,
    EntityRecord,
    LedgerRow,
    LinkRow,
    Tombstone,
    from_micros,
    to_micros,
)
from engine.store.sqlite.connection import SqliteConnection, chunks

DOCUMENT, PROPOSITION, MESSAGE = "document", "proposition", "message"


class Bookkeeping(SqliteConnection):
    """Ledger, entity registry and replies, read and written through typed methods."""

    def _has_table(self, name: str) -> bool:
        return bool(self._query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    # --- the ledger ----------------------------------------------------------------------------------------
    def ledger_sources(self) -> set[str]:
        if not self._has_table("ingested"):
            return set()
        return {r[0] for r in self._query("SELECT DISTINCT source FROM ingested")}

    def ledger_documents(self) -> dict[str, tuple[str, str]]:
        if not self._has_table("ingested"):
            return {}
        rows = self._query("SELECT source, memory_id, content_hash FROM ingested WHERE role = ?", (DOCUMENT,))
        return {r[0]: (r[1], r[2]) for r in rows}

    def ledger_hashes(self, source: str, role: str) -> dict[str, str]:
        if not self._has_table("ingested"):
            return {}
        rows = self._query(
            "SELECT content_hash, memory_id FROM ingested WHERE source = ? AND role = ?", (source, role)
        )
        return {r[0]: r[1] for r in rows}

    def ledger_conversations(self) -> dict[str, str]:
        if not self._has_table("ingested"):
            return {}
        rows = self._query(
            "SELECT source, max(json_extract(analysis, '$.stamp')) FROM ingested WHERE role = ? GROUP BY source",
            (MESSAGE,),
        )
        return {r[0]: str(r[1] or "") for r in rows}

    def ledger_role_counts(self, sources: Sequence[str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        if not self._has_table("ingested"):
            return counts
        for chunk in chunks(list(sources), 500):
            marks = ",".join("?" * len(chunk))
            for role, n in self._query(
                f"SELECT role, count(*) FROM ingested WHERE source IN ({marks}) GROUP BY role", chunk
            ):
                counts[role] = counts.get(role, 0) + int(n)
        return counts

    def ledger_derived_from(self, memory_ids: Sequence[str]) -> list[str]:
        if not self._has_table("ingested"):
            return []
        found: list[str] = []
        for chunk in chunks(list(memory_ids), 500):
            marks = ",".join("?" * len(chunk))
            found.extend(r[0] for r in self._query(
                "SELECT p.memory_id FROM ingested d JOIN ingested p ON p.source = d.source AND p.role = ?"
                f" WHERE d.role = ? AND d.memory_id IN ({marks})", (PROPOSITION, DOCUMENT, *chunk)
            ))
        return found

    def ledger_memory_ids(self, sources: Iterable[str]) -> list[str]:
        if not self._has_table("ingested"):
            return []
        found: list[str] = []
        for source in sources:
            found.extend(r[0] for r in self._query("SELECT memory_id FROM ingested WHERE source = ?", (source,)))
        return found

    def ledger_count(self, role: str, sources: Sequence[str]) -> int:
        if not self._has_table("ingested"):
            return 0
        total = 0
        for chunk in chunks(list(sources), 500):
            marks = ",".join("?" * len(chunk))
            total += int(self._query(
                f"SELECT count(*) FROM ingested WHERE role = ? AND source IN ({marks})", (role, *chunk)
            )[0][0])
        return total

    def ledger_rows(self, memory_ids: Sequence[str]) -> list[LedgerRow]:
        if not self._has_table("ingested"):
            return []
        rows = self._query_ids("SELECT memory_id, source, role, position, content_hash, analysis FROM ingested",
                               memory_ids, column="memory_id")
        return [LedgerRow(r[0], r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows]

    def ledger_link_rows(self) -> list[LinkRow]:
        if not self._has_table("ingested"):
            return []
        rows = self._query(
            "SELECT i.memory_id, i.source, i.role, i.position, i.analysis, m.entity_id, m.created_at"
            " FROM ingested i JOIN memories m ON m.id = i.memory_id ORDER BY i.source, i.position"
        )
        return [LinkRow(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6]) for r in rows]

    # --- the entity registry -----------------------------------------------------------------------------
    def entity_records(self) -> list[EntityRecord]:
        if not self._has_table("entity_aliases"):
            return []
        records = {r[0]: EntityRecord(r[0], r[1], r[2], r[3]) for r in
                   self._query("SELECT id, name, type, mentions FROM entities")}
        for alias, entity_id in self._query("SELECT alias, entity_id FROM entity_aliases"):
            if entity_id in records:
                records[entity_id].aliases.add(alias)
        return list(records.values())

    def save_entities(self, records: Sequence[tuple[EntityRecord, Sequence[str]]]) -> None:
        with self.transaction() as cur:
            save_entities(cur, records)

    def purge_unreferenced_entities(self) -> int:
        if not self._has_table("entity_aliases"):
            return 0
        mentioned = (
            " UNION SELECT j.value FROM ingested, json_each(ingested.analysis, '$.entities') AS j"
            if self._has_table("ingested") else ""
        )
        keep = f"SELECT entity_id FROM memories WHERE entity_id IS NOT NULL{mentioned}"
        # Not counted in the store's version: the registry is nothing recall's caches hold.
        with self.transaction(counted=False) as cur:
            cur.execute(f"DELETE FROM entity_aliases WHERE entity_id NOT IN ({keep})")
            cur.execute(f"DELETE FROM entities WHERE id NOT IN ({keep})")
            return int(cur.rowcount)

    def count_registered_entities(self) -> int:
        return int(self._query("SELECT count(*) FROM entities")[0][0]) if self._has_table("entities") else 0

    def entities_with_alias(self, aliases: Sequence[str]) -> set[str]:
        if not self._has_table("entity_aliases") or not aliases:
            return set()
        marks = ",".join("?" * len(aliases))
        return {r[0] for r in self._query(
            f"SELECT DISTINCT entity_id FROM entity_aliases WHERE alias IN ({marks})", tuple(aliases))}

    def entities_with_prefix(self, prefix: str) -> set[str]:
        if not self._has_table("entity_aliases"):
            return set()
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._query(
            "SELECT id FROM entities WHERE id LIKE ? ESCAPE '\\'"
            " UNION SELECT entity_id FROM entity_aliases WHERE alias LIKE ? ESCAPE '\\'",
            (pattern, pattern),
        )
        return {r[0] for r in rows}

    def entity_registered(self, entity_id: str) -> bool:
        return self._has_table("entities") and bool(self._query("SELECT 1 FROM entities WHERE id = ?", (entity_id,)))

    def entity_has_memories(self, entity_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM memories WHERE entity_id = ? LIMIT 1", (entity_id,)))

    def entity_types(self, ids: Sequence[str]) -> dict[str, str]:
        if not self._has_table("entities") or not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return dict(self._query(f"SELECT id, type FROM entities WHERE id IN ({marks})", tuple(ids)))

    # --- replies under idempotency keys --------------------------------------------------------------------
    def get_reply(self, key: str) -> tuple[str, str] | None:
        if not self._has_table("replies"):
            return None
        rows = self._query("SELECT operation, reply FROM replies WHERE key = ?", (key,))
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def put_reply(self, key: str, operation: str, reply: str, keep: int) -> None:
        with self.transaction(counted=False) as cur:
            cur.execute("INSERT OR REPLACE INTO replies (key, operation, reply, stored_at) VALUES (?, ?, ?, ?)",
                        (key, operation, reply, time.time()))
            cur.execute("DELETE FROM replies WHERE key NOT IN (SELECT key FROM replies ORDER BY stored_at DESC "
                        "LIMIT ?)", (keep,))

    # --- tombstones ------------------------------------------------------------------------------------------
    def add_tombstones(self, stones: Sequence[Tombstone]) -> None:
        with self.transaction(counted=False) as cur:
            cur.executemany(
                "INSERT INTO tombstones (memory_id, forgotten_at, content_sha256, reason) VALUES (?, ?, ?, ?)",
                [(t.memory_id, to_micros(t.forgotten_at), t.content_sha256, t.reason) for t in stones],
            )

    def tombstones(self, limit: int) -> list[Tombstone]:
        if not self._has_table("tombstones"):
            return []
        rows = self._query("SELECT memory_id, forgotten_at, content_sha256, reason FROM tombstones "
                           "ORDER BY forgotten_at DESC, rowid DESC LIMIT ?", (limit,))
        return [Tombstone(r[0], from_micros(r[1]), r[2], r[3]) for r in rows]  # type: ignore[arg-type]

    # --- a migration's copy (`CopyStorage`) ------------------------------------------------------------------
    def table_rows(self, table: str) -> list[tuple[Any, ...]]:
        columns, _ = COPIED_TABLES[table]
        if not self._has_table(table):
            return []
        return [tuple(r) for r in self._query(f"SELECT {', '.join(columns)} FROM {table}")]

    def add_table_rows(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        columns, key = COPIED_TABLES[table]
        same = " AND ".join(f"{c} = ?" for c in key)
        with self.transaction(counted=False) as cur:
            cur.executemany(
                f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) SELECT {', '.join('?' * len(columns))}"
                f" WHERE NOT EXISTS (SELECT 1 FROM {table} WHERE {same})",
                [(*row, *(row[columns.index(c)] for c in key)) for row in rows],
            )

    def row_counts(self) -> dict[str, int]:
        return {t: int(self._query(f"SELECT count(*) FROM {t}")[0][0]) if self._has_table(t) else 0
                for t in COUNTED_TABLES}


def write_also(cur: sqlite3.Cursor, also: AlsoWrite | None) -> None:
    """The rows that commit with a write of memories or edges (see `AlsoWrite`), in its transaction."""
    if also is None:
        return
    cur.executemany(
        "INSERT OR REPLACE INTO ingested (memory_id, source, role, position, content_hash, analysis)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [r.params() for r in also.ledger],
    )
    save_entities(cur, also.entities)
    if also.mentions is not None:
        refresh_mentions(cur, also.mentions)


def save_entities(cur: sqlite3.Cursor, records: Iterable[tuple[EntityRecord, Iterable[str]]]) -> None:
    """Upsert entities with their aliases, in the caller's transaction."""
    for r, aliases in records:
        cur.execute(
            "INSERT INTO entities (id, name, type, mentions) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE"
            " SET name = excluded.name, type = excluded.type",
            (r.id, r.name, r.type, r.mentions),
        )
        cur.executemany("INSERT OR IGNORE INTO entity_aliases (alias, entity_id) VALUES (?, ?)",
                        [(a, r.id) for a in sorted(aliases)])


def refresh_mentions(cur: sqlite3.Cursor, mentions: Mapping[str, int]) -> None:
    """Set mention counts and drop entities nothing refers to any more (after documents were forgotten)."""
    cur.execute("UPDATE entities SET mentions = 0")
    cur.executemany("UPDATE entities SET mentions = ? WHERE id = ?", [(n, e) for e, n in mentions.items()])
    cur.execute(
        "DELETE FROM entities WHERE mentions = 0 AND id NOT IN"
        " (SELECT DISTINCT entity_id FROM memories WHERE entity_id IS NOT NULL)"
    )
