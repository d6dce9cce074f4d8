"""`Browser`: the reads of people browsing a store, beside recall: pages of memories (filtered, or holding a
text), a memory's earlier states, short ids, and the entities a text names. Nothing here counts an access."""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.api.requests import ListRequest
from engine.api.responses import ListResponse
from engine.errors import AmbiguousMemoryIdError, MemoryNotFoundError, ValidationError
from engine.index.derived import DerivedIndexes
from engine.models import Memory
from engine.names import normalise
from engine.store.entities import EntityRegistry
from engine.store.interface import Storage


class Browser:
    """Pages, revisions, short ids and named entities, read from the store and the timeline."""

    def __init__(self, store: Storage, indexes: DerivedIndexes, entities: EntityRegistry,
                 resolve_entity: Callable[[str], str]) -> None:
        self._store = store
        self._indexes = indexes
        self._entities = entities
        self._resolve_entity = resolve_entity

    def page(self, request: ListRequest, contains: str | None = None) -> ListResponse:
        """One page of the memories that pass the request's filters (and hold `contains`), with the total."""
        start, end = request.time_range or (None, None)
        entity = None if request.entity_id is None else self._resolve_entity(request.entity_id)
        memories, total = self._store.list_memories(
            entity_id=entity, kind=request.kind, start=start, end=end, min_importance=request.min_importance,
            include_revisions=request.include_revisions, limit=request.limit, offset=request.offset,
            contains=contains,
        )
        return ListResponse(tuple(memories), total, request.limit, request.offset)

    def revisions_of(self, memory_id: str) -> list[Memory]:
        """The earlier states of a memory (each revise keeps one as a `revision` memory), newest first."""
        if not self._store.existing([memory_id]):
            raise MemoryNotFoundError(f"no memory with id {memory_id}")
        earlier = self._store.ids_with_revisions([memory_id])[1:]
        found = self._store.get_many(earlier)
        return sorted(found.values(), key=lambda m: (m.updated_at, m.id), reverse=True)

    def entities_named_in(self, text: str) -> list[str]:
        """Entities with memories that a text names (their id or a registry alias, as whole words), in the
        order the text first names them."""
        words = f" {_plain_words(text)} "
        names: dict[str, set[str]] = {e: {_plain_words(e)} for e in self._indexes.timeline.entities()}
        for record in self._entities.load():
            if record.id in names:
                names[record.id].update(_plain_words(a) for a in record.aliases)
        found = [(words.find(f" {n} "), e) for e, forms in names.items() for n in forms if n and f" {n} " in words]
        return list(dict.fromkeys(e for _, e in sorted(found)))

    def resolve_memory_id(self, text: str) -> str:
        """The full id a short id means: an id as given, else the one memory whose id starts or ends with the
        text; AmbiguousMemoryIdError lists the candidates when several match, MemoryNotFoundError when none."""
        fragment = text.strip()
        if not fragment:
            raise ValidationError("a memory id is required")
        if self._store.existing([fragment]):
            return fragment
        matches = self._store.ids_matching(fragment, limit=6)
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise MemoryNotFoundError(f"no memory with id {fragment}")
        listed = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
        raise AmbiguousMemoryIdError(f"{fragment!r} matches several memories ({listed}): give more characters")


def _plain_words(text: str) -> str:
    """A name or text as lower-case words separated by single spaces (punctuation dropped)."""
    return " ".join(re.sub(r"[^\w ]+", " ", normalise(text)).split())
