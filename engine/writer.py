"""`Writer`: the one write path, below both the facade and ingestion.

validate (done by `engine.api` parse) -> assign ids and times -> embed -> (a remember: its vectors into the
vector index) -> one transaction (the truth, embeddings included, a "structure pending" mark per memory and a
"check pending" mark per statement: structures and contradiction checks follow writes, engine/structures.py,
engine/contradictions/follow.py) -> the derived indexes. A crash after the commit is
repaired on the next open from the `vector_synced` marks, vectors upserted before a commit that never
happened are dropped then, and pending structures are extracted before anything reads structures, so an
acknowledged write is never lost and never half-visible (recall only returns ids the record store holds).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from engine import config, ids
from engine.analogy.text import StructureExtractor
from engine.api.requests import NewEdge, RememberRequest, ReviseRequest
from engine.clock import Clock
from engine.embedding import EMBED_BATCH_SIZE, Embedder
from engine.errors import EmbeddingModelMismatchError, InvalidEdgeError, MemoryNotFoundError
from engine.index.derived import DerivedIndexes
from engine.models import Edge, EdgeType, Memory, MemoryKind
from engine.store.interface import Storage
from engine.store.rows import AlsoWrite, MemoryRecord

Progress = Callable[[int, int], None]  # (done, total)
Structure = dict[str, Any] | None  # None: deferred (extracted later, see engine/structures.py)

log = logging.getLogger(__name__)


class Writer:
    """Writes memories, edges, revisions and deletes; every public method leaves store and indexes in step."""

    def __init__(
        self, store: Storage, indexes: DerivedIndexes, embedder: Embedder, extractor: StructureExtractor, clock: Clock
    ) -> None:
        self.store = store
        self.indexes = indexes
        self.embedder = embedder
        self.extractor = extractor
        self.clock = clock
        self._model_checked = False
        self._dimension: int | None = None  # the store's vector width once read or recorded: it never changes
        # Told after each commit how much deferred work it left: pending structures and checks (the idle worker's cue).
        self.after_commit: Callable[[int], None] | None = None
        # Which committed memories wait for a contradiction check (marked in the commit's transaction, checked
        # after it: engine/contradictions/follow.py); None: none do.
        self.needs_check: Callable[[Memory], bool] | None = None

    # --- the pieces ingestion composes ------------------------------------------------------------------
    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Embeddings of texts, in batches (progress after each), by the model that wrote the store's vectors."""
        self.check_model()
        batch = EMBED_BATCH_SIZE * 4
        parts = []
        for start in range(0, len(texts), batch):
            parts.append(self.embedder.encode(texts[start : start + batch]))
            if progress:
                progress(min(start + batch, len(texts)), len(texts))
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)

    def embed_and_extract(
        self, texts: Sequence[str], progress: Progress | None = None, reuse: dict[str, np.ndarray] | None = None
    ) -> tuple[np.ndarray, Sequence[Structure]]:
        """Embeddings of texts (texts found in `reuse` keep that vector; it gains the new ones), and their
        structures: none yet, every one pending (engine/structures.py extracts them after the write: the parse
        costs about as much CPU as the embedding, so a write that waited for it could not beat ~0.65x the raw
        encode throughput on 2 cores)."""
        known = reuse if reuse is not None else {}
        if not texts:
            return np.zeros((0, 0), dtype=np.float32), []
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        vectors = self.embed(todo, progress)
        known.update(zip(todo, vectors, strict=True))
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False), [None] * len(texts)

    def reusable_vectors(self, ids: Sequence[str], kind: MemoryKind | None = None) -> dict[str, np.ndarray]:
        """Stored embeddings of the given memories (of one kind, if given), by content: re-indexing a text
        that did not change reuses its vector instead of embedding it again."""
        if not ids:
            return {}
        memories = self.store.get_many(ids)
        stored = self.store.embeddings(ids)
        return {m.content: stored[i] for i, m in memories.items() if i in stored and kind in (None, m.kind)}

    def new_memories(self, requests: Sequence[RememberRequest], now: datetime) -> list[Memory]:
        """Memories for validated requests: fresh sortable ids, `created_at` defaulting to now."""
        stamp = int(now.timestamp() * 1000)
        return [
            Memory(
                id=ids.new_id(stamp),
                content=r.content,
                importance=r.importance,
                context=dict(r.context or {}),
                entity_id=r.entity_id,
                kind=r.kind,
                created_at=now if r.created_at is None else r.created_at,
                updated_at=now,
                last_accessed_at=None,
                access_count=0,
            )
            for r in requests
        ]

    def commit(
        self,
        records: Sequence[MemoryRecord],
        edges: Sequence[Edge] = (),
        also: AlsoWrite | None = None,
        vectors_first: bool = False,
    ) -> None:
        """Store records and edges in one transaction (`also` writes rows that must commit with them), then
        bring the indexes up to date. Durable once this returns. `vectors_first` (remember): the vectors are
        upserted just before the transaction, which stores them marked synced
        (`DerivedIndexes.commit_with_vectors`): one transaction and fsync instead of two. A crash between the
        two leaves vectors the store never got; the next open drops them."""
        self._record_model(records)
        if self.needs_check is not None:
            records = [dataclasses.replace(r, check_pending=True) if self.needs_check(r.memory) else r
                       for r in records]
        if vectors_first:
            synced = self.indexes.commit_with_vectors(
                [r.memory.id for r in records],
                np.stack([r.embedding for r in records]),
                lambda synced: self.store.insert(records, edges, also=also, synced=synced),
            )
            self.indexes.apply(records, edges, vectors_synced=synced)
        else:
            self.store.insert(records, edges, also=also)
            self.indexes.apply(records, edges)
        self._committed(sum(r.structure_pending + r.check_pending for r in records))

    def _committed(self, pending: int) -> None:
        if self.after_commit is not None:
            self.after_commit(pending)

    def check_model(self) -> None:
        """A store is searched and written only with the model that wrote its vectors; another is refused.

        Checked by name before anything is embedded (so before the model loads; reads that embed nothing,
        like `get` or `list`, work with any model), and by vector width on each write."""
        if self._model_checked:
            return
        stored = self.store.get_meta(config.EMBEDDING_MODEL_META_KEY)
        if stored is not None and config.canonical_model_name(stored) != config.canonical_model_name(
            self.embedder.name
        ):
            raise EmbeddingModelMismatchError(
                f"this store's vectors were written by embedding model {stored!r}{self._dimension_note()}, but it "
                f"is opened with {self.embedder.name!r}; open it with {config.MODEL_ENV}={stored} "
                "(vectors of different models must not be mixed), or index into a new data directory"
            )
        self._model_checked = stored is not None  # a store's model never changes once recorded

    def _dimension_note(self) -> str:
        dimension = self.store.get_meta(config.EMBEDDING_DIMENSION_META_KEY)
        return f" ({dimension} dimensions)" if dimension else ""

    def _record_model(self, records: Sequence[MemoryRecord]) -> None:
        """Remember the model and vector width of the first write; refuse vectors of another width later."""
        self.check_model()
        widths = {int(r.embedding.shape[-1]) for r in records}
        if self._dimension is None:
            stored = self.store.get_meta(config.EMBEDDING_DIMENSION_META_KEY)
            self._dimension = int(stored) if stored else None
        expected = {self._dimension} if self._dimension is not None else widths
        if len(widths | expected) > 1:
            raise EmbeddingModelMismatchError(
                f"this store holds {min(expected)}-dimension vectors of embedding model "
                f"{self.store.get_meta(config.EMBEDDING_MODEL_META_KEY) or self.embedder.name!r}; "
                f"{self.embedder.name!r} gave {', '.join(str(w) for w in sorted(widths))}-dimension vectors"
            )
        if self._dimension is None:  # the first write with vectors (or the first since widths were recorded)
            if self.store.get_meta(config.EMBEDDING_MODEL_META_KEY) is None:
                self.store.set_meta(config.EMBEDDING_MODEL_META_KEY, config.canonical_model_name(self.embedder.name))
            if widths:
                self._dimension = widths.pop()
                self.store.set_meta(config.EMBEDDING_DIMENSION_META_KEY, str(self._dimension))

    # --- whole operations ------------------------------------------------------------------------------
    def remember(self, requests: Sequence[RememberRequest], progress: Progress | None = None) -> list[Memory]:
        """Store a batch atomically: edge targets checked first, embedded in batches, committed together."""
        memories = self.new_memories(requests, self.clock.now())
        targets = {spec.target for r in requests for spec in r.edges}
        known = {m.id for m in memories}
        missing = targets - known - self.store.existing(targets - known)
        if missing:
            raise InvalidEdgeError(f"edge target(s) not found: {', '.join(sorted(missing))}")
        if not memories:
            return []
        texts = [m.content for m in memories]
        embeddings, structures = self.embed_and_extract(texts, progress)
        records = records_of(memories, embeddings, structures)
        edges = [
            Edge(m.id, spec.target, spec.type, spec.confidence, dict(spec.attrs))
            for m, r in zip(memories, requests, strict=True)
            for spec in r.edges
        ]
        self.commit(records, edges, vectors_first=True)
        return memories

    def add_edges(self, new: Sequence[NewEdge]) -> list[Edge]:
        """Edges between stored memories, in one transaction; every endpoint must exist."""
        edges = [Edge(e.source, e.target, e.type, e.confidence, dict(e.attrs or {})) for e in new]
        endpoints = {e.source for e in edges} | {e.target for e in edges}
        missing = endpoints - self.store.existing(endpoints)
        if missing:
            raise InvalidEdgeError(f"edge endpoint(s) not found: {', '.join(sorted(missing)[:10])}")
        self.store.add_edges(edges)
        self.indexes.add_edges(edges)
        return edges

    def revise(self, request: ReviseRequest) -> Memory:
        """Change a memory in place (same id); its previous state is kept as a `revision` memory."""
        old = self.store.get_record(request.memory_id)
        if old is None:
            raise MemoryNotFoundError(f"no memory with id {request.memory_id}")
        now = self.clock.now()
        prev = old.memory
        changes: dict[str, Any] = {
            k: v
            for k, v in (
                ("content", request.content),
                ("importance", request.importance),
                ("context", None if request.context is None else dict(request.context)),
                ("entity_id", request.entity_id),
            )
            if v is not None
        }
        updated = dataclasses.replace(prev, **changes, updated_at=now)
        if updated.content != prev.content:
            embedding, structures = self.embed_and_extract([updated.content])
            new_record = records_of([updated], embedding, structures)[0]
        else:
            new_record = dataclasses.replace(old, memory=updated)
        revision = dataclasses.replace(
            prev,
            id=ids.new_id(int(now.timestamp() * 1000)),
            kind=MemoryKind.REVISION,
            context={**prev.context, "revision_of": prev.id},
            updated_at=now,
            last_accessed_at=None,
            access_count=0,
        )
        edge = Edge(prev.id, revision.id, EdgeType.REVISED_FROM, 1.0, {})
        revision_record = dataclasses.replace(old, memory=revision)
        self.store.revise(new_record, revision_record, edge)
        self.indexes.unplace([prev.id])
        self.indexes.apply([new_record, revision_record], [edge])
        self._committed(new_record.structure_pending + revision_record.structure_pending)
        return updated

    def replace_derived_edges(
        self, origin: str, edges: Sequence[Edge], also: AlsoWrite | None = None
    ) -> None:
        """Swap every edge ingestion derived (`attrs.origin == origin`) for `edges` in one transaction (`also`
        commits with them), then the graph index follows."""
        self.store.replace_derived_edges(origin, edges, also)
        self.indexes.edges_replaced()

    def set_importances(self, values: Sequence[tuple[str, float]]) -> None:
        """Set importance per memory id in one transaction (ingestion's salience); recall's caches follow the
        store's version."""
        self.store.set_importances(values)

    def forget(self, memory_ids: Sequence[str], *, erase: bool = True) -> list[str]:
        """Delete memories and, transitively, their revisions from the store, then from every index.

        With `erase` (a user's forget), nothing of them is left in any file: see `DerivedIndexes.erase`. Ingestion
        replacing changed sentences passes False; their files are scrubbed by the next erasing forget.
        """
        ids = self.store.ids_with_revisions(memory_ids)
        vectors = list(self.store.embeddings(ids).values()) if erase else []
        deleted = self.store.delete(ids, erase=erase)
        self.indexes.drop(deleted)
        if erase and deleted:
            try:
                self.indexes.erase(vectors)
            except Exception as exc:  # noqa: BLE001 - committed: the erase mark finishes it on the next open
                log.warning("erasure of the vector index's files deferred to the next open: %s", exc)
        return deleted


def records_of(
    memories: Sequence[Memory], embeddings: np.ndarray, structures: Sequence[Structure]
) -> list[MemoryRecord]:
    """Records to commit; a None structure is stored pending (extracted later, engine/structures.py)."""
    return [
        MemoryRecord(m, e, {} if s is None else s, s is None)
        for m, e, s in zip(memories, embeddings, structures, strict=True)
    ]
