"""`MemoryEngine`: the one facade every interface calls (CLI, REST, gRPC, workbench, notebooks).

Write path: validate everything -> embed and extract structure -> one SQLite transaction (the truth,
embeddings included) -> Chroma upsert -> in-memory indexes. A crash after the commit is repaired on the
next open from the `vector_synced` marks, so an acknowledged write is never lost and never half-visible
(recall only returns ids the record store holds).
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine import config, ids, validation
from engine.clock import Clock, SystemClock
from engine.embedding import Embedder, SentenceTransformerEmbedder
from engine.errors import InvalidEdgeError, MemoryNotFoundError, StoreError, ValidationError
from engine.index.graph import GraphIndex
from engine.index.structure import StructureIndex
from engine.index.timeline import TimelineIndex
from engine.index.vector import VectorIndex
from engine.models import (
    Edge,
    EdgeSpec,
    EdgeType,
    Memory,
    MemoryKind,
    NewMemory,
    RecallResult,
    Strategy,
    StrategyDetail,
)
from engine.recall import scoring
from engine.recall.request import RecallRequest, build_request
from engine.recall.strategies import STRATEGIES, Hit, RecallInputs
from engine.store.records import MemoryRecord, RecordStore, from_micros, to_micros
from engine.structure import EXTRACTOR_META_KEY, StructureExtractor, extractor_named

if TYPE_CHECKING:
    from engine.ingest.analysis import Extractor
    from engine.ingest.summary import IndexSummary

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


class MemoryEngine:
    """Remember, recall, revise and forget memories in one data directory.

    Collaborators are injectable: `embedder` (default: all-MiniLM-L6-v2, loaded on first use), `clock`
    (default: system UTC), `extractor` (relational structure), `vector_index` (default: embedded Chroma
    under the data dir). Indexes are built lazily, so opening a store to read one memory is fast.
    """

    def __init__(
        self,
        data_dir: str | Path | None = None,
        *,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        extractor: StructureExtractor | None = None,
        vector_index: VectorIndex | Callable[[], VectorIndex] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else config.default_data_dir()
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self.store = RecordStore(self.data_dir / config.RECORDS_FILENAME)
        except OSError as exc:
            raise StoreError(f"cannot open data directory {self.data_dir}: {exc}") from exc
        self.embedder: Embedder = embedder or SentenceTransformerEmbedder()
        self.clock: Clock = clock or SystemClock()
        # A store written by `index` holds spaCy structures; read cues the same way unless told otherwise.
        self._extractor_given = extractor is not None
        self.extractor: StructureExtractor = extractor or extractor_named(self.store.get_meta(EXTRACTOR_META_KEY))
        self._vector_factory = vector_index
        self._lock = threading.RLock()
        self._vectors: VectorIndex | None = None
        self._timeline: TimelineIndex | None = None
        self._graph: GraphIndex | None = None
        self._structures: StructureIndex | None = None
        self._revisions: set[str] | None = None
        self._pool: ThreadPoolExecutor | None = None  # runs a multi-strategy recall's strategies concurrently

    # --- lifecycle -------------------------------------------------------------------------------------
    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self.store.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- indexes (lazy, rebuilt from the record store) ----------------------------------------------------
    @property
    def vectors(self) -> VectorIndex:
        with self._lock:
            if self._vectors is None:
                factory = self._vector_factory
                if isinstance(factory, VectorIndex):
                    index = factory
                elif factory is not None:
                    index = factory()
                else:
                    index = VectorIndex.open_embedded(self.data_dir / config.VECTOR_DIRNAME)
                self._reconcile_vectors(index)
                self._vectors = index
            return self._vectors

    def _reconcile_vectors(self, index: VectorIndex) -> None:
        """Bring Chroma in line with the record store: apply pending deletes and unsynced upserts."""
        pending = self.store.pending_deletes()
        if pending:
            index.delete(pending)
            self.store.clear_pending_deletes(pending)
        if index.count() != self.store.count() - self.store.count_unsynced():
            # Chroma lost or gained something we have no mark for (e.g. its folder was deleted): full repair.
            log.warning("vector index out of step with the record store; rebuilding it")
            in_chroma = index.all_ids()
            index.delete(sorted(in_chroma - self.store.existing(in_chroma)))
            self.store.mark_all_unsynced()
        unsynced = self.store.unsynced()
        for start in range(0, len(unsynced), 5000):
            chunk = unsynced[start : start + 5000]
            index.upsert([i for i, _ in chunk], np.stack([v for _, v in chunk]))
            self.store.mark_synced([i for i, _ in chunk])

    @property
    def timeline(self) -> TimelineIndex:
        with self._lock:
            if self._timeline is None:
                revisions = self._revision_ids()
                with _bulk_build():
                    self._timeline = TimelineIndex(r for r in self.store.timeline_rows() if r[2] not in revisions)
            return self._timeline

    @property
    def graph(self) -> GraphIndex:
        with self._lock:
            if self._graph is None:
                with _bulk_build():
                    self._graph = GraphIndex(self.store.edges())
            return self._graph

    @property
    def structures(self) -> StructureIndex:
        with self._lock:
            if self._structures is None:
                revisions = self._revision_ids()
                with _bulk_build():
                    self._structures = StructureIndex(
                        (i, features) for i, features in self.store.features() if i not in revisions
                    )
            return self._structures

    def _revision_ids(self) -> set[str]:
        with self._lock:
            if self._revisions is None:
                self._revisions = set(self.store.ids_of_kind(MemoryKind.REVISION))
            return self._revisions

    # --- writes ----------------------------------------------------------------------------------------
    def remember(
        self,
        content: str,
        *,
        importance: float | None = None,
        context: dict[str, Any] | str | None = None,
        entity_id: str | None = None,
        kind: MemoryKind | str = MemoryKind.EPISODE,
        created_at: datetime | str | None = None,
        edges: Iterable[EdgeSpec | tuple[str, str] | tuple[str, str, float]] = (),
    ) -> Memory:
        """Store one memory (and edges from it to existing memories); returns it once durable."""
        item = NewMemory(content, importance, context, entity_id, kind, created_at, tuple(_edge_spec(e) for e in edges))
        return self.remember_many([item])[0]

    def remember_many(self, items: Sequence[NewMemory], progress: Progress | None = None) -> list[Memory]:
        """Store a batch atomically: all are validated first, embedded in batches, committed together."""
        now = self.clock.now()
        memories = [self._validated(item, now) for item in items]
        targets = {spec.target for item in items for spec in item.edges}
        known = {m.id for m in memories}
        missing = targets - known - self.store.existing(targets - known)
        if missing:
            raise InvalidEdgeError(f"edge target(s) not found: {', '.join(sorted(missing))}")
        if not memories:
            return []
        embeddings = self._embed([m.content for m in memories], progress)
        structures = self.extractor.extract([m.content for m in memories])
        records = [MemoryRecord(m, e, s) for m, e, s in zip(memories, embeddings, structures, strict=True)]
        edges = [
            Edge(m.id, spec.target, spec.type, spec.confidence, spec.attrs)
            for m, item in zip(memories, items, strict=True)
            for spec in item.edges
        ]
        self._check_model()
        self.store.insert(records, edges)
        self._index(records, edges)
        return memories

    def _validated(self, item: NewMemory, now: datetime) -> Memory:
        created = now if item.created_at is None else validation.timestamp(item.created_at, what="created_at")
        for spec in item.edges:
            validation.edge_type(spec.type)
            validation.confidence(spec.confidence)
        return Memory(
            id=ids.new_id(int(now.timestamp() * 1000)),
            content=validation.content(item.content),
            importance=validation.importance(item.importance),
            context=validation.context(item.context),
            entity_id=validation.entity_id(item.entity_id),
            kind=validation.kind(item.kind),
            created_at=created,
            updated_at=now,
            last_accessed_at=None,
            access_count=0,
        )

    def _embed(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        batch = config.EMBED_BATCH_SIZE * 4
        parts = []
        for start in range(0, len(texts), batch):
            parts.append(self.embedder.encode(texts[start : start + batch]))
            if progress:
                progress(min(start + batch, len(texts)), len(texts))
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)

    def _check_model(self) -> None:
        """A store is searched with the model that wrote it; refuse to mix models silently."""
        stored = self.store.get_meta("embedding_model")
        if stored is None:
            self.store.set_meta("embedding_model", self.embedder.name)
        elif stored != self.embedder.name:
            raise StoreError(
                f"this store was written with embedding model {stored!r}, not {self.embedder.name!r}; "
                "open it with the same model"
            )

    def _index(self, records: Sequence[MemoryRecord], edges: Sequence[Edge]) -> None:
        """Bring the derived indexes up to date after a committed write."""
        if records:
            self.vectors.upsert([r.memory.id for r in records], np.stack([r.embedding for r in records]))
            self.store.mark_synced([r.memory.id for r in records])
        with self._lock:
            for r in records:
                m = r.memory
                if m.kind == MemoryKind.REVISION:
                    if self._revisions is not None:
                        self._revisions.add(m.id)
                    continue
                if self._timeline is not None and m.entity_id is not None:
                    self._timeline.add(m.entity_id, to_micros(m.created_at), m.id)
                if self._structures is not None:
                    self._structures.add(m.id, r.structure.get("features", []))
            if self._graph is not None:
                for e in edges:
                    self._graph.add(e)

    def add_edge(self, source: str, target: str, type: EdgeType | str, confidence: float = 1.0, **attrs: Any) -> Edge:
        edge = Edge(source, target, validation.edge_type(type), validation.confidence(confidence), attrs)
        missing = {source, target} - self.store.existing([source, target])
        if missing:
            raise InvalidEdgeError(f"edge endpoint(s) not found: {', '.join(sorted(missing))}")
        self.store.add_edges([edge])
        with self._lock:
            if self._graph is not None:
                self._graph.add(edge)
        return edge

    def add_edges(self, edges: Iterable[Edge | tuple[Any, ...]]) -> list[Edge]:
        """Add many edges in one transaction (bulk imports): all are validated before any is written.

        Items are `Edge`s or `(source, target, type[, confidence])`. Unlike `remember_many`, whose new
        memories can only point at memories that already exist, this links memories of the same batch.
        """
        checked = []
        for e in edges:
            if isinstance(e, Edge):
                source, target, type_, conf, attrs = e.source, e.target, e.type, e.confidence, e.attrs
            elif isinstance(e, tuple) and len(e) in (3, 4):
                source, target, type_ = e[0], e[1], e[2]
                conf, attrs = (e[3] if len(e) == 4 else 1.0), {}
            else:
                raise InvalidEdgeError(f"an edge is Edge or (source, target, type[, confidence]), got {e!r}")
            type_ = validation.edge_type(type_)
            checked.append(Edge(source, target, type_, validation.confidence(conf), attrs))
        endpoints = {e.source for e in checked} | {e.target for e in checked}
        missing = endpoints - self.store.existing(endpoints)
        if missing:
            raise InvalidEdgeError(f"edge endpoint(s) not found: {', '.join(sorted(missing)[:10])}")
        self.store.add_edges(checked)
        with self._lock:
            if self._graph is not None:
                for edge in checked:
                    self._graph.add(edge)
        return checked

    def index(
        self,
        paths: Sequence[str | Path],
        progress: Callable[[str, int, int], None] | None = None,
        *,
        extractor: Extractor | str | None = None,
    ) -> IndexSummary:
        """Index documents (files or folders of Markdown, text, JSON chats) into memories: documents,
        propositions, entities, dates, and derived edges. Idempotent; see `engine.ingest`. Returns an
        `IndexSummary`; `progress(phase, done, total)` is called as it goes."""
        from engine.ingest.pipeline import index_paths
        from engine.ingest.structure import SpacyStructureExtractor

        if not self._extractor_given and not isinstance(self.extractor, SpacyStructureExtractor):
            self.extractor = SpacyStructureExtractor()
        summary = index_paths(self, paths, progress=progress, extractor=extractor)
        with self._lock:
            self._graph = None  # derived edges were replaced wholesale: rebuild on next use
        return summary

    def revise(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        importance: float | None = None,
        context: dict[str, Any] | str | None = None,
        entity_id: str | None = None,
    ) -> Memory:
        """Change a memory in place (same id); its previous state is kept as a `revision` memory."""
        old = self.store.get_record(memory_id)
        if old is None:
            raise MemoryNotFoundError(f"no memory with id {memory_id}")
        if content is None and importance is None and context is None and entity_id is None:
            raise ValidationError("revise needs at least one of content, importance, context, entity_id")
        now = self.clock.now()
        prev = old.memory
        updated = dataclasses.replace(
            prev,
            content=prev.content if content is None else validation.content(content),
            importance=prev.importance if importance is None else validation.importance(importance),
            context=prev.context if context is None else validation.context(context),
            entity_id=prev.entity_id if entity_id is None else validation.entity_id(entity_id),
            updated_at=now,
        )
        if updated.content != prev.content:
            embedding = self._embed([updated.content])[0]
            structure = self.extractor.extract([updated.content])[0]
        else:
            embedding, structure = old.embedding, old.structure
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
        new_record = MemoryRecord(updated, embedding, structure)
        revision_record = MemoryRecord(revision, old.embedding, old.structure)
        self.store.revise(new_record, revision_record, edge)
        with self._lock:
            if self._timeline is not None:
                self._timeline.remove([prev.id])
        self._index([new_record, revision_record], [edge])
        return updated

    def forget(self, memory_ids: Sequence[str] = (), *, entity_id: str | None = None) -> list[str]:
        """Remove memories (by id, or every memory of an entity) and their revisions from every index."""
        if not memory_ids and entity_id is None:
            raise ValidationError("forget needs memory ids or an entity_id")
        targets = list(memory_ids)
        missing = set(targets) - self.store.existing(targets)
        if missing:
            raise MemoryNotFoundError(f"no memory with id {', '.join(sorted(missing))}")
        if entity_id is not None:
            targets.extend(self.store.ids_of_entity(self.resolve_entity(validation.entity_id(entity_id) or "")))
        doomed = self.store.ids_with_revisions(targets)
        deleted = self.store.delete(doomed)
        if deleted:
            self.vectors.delete(deleted)
            self.store.clear_pending_deletes(deleted)
            with self._lock:
                for index in (self._timeline, self._structures):
                    if index is not None:
                        index.remove(deleted)
                if self._graph is not None:
                    self._graph.remove_nodes(deleted)
                if self._revisions is not None:
                    self._revisions.difference_update(deleted)
        return deleted

    # --- reads -----------------------------------------------------------------------------------------
    def get(self, memory_id: str) -> Memory:
        found = self.store.get_many([memory_id])
        if memory_id not in found:
            raise MemoryNotFoundError(f"no memory with id {memory_id}")
        return found[memory_id]

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        return self.store.get_many(memory_ids)

    def list_memories(
        self,
        *,
        entity_id: str | None = None,
        kind: MemoryKind | str | None = None,
        time_range: object = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Memory]:
        """Memories filtered by entity, kind and time, newest first."""
        start, end = validation.time_range(time_range) or (None, None)
        entity = validation.entity_id(entity_id)
        return self.store.list_memories(
            entity_id=None if entity is None else self.resolve_entity(entity),
            kind=None if kind is None else validation.kind(kind),
            start=start,
            end=end,
            limit=limit,
            offset=offset,
        )

    def resolve_entity(self, entity_id: str) -> str:
        """The entity id a name means: as given when memories use it, else the id of an indexed entity it is
        an alias or unique prefix of ("meridian" -> "meridian analytics"); AmbiguousEntityError lists the
        candidates when several match."""
        from engine.ingest.entities import EntityRegistry

        return EntityRegistry(self.store).resolve(entity_id)

    def edges_of(self, memory_id: str) -> list[Edge]:
        return self.store.edges_of(memory_id)

    def entities(self) -> list[str]:
        return self.timeline.entities()

    def structure_of(self, memory_id: str) -> dict[str, Any]:
        """The relational structure stored with a memory (what analogical recall compares)."""
        record = self.store.get_record(memory_id)
        if record is None:
            raise MemoryNotFoundError(f"no memory with id {memory_id}")
        return dict(record.structure)

    def analyze(self, text: str) -> dict[str, Any]:
        """The relational structure of a text, e.g. a cue, as the analogical strategy sees it."""
        return dict(self.extractor.extract([validation.content(text)])[0])

    def stats(self) -> dict[str, int]:
        """Counts from each store; `vector_index` is read from Chroma itself so a mismatch would show."""
        return {
            "memories": self.store.count(),
            "vector_index": self.vectors.count(),
            "edges": self.store.count_edges(),
            "entities": self.store.count_entities(),
        }

    # --- recall ----------------------------------------------------------------------------------------
    def recall(self, cue: str | RecallRequest = "", **params: Any) -> list[RecallResult]:
        """Run the requested strategies, fuse, score, cut to top_k, and count the recall.

        Parameters are those of `build_request` (strategies, top_k, scoring_weights, entity_id, ...).
        """
        request = cue if isinstance(cue, RecallRequest) else build_request(cue, **params)
        results = self.retrieve(request)
        if not results:
            return results
        now = self.clock.now()
        self.store.record_access([r.memory.id for r in results], now)
        return [
            dataclasses.replace(
                r,
                memory=dataclasses.replace(r.memory, access_count=r.memory.access_count + 1, last_accessed_at=now),
            )
            for r in results
        ]

    def retrieve(self, request: RecallRequest) -> list[RecallResult]:
        """Recall without counting it: the candidates, scored and ranked. Notebooks and benchmarks use it."""
        if request.seed_memory_id is not None and not self.store.existing([request.seed_memory_id]):
            raise MemoryNotFoundError(f"seed memory {request.seed_memory_id} does not exist")
        if request.entity_id is not None:
            resolved = self.resolve_entity(request.entity_id)
            if resolved != request.entity_id:
                request = dataclasses.replace(request, entity_id=resolved)
        cue_embedding = self._embed([request.cue])[0] if request.needs_cue_embedding else None
        cue_features: tuple[str, ...] = ()
        if Strategy.ANALOGICAL in request.strategies:
            cue_features = tuple(self.extractor.extract([request.cue])[0].get("features", []))
        inputs = RecallInputs(
            request=request,
            cue_embedding=cue_embedding,
            cue_features=cue_features,
            store=self.store,
            vectors=lambda: self.vectors,
            timeline=lambda: self.timeline,
            graph=lambda: self.graph,
            structures=lambda: self.structures,
            excluded=frozenset(self._revision_ids()),
        )
        if len(request.strategies) == 1:
            hit_lists = [STRATEGIES[request.strategies[0]](inputs)]
        else:
            hit_lists = list(self._strategy_pool().map(lambda s: STRATEGIES[s](inputs), request.strategies))
        results = self._rank(hit_lists, request.scoring_weights, request.top_k)
        if request.strategies == (Strategy.TEMPORAL,):
            # A timeline is read in the order things happened.
            results.sort(key=lambda r: (r.memory.created_at, r.memory.id))
        return results

    def _strategy_pool(self) -> ThreadPoolExecutor:
        """One pool for the engine's life: starting threads on every recall cost more than a strategy."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=len(Strategy), thread_name_prefix="hebbs-recall")
            return self._pool

    def _rank(self, hit_lists: Sequence[list[Hit]], weights: scoring.ScoringWeights, top_k: int) -> list[RecallResult]:
        """Fuse, score and cut to top_k, reading whole memories for the winners only.

        Fusion de-duplicates by id, keeping the highest relevance and every strategy's detail. A candidate's
        score needs just its importance, created_at and access_count: a temporal pool of hundreds is scored
        from those and only the top_k are read and parsed in full.
        """
        best: dict[str, float] = {}
        details: dict[str, list[StrategyDetail]] = {}
        for hits in hit_lists:
            for h in hits:
                best[h.id] = max(best.get(h.id, 0.0), h.relevance)
                details.setdefault(h.id, []).append(h.detail)
        now = self.clock.now()
        inputs = self.store.score_inputs(list(best))  # drops anything forgotten meanwhile
        ranked = []
        for i, relevance in best.items():
            if i in inputs:
                importance, created_us, access_count = inputs[i]
                created = from_micros(created_us)
                assert created is not None
                signals = scoring.signals_from(relevance, created, importance, access_count, now)
                score = scoring.composite(signals, weights)
                ranked.append((scoring.sort_key(score, signals.relevance, created, i), score, signals, i))
        ranked.sort(key=lambda r: r[0])
        winners = ranked[:top_k]
        memories = self.store.get_many([i for *_, i in winners])
        return [
            RecallResult(memories[i], score, signals, tuple(details[i]))
            for _, score, signals, i in winners
            if i in memories
        ]

    @staticmethod
    def rescore(
        results: Sequence[RecallResult], weights: scoring.ScoringWeights | dict[str, float] | str
    ) -> list[RecallResult]:
        """Re-rank results under new weights. Pure: no retrieval and no access counting."""
        if isinstance(weights, str):
            weights = scoring.ScoringWeights.parse(weights)
        elif isinstance(weights, dict):
            weights = scoring.ScoringWeights.from_mapping(weights)
        return scoring.rescore(results, weights)


@contextmanager
def _bulk_build() -> Iterator[None]:
    """Pause the cyclic garbage collector while an index is rebuilt from the store.

    A rebuild allocates hundreds of thousands of objects that all stay alive; the collector kept rescanning
    them and took two thirds of the time to open a 100,000-memory store. Nothing built here forms cycles
    that need collecting, and the collector resumes as soon as the build ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _edge_spec(value: EdgeSpec | tuple[str, str] | tuple[str, str, float]) -> EdgeSpec:
    if isinstance(value, EdgeSpec):
        return value
    if isinstance(value, tuple) and len(value) in (2, 3):
        target, type_ = value[0], value[1]
        conf = value[2] if len(value) == 3 else 1.0
        return EdgeSpec(target, validation.edge_type(type_), validation.confidence(conf))
    raise InvalidEdgeError(f"an edge is (target, type[, confidence]), got {value!r}")
