"""The entity registry in the record store: entity id, display name, type, mention count, aliases.

Every `entity_id` a user gives (recall, list, forget) is resolved here: an id that memories use is taken
as is; otherwise a registry id, an alias or a unique prefix resolves, and an ambiguous name is an error
listing the candidates. Ingestion (engine/ingest/entities.py) decides which entities exist; its entities
are written in the same transaction as their memories (`AlsoWrite.entities`) or by `save`.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.errors import AmbiguousEntityError
from engine.names import normalise
from engine.store.interface import Storage
from engine.store.rows import EntityRecord

__all__ = ["EntityRecord", "EntityRegistry"]


class EntityRegistry:
    """The registry's rows in the record store, read and resolved."""

    def __init__(self, store: Storage) -> None:
        self.store = store

    def load(self) -> list[EntityRecord]:
        return self.store.entity_records()

    def save(self, records: Iterable[tuple[EntityRecord, Iterable[str]]]) -> None:
        """Upsert entities with their aliases, in a transaction of their own."""
        self.store.save_entities([(r, tuple(a)) for r, a in records])

    def purge_unreferenced(self) -> int:
        """Delete entities (and their aliases) that no memory is about and no indexed memory mentions: after
        a forget, a name must not outlive the last memory that carried it. Returns how many went."""
        return self.store.purge_unreferenced_entities()

    def count(self) -> int:
        return self.store.count_registered_entities()

    def candidates(self, query: str) -> list[str]:
        """Entity ids an alias or prefix could mean (exact alias matches first)."""
        key = normalise(query)
        if not key:
            return []
        exact = self.store.entities_with_alias(sorted({key, query.strip().lower()}))
        if exact:
            return sorted(exact)
        if len(key) < 2:
            return []
        return sorted(self.store.entities_with_prefix(key))

    def resolve(self, query: str) -> str:
        """The entity id a user means: an id used by memories as is, else a registry id, alias or unique
        prefix; a name that matches nothing is returned unchanged (it may simply have no memories)."""
        raw = query.strip()
        if not raw:
            return raw
        if self.store.entity_has_memories(raw):
            return raw
        key = normalise(raw)
        if self.store.entity_registered(key):
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
        types = self.store.entity_types(ids)
        return [f"{i!r} ({types.get(i, 'entity')})" for i in ids]
