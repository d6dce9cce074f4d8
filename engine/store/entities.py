"""The entity registry's tables in the record store: entity id, display name, type, mention count, aliases.

Every `entity_id` a user gives (recall, list, forget) is resolved here: an id that memories use is taken
as is; otherwise a registry id, an alias or a unique prefix resolves, and an ambiguous name is an error
listing the candidates. Ingestion (engine/ingest/entities.py) decides which entities exist.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.errors import AmbiguousEntityError
from engine.names import normalise
from engine.store.interface import Storage

_TABLES = """
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
"""



@dataclass
class EntityRecord:
    id: str
    name: str
    type: str
    mentions: int = 0
    aliases: set[str] = field(default_factory=set)


class EntityRegistry:
    """The registry's tables in the record store: entity id, display name, type, mention count, aliases."""

    def __init__(self, store: Storage) -> None:
        self.store = store

    def ensure_tables(self) -> None:
        self.store.ensure_tables(_TABLES)

    def exists(self) -> bool:
        rows = self.store.read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entity_aliases'")
        return bool(rows)

    def load(self) -> list[EntityRecord]:
        if not self.exists():
            return []
        records = {r[0]: EntityRecord(r[0], r[1], r[2], r[3]) for r in
                   self.store.read("SELECT id, name, type, mentions FROM entities")}
        for alias, entity_id in self.store.read("SELECT alias, entity_id FROM entity_aliases"):
            if entity_id in records:
                records[entity_id].aliases.add(alias)
        return list(records.values())

    @staticmethod
    def save(cur: sqlite3.Cursor, records: Iterable[tuple[EntityRecord, Iterable[str]]]) -> None:
        """Upsert entities with their aliases, in the caller's transaction (it commits with the memories)."""
        for r, aliases in records:
            cur.execute(
                "INSERT INTO entities (id, name, type, mentions) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE"
                " SET name = excluded.name, type = excluded.type",
                (r.id, r.name, r.type, r.mentions),
            )
            cur.executemany("INSERT OR IGNORE INTO entity_aliases (alias, entity_id) VALUES (?, ?)",
                            [(a, r.id) for a in sorted(aliases)])

    @staticmethod
    def refresh(cur: sqlite3.Cursor, mentions: Counter[str]) -> None:
        """Set mention counts and drop entities nothing refers to any more (after documents were forgotten)."""
        cur.execute("UPDATE entities SET mentions = 0")
        cur.executemany("UPDATE entities SET mentions = ? WHERE id = ?", [(n, e) for e, n in mentions.items()])
        cur.execute(
            "DELETE FROM entities WHERE mentions = 0 AND id NOT IN"
            " (SELECT DISTINCT entity_id FROM memories WHERE entity_id IS NOT NULL)"
        )

    def purge_unreferenced(self) -> int:
        """Delete entities (and their aliases) that no memory is about and no indexed memory mentions: after
        a forget, a name must not outlive the last memory that carried it. Returns how many went."""
        if not self.exists():
            return 0
        ledger = bool(self.store.read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ingested'"))
        mentioned = (
            " UNION SELECT j.value FROM ingested, json_each(ingested.analysis, '$.entities') AS j" if ledger else ""
        )
        keep = f"SELECT entity_id FROM memories WHERE entity_id IS NOT NULL{mentioned}"
        # Not counted in the store's version: the registry is nothing recall's caches hold (memories keep their
        # entity ids), so a forget's candidate table is followed, not rebuilt.
        with self.store.transaction(counted=False) as cur:
            cur.execute(f"DELETE FROM entity_aliases WHERE entity_id NOT IN ({keep})")
            cur.execute(f"DELETE FROM entities WHERE id NOT IN ({keep})")
            return int(cur.rowcount)

    def count(self) -> int:
        return int(self.store.read("SELECT count(*) FROM entities")[0][0]) if self.exists() else 0

    def candidates(self, query: str) -> list[str]:
        """Entity ids an alias or prefix could mean (exact alias matches first)."""
        if not self.exists():
            return []
        key = normalise(query)
        if not key:
            return []
        exact = {r[0] for r in self.store.read(
            "SELECT DISTINCT entity_id FROM entity_aliases WHERE alias IN (?, ?)", (key, query.strip().lower()))}
        if exact:
            return sorted(exact)
        if len(key) < 2:
            return []
        pattern = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self.store.read(
            "SELECT id FROM entities WHERE id LIKE ? ESCAPE '\\'"
            " UNION SELECT entity_id FROM entity_aliases WHERE alias LIKE ? ESCAPE '\\'",
            (pattern, pattern),
        )
        return sorted({r[0] for r in rows})

    def resolve(self, query: str) -> str:
        """The entity id a user means: an id used by memories as is, else a registry id, alias or unique
        prefix; a name that matches nothing is returned unchanged (it may simply have no memories)."""
        raw = query.strip()
        if not raw or not self.exists():
            return raw
        if self.store.read("SELECT 1 FROM memories WHERE entity_id = ? LIMIT 1", (raw,)):
            return raw
        key = normalise(raw)
        if self.store.read("SELECT 1 FROM entities WHERE id = ?", (key,)):
            return key
        found = self.candidates(raw)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            described = self.describe(found[:12])
            more = f" and {len(found) - 12} more" if len(found) > 12 else ""
            raise AmbiguousEntityError(
                f"entity {query!r} is ambiguous; it could be {', '.join(described)}{more} (give more of the name)"
            )
        return raw

    def describe(self, ids: list[str]) -> list[str]:
        marks = ",".join("?" * len(ids))
        types = dict(self.store.read(f"SELECT id, type FROM entities WHERE id IN ({marks})", ids))
        return [f"{i!r} ({types.get(i, 'entity')})" for i in ids]
