"""The ledger, entity registry and replies in PostgreSQL (`Bookkeeping`; what each is for:
engine/store/ledger.py, entities.py, replies.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from engine.store.postgres.connection import PostgresConnection
from engine.store.rows import (
    COPIED_TABLES,
    COUNTED_TABLES,
    AlsoWrite,
    EntityRecord,
    KeyDocument,
    LedgerRow,
    LinkRow,
    Tombstone,
    from_micros,
    to_micros,
)

DOCUMENT, PROPOSITION, MESSAGE = "document", "proposition", "message"
KEYS = "api_keys"  # the meta row holding the API key document
KEYS_LOCK = 0x48454244  # the advisory lock of its read-modify-write ("HEBD")


def write_also(cur: Any, also: AlsoWrite | None) -> None:
    """The rows that commit with a write of memories or edges (see `AlsoWrite`), in its transaction."""
    if also is None:
        return
    cur.executemany(
        "INSERT INTO ingested (memory_id, source, role, position, content_hash, analysis)"
        " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (memory_id) DO UPDATE SET source = excluded.source,"
        " role = excluded.role, position = excluded.position, content_hash = excluded.content_hash,"
        " analysis = excluded.analysis",
        [r.params() for r in also.ledger],
    )
    save_entities(cur, also.entities)
    if also.mentions is not None:
        cur.execute("UPDATE entities SET mentions = 0")
        cur.executemany("UPDATE entities SET mentions = %s WHERE id = %s", [(n, e) for e, n in also.mentions.items()])
        cur.execute("DELETE FROM entities WHERE mentions = 0 AND id NOT IN"
                    " (SELECT DISTINCT entity_id FROM memories WHERE entity_id IS NOT NULL)")


def save_entities(cur: Any, records: Iterable[tuple[EntityRecord, Iterable[str]]]) -> None:
    for r, aliases in records:
        cur.execute(
            "INSERT INTO entities (id, name, type, mentions) VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO UPDATE"
            " SET name = excluded.name, type = excluded.type", (r.id, r.name, r.type, r.mentions),
        )
        cur.executemany("INSERT INTO entity_aliases (alias, entity_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                        [(a, r.id) for a in sorted(aliases)])


class Bookkeeping(PostgresConnection):
    def ledger_sources(self) -> set[str]:
        return {r[0] for r in self._query("SELECT DISTINCT source FROM ingested")}

    def ledger_documents(self) -> dict[str, tuple[str, str]]:
        rows = self._query("SELECT source, memory_id, content_hash FROM ingested WHERE role = %s", (DOCUMENT,))
        return {r[0]: (r[1], r[2]) for r in rows}

    def ledger_hashes(self, source: str, role: str) -> dict[str, str]:
        rows = self._query("SELECT content_hash, memory_id FROM ingested WHERE source = %s AND role = %s",
                           (source, role))
        return {r[0]: r[1] for r in rows}

    def ledger_conversations(self) -> dict[str, str]:
        rows = self._query("SELECT source, max(analysis::jsonb ->> 'stamp') FROM ingested WHERE role = %s"
                           " GROUP BY source", (MESSAGE,))
        return {r[0]: str(r[1] or "") for r in rows}

    def ledger_role_counts(self, sources: Sequence[str]) -> dict[str, int]:
        rows = self._query("SELECT role, count(*) FROM ingested WHERE source = ANY(%s) GROUP BY role",
                           (list(sources),))
        return {r[0]: int(r[1]) for r in rows}

    def ledger_derived_from(self, memory_ids: Sequence[str]) -> list[str]:
        rows = self._query(
            "SELECT p.memory_id FROM ingested d JOIN ingested p ON p.source = d.source AND p.role = %s"
            " WHERE d.role = %s AND d.memory_id = ANY(%s)", (PROPOSITION, DOCUMENT, list(memory_ids)),
        )
        return [r[0] for r in rows]

    def ledger_memory_ids(self, sources: Iterable[str]) -> list[str]:
        found: list[str] = []
        for source in sources:
            found.extend(r[0] for r in self._query("SELECT memory_id FROM ingested WHERE source = %s", (source,)))
        return found

    def ledger_count(self, role: str, sources: Sequence[str]) -> int:
        return int(self._query("SELECT count(*) FROM ingested WHERE role = %s AND source = ANY(%s)",
                               (role, list(sources)))[0][0])

    def ledger_rows(self, memory_ids: Sequence[str]) -> list[LedgerRow]:
        rows = self._query("SELECT memory_id, source, role, position, content_hash, analysis FROM ingested"
                           " WHERE memory_id = ANY(%s)", (list(memory_ids),))
        return [LedgerRow(r[0], r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows]

    def ledger_link_rows(self) -> list[LinkRow]:
        rows = self._query(
            "SELECT i.memory_id, i.source, i.role, i.position, i.analysis, m.entity_id, m.created_at"
            " FROM ingested i JOIN memories m ON m.id = i.memory_id ORDER BY i.source, i.position"
        )
        return [LinkRow(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6]) for r in rows]

    def entity_records(self) -> list[EntityRecord]:
        records = {r[0]: EntityRecord(r[0], r[1], r[2], r[3])
                   for r in self._query("SELECT id, name, type, mentions FROM entities")}
        for alias, entity_id in self._query("SELECT alias, entity_id FROM entity_aliases"):
            if entity_id in records:
                records[entity_id].aliases.add(alias)
        return list(records.values())

    def save_entities(self, records: Sequence[tuple[EntityRecord, Sequence[str]]]) -> None:
        with self.transaction() as cur:
            save_entities(cur, records)

    def purge_unreferenced_entities(self) -> int:
        keep = ("SELECT entity_id FROM memories WHERE entity_id IS NOT NULL UNION"
                " SELECT jsonb_array_elements_text(CASE jsonb_typeof(analysis::jsonb -> 'entities')"
                " WHEN 'array' THEN analysis::jsonb -> 'entities' ELSE '[]'::jsonb END) FROM ingested")
        with self.transaction(counted=False) as cur:
            cur.execute(f"DELETE FROM entity_aliases WHERE entity_id NOT IN ({keep})")
            cur.execute(f"DELETE FROM entities WHERE id NOT IN ({keep})")
            return int(cur.rowcount)

    def count_registered_entities(self) -> int:
        return int(self._query("SELECT count(*) FROM entities")[0][0])

    def entities_with_alias(self, aliases: Sequence[str]) -> set[str]:
        return {r[0] for r in self._query("SELECT DISTINCT entity_id FROM entity_aliases WHERE alias = ANY(%s)",
                                          (list(aliases),))}

    def entities_with_prefix(self, prefix: str) -> set[str]:
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._query("SELECT id FROM entities WHERE id ILIKE %s ESCAPE '\\'"
                           " UNION SELECT entity_id FROM entity_aliases WHERE alias ILIKE %s ESCAPE '\\'",
                           (pattern, pattern))
        return {r[0] for r in rows}

    def entity_registered(self, entity_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM entities WHERE id = %s", (entity_id,)))

    def entity_has_memories(self, entity_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM memories WHERE entity_id = %s LIMIT 1", (entity_id,)))

    def entity_types(self, ids: Sequence[str]) -> dict[str, str]:
        return dict(self._query("SELECT id, type FROM entities WHERE id = ANY(%s)", (list(ids),)))

    def add_tombstones(self, stones: Sequence[Tombstone]) -> None:
        with self.transaction(counted=False) as cur:
            cur.executemany(
                "INSERT INTO tombstones (memory_id, forgotten_at, content_sha256, reason) VALUES (%s, %s, %s, %s)",
                [(t.memory_id, to_micros(t.forgotten_at), t.content_sha256, t.reason) for t in stones],
            )

    def tombstones(self, limit: int) -> list[Tombstone]:
        rows = self._query("SELECT memory_id, forgotten_at, content_sha256, reason FROM tombstones"
                           " ORDER BY forgotten_at DESC, n DESC LIMIT %s", (limit,))
        return [Tombstone(r[0], from_micros(r[1]), r[2], r[3]) for r in rows]  # type: ignore[arg-type]

    def get_reply(self, key: str) -> tuple[str, str] | None:
        rows = self._query("SELECT operation, reply FROM replies WHERE key = %s", (key,))
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def put_reply(self, key: str, operation: str, reply: str, keep: int) -> None:
        with self.transaction(counted=False) as cur:
            cur.execute("INSERT INTO replies (key, operation, reply, stored_at) VALUES (%s, %s, %s, %s)"
                        " ON CONFLICT (key) DO UPDATE SET operation = excluded.operation, reply = excluded.reply,"
                        " stored_at = excluded.stored_at", (key, operation, reply, time.time()))
            cur.execute("DELETE FROM replies WHERE key NOT IN (SELECT key FROM replies ORDER BY stored_at DESC"
                        " LIMIT %s)", (keep,))

    # --- API keys shared by every server on the database (`KeyStorage`) ----------------------------------------
    def api_keys(self) -> str | None:
        return self.get_meta(KEYS)

    @contextmanager
    def changing_api_keys(self) -> Iterator[KeyDocument]:
        with self.transaction(counted=False) as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (KEYS_LOCK,))
            row = cur.execute("SELECT value FROM meta WHERE key = %s", (KEYS,)).fetchone()
            document = KeyDocument(row[0] if row else None)
            yield document
            if document.text is not None:
                cur.execute("INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE"
                            " SET value = excluded.value", (KEYS, document.text))

    # --- a migration's copy (`CopyStorage`) ------------------------------------------------------------------
    def table_rows(self, table: str) -> list[tuple[Any, ...]]:
        columns, _ = COPIED_TABLES[table]
        return [tuple(r) for r in self._query(f"SELECT {', '.join(columns)} FROM {table}")]

    def add_table_rows(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        columns, key = COPIED_TABLES[table]
        same = " AND ".join(f"{c} = %s" for c in key)
        with self.transaction(counted=False) as cur:
            cur.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(['%s'] * len(columns))}"
                f" WHERE NOT EXISTS (SELECT 1 FROM {table} WHERE {same}) ON CONFLICT DO NOTHING",
                [(*row, *(row[columns.index(c)] for c in key)) for row in rows],
            )

    def row_counts(self) -> dict[str, int]:
        counts = self._query(" UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}" for t in COUNTED_TABLES))
        return {str(t): int(n) for t, n in counts}
