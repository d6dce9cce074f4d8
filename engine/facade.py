"""`MemoryEngine`: the one facade every interface calls (CLI, servers, workbench, notebooks).

Each operation has a request type in `engine.api`; `handle(request)` runs any of them and returns its
response, which is what transports call. The keyword-argument methods below are the Python API: each
builds its request with the same `parse`, so validation is identical everywhere. Writes go through the
`Writer`, reads through the record store and the derived `Indexes`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from engine import config
from engine.analogy.text import EXTRACTOR_META_KEY, StructureExtractor, extractor_named
from engine.api.requests import (
    AddEdgesRequest,
    ForgetRequest,
    GetRequest,
    IngestRequest,
    ListRequest,
    NeighbourhoodRequest,
    PrimeRequest,
    RecallRequest,
    RememberManyRequest,
    RememberRequest,
    Request,
    RescoreRequest,
    ReviseRequest,
    StatsRequest,
)
from engine.api.responses import (
    EdgesResponse,
    ForgetResponse,
    ListResponse,
    MemoriesResponse,
    NeighbourhoodResponse,
    NeighbourNode,
    RecallResponse,
    StatsResponse,
)
from engine.clock import Clock, SystemClock
from engine.embedding import Embedder, create_embedder
from engine.errors import AmbiguousMemoryIdError, HebbsError, MemoryNotFoundError, StoreError, ValidationError
from engine.index.graph import Reached
from engine.index.vector import VectorIndex
from engine.indexes import Indexes
from engine.lock import DataDirLock
from engine.models import Edge, EdgeType, Memory, NewMemory, RecallResult, Strategy, StrategyDetail
from engine.recall import scoring
from engine.recall.fusion import FusionFrame, fused
from engine.recall.fusion import frame as fusion_frame
from engine.recall.lexical import with_matched_terms
from engine.recall.registry import STRATEGIES
from engine.recall.strategies import Hit, RecallInputs
from engine.recall.unnamed import unnamed
from engine.store.entities import EntityRegistry
from engine.store.ledger import Ledger
from engine.store.records import RecordStore, ScoreInputs, from_micros, to_micros
from engine.store.replies import Replies
from engine.structures import StructureFollower
from engine.uploads import remove_unreferenced_uploads
from engine.writer import Writer

if TYPE_CHECKING:
    from engine.ingest.analysis import Extractor
    from engine.ingest.summary import IndexSummary

Response = Any  # each request's response type: see `MemoryEngine.handle`


class _NoOwner:
    """What a read-only engine holds instead of the data dir's lock."""

    def release(self) -> None:
        return None


@contextmanager
def store_errors(data_dir: Path | None = None) -> Iterator[None]:
    """Disk, permission and database failures (SQLite, OS, Chroma) become one-line `StoreError`s; a damaged
    file is named, with what to do about it (`data_dir`: where the store's files are)."""
    try:
        yield
    except HebbsError:
        raise
    except (sqlite3.Error, OSError) as exc:
        raise _store_error(exc, data_dir) from exc
    except Exception as exc:
        if type(exc).__module__.startswith("chromadb"):  # the vector index could not read or write
            raise _store_error(exc, data_dir, vectors=True) from exc
        raise


DAMAGE_WORDS = ("not a database", "malformed", "corrupt", "file is encrypted", "database disk image")


def _store_error(exc: BaseException, data_dir: Path | None = None, *, vectors: bool = False) -> StoreError:
    """A disk, permission or database failure as one line: what the data dir could not do, and why."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    lowered = text.lower()
    if any(word in lowered for word in DAMAGE_WORDS):
        return damaged_store_error(text, data_dir, vectors=vectors)
    if "readonly" in lowered or "read-only" in lowered or isinstance(exc, PermissionError):
        reason = "the data directory is read-only or not permitted for this user"
    elif "full" in lowered or getattr(exc, "errno", None) == errno.ENOSPC:
        reason = "the disk is full"
    else:
        reason = "the data directory could not be used"
    return StoreError(f"{reason}: {text[:200]}")


def damaged_store_error(text: str, data_dir: Path | None, *, vectors: bool) -> StoreError:
    """A damaged record store or vector index, named, with the remedy: the vector index is derived (every
    embedding is also in the record store), so deleting it is safe; the record store is the memories."""
    root = data_dir if data_dir is not None else Path("<data dir>")
    if vectors:
        return StoreError(f"the vector index {root / config.VECTOR_DIRNAME} is damaged ({text[:120]}): delete that "
                          "folder and it is rebuilt from the record store on the next open")
    return StoreError(f"the record store {root / config.RECORDS_FILENAME} is damaged ({text[:120]}): restore it "
                      "from a backup, or move it away to start an empty store (its memories are then gone)")


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
            _make_private_dir(self.data_dir)
            # One owner per data dir (engine.lock): a second process is refused here, before it touches Chroma.
            # A folder this process cannot write is opened for reading only and owns nothing.
            self._owner = (
                DataDirLock(self.data_dir).acquire() if os.access(self.data_dir, os.W_OK) else _NoOwner()
            )
        except OSError as exc:
            raise StoreError(f"cannot open data directory {self.data_dir}: {exc}") from exc
        try:
            _create_private_file(self.data_dir / config.RECORDS_FILENAME)
            self._store = RecordStore(self.data_dir / config.RECORDS_FILENAME)
        except BaseException as exc:
            self._owner.release()
            if isinstance(exc, sqlite3.DatabaseError):
                raise _store_error(exc, self.data_dir) from exc
            if isinstance(exc, OSError):
                raise StoreError(f"cannot open data directory {self.data_dir}: {exc}") from exc
            raise
        self.clock: Clock = clock or SystemClock()
        # Cues are read with the extractor that wrote the store's structures unless told otherwise.
        chosen = extractor or extractor_named(self._store.get_meta(EXTRACTOR_META_KEY))
        self._indexes = Indexes(self._store, self.data_dir, vector_index)
        self._writer = Writer(self._store, self._indexes, embedder or create_embedder(), chosen, self.clock)
        self._entities = EntityRegistry(self._store)
        # Structures follow writes (config.DEFER_STRUCTURES): extracted before any read of them, or when idle.
        self._structures = StructureFollower(self._store, self._indexes, lambda: self._writer.extractor, self.clock)
        self._writer.after_commit = self._structures.wrote
        self._lock = threading.Lock()
        self._structures_checked = False  # stale structures are re-extracted before the first analogical recall
        self._pool: ThreadPoolExecutor | None = None  # runs a multi-strategy recall's strategies concurrently
        self._handlers: dict[type, Callable[[Any], Response]] = {
            RememberRequest: lambda r: self._writer.remember([r])[0],
            RememberManyRequest: lambda r: MemoriesResponse(tuple(self._writer.remember(r.items))),
            ReviseRequest: self._writer.revise,
            ForgetRequest: self._forget,
            AddEdgesRequest: lambda r: EdgesResponse(tuple(self._writer.add_edges(r.edges))),
            IngestRequest: lambda r: self._ingest(r.paths, None, r.extractor, r.file_seconds),
            GetRequest: lambda r: self.get(r.memory_id),
            ListRequest: self._list,
            StatsRequest: self._stats,
            NeighbourhoodRequest: self._neighbourhood,
            RecallRequest: lambda r: RecallResponse(tuple(self._recall(r))),
            PrimeRequest: lambda r: RecallResponse(tuple(self._prime(r))),
            RescoreRequest: lambda r: RecallResponse(tuple(scoring.rescore(r.results, r.scoring_weights, r.top_k))),
        }

    # --- lifecycle -------------------------------------------------------------------------------------
    def close(self) -> None:
        self._structures.close()  # after the batch in hand; the rest stays pending, durable
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._store.close()
        self._owner.release()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def replies(self) -> Replies:
        """Replies kept under idempotency keys (servers use them: engine/store/replies.py)."""
        return Replies(self._store)

    @property
    def embedder(self) -> Embedder:
        return self._writer.embedder

    @property
    def extractor(self) -> StructureExtractor:
        return self._writer.extractor

    def warm(self) -> None:
        """Build every index now (servers and benchmarks pay the cost up front, not on the first recall), and
        let the idle worker extract structures an earlier writer left pending."""
        self._indexes.warm()
        self._structures.start_if_pending()

    def open_vector_index_meanwhile(self) -> None:
        """Start opening the vector index (importing Chroma takes seconds) on a side thread and return at once:
        an interactive front end calls it once its first page is drawn, so a later search does not wait."""
        self._indexes.open_vectors_meanwhile()

    # --- the request model -------------------------------------------------------------------------------
    def handle(self, request: Request) -> Response:
        """Run any `engine.api` request; returns its response (`Memory`, `RecallResponse`, ...), each with
        `to_dict()`. Transports parse a request, call this, and send the response's dict."""
        try:
            handler = self._handlers[type(request)]
        except KeyError:
            raise ValidationError(f"not an engine request: {type(request).__name__}") from None
        with store_errors(self.data_dir):
            return handler(request)

    # --- writes ----------------------------------------------------------------------------------------
    def remember(self, content: str, **fields: Any) -> Memory:
        """Store one memory (and edges from it to existing memories); returns it once durable.

        Fields: importance, context (object or JSON text), entity_id, kind, created_at, edges
        (`TARGET:TYPE[:CONF]`, `(target, type[, conf])` or `{target, type, confidence}`).
        """
        memory: Memory = self.handle(RememberRequest.parse({"content": content, **fields}))
        return memory

    def remember_many(
        self,
        items: Sequence[NewMemory | RememberRequest | Mapping[str, Any]],
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Memory]:
        """Store a batch atomically: all are validated first, embedded in batches, committed together."""
        request = RememberManyRequest.parse({"items": items})
        with store_errors(self.data_dir):
            return self._writer.remember(request.items, progress)

    def add_edge(self, source: str, target: str, type: EdgeType | str, confidence: float = 1.0, **attrs: Any) -> Edge:
        return self.add_edges([{"source": source, "target": target, "type": type, "confidence": confidence,
                                "attrs": attrs}])[0]

    def add_edges(self, edges: Iterable[Edge | tuple[Any, ...] | Mapping[str, Any]]) -> list[Edge]:
        """Add many edges in one transaction (bulk imports): all are validated before any is written.

        Items are `Edge`s, `(source, target, type[, confidence])` or `{source, target, type, confidence}`.
        Unlike `remember_many`, whose new memories can only point at memories that already exist, this
        links memories of the same batch.
        """
        response: EdgesResponse = self.handle(AddEdgesRequest.parse({"edges": edges}))
        return list(response.edges)

    def ingest(
        self,
        paths: Sequence[str | Path],
        progress: Callable[[str, int, int], None] | None = None,
        *,
        extractor: Extractor | str | None = None,
        file_seconds: float | None = None,
    ) -> IndexSummary:
        """Index documents (files or folders of Markdown, text, JSON chats) into memories: documents,
        propositions, entities, dates, and derived edges. Idempotent; see `engine.ingest`. Returns an
        `IndexSummary`; `progress(phase, done, total)` is called as it goes. `extractor` is `offline`,
        `llm` or an `Extractor` instance. `file_seconds`: the per-file analysis time budget (a file over it
        is skipped with the reason; default `HEBBS_INDEX_FILE_SECONDS` or `config.INGEST_FILE_SECONDS`, 0: no
        limit). Work is committed batch by batch: an interrupted run keeps the documents it finished."""
        instance = extractor if extractor is not None and not isinstance(extractor, str) else None
        request = IngestRequest.parse(
            {"paths": list(paths), "extractor": None if instance else extractor, "file_seconds": file_seconds}
        )
        with store_errors(self.data_dir):
            return self._ingest(request.paths, progress, instance or request.extractor, request.file_seconds)

    def _ingest(
        self, paths: Sequence[Path], progress: Callable[[str, int, int], None] | None,
        extractor: Extractor | str | None, file_seconds: float | None = None,
    ) -> IndexSummary:
        from engine.ingest.pipeline import index_paths

        with self._structures.held():  # the idle worker does not parse beside the ingest's own spaCy
            return index_paths(self._writer, paths, progress=progress, extractor=extractor,
                               file_seconds=file_seconds)

    def revise(self, memory_id: str, **changes: Any) -> Memory:
        """Change a memory in place (same id); its previous state is kept as a `revision` memory.
        Changes: content, importance, context, entity_id (at least one)."""
        memory: Memory = self.handle(ReviseRequest.parse({"memory_id": memory_id, **changes}))
        return memory

    def forget(
        self, memory_ids: Sequence[str] | str = (), *, entity_id: str | None = None, prefix: bool = False
    ) -> list[str]:
        """Remove memories (by id, or every memory of an entity) and their revisions from every index.
        `entity_id` must be exact unless `prefix=True` (then an alias or unique prefix is resolved first)."""
        response: ForgetResponse = self.handle(
            ForgetRequest.parse({"memory_ids": memory_ids, "entity_id": entity_id, "prefix": prefix})
        )
        return list(response.forgotten)

    def _forget(self, request: ForgetRequest) -> ForgetResponse:
        targets = list(request.memory_ids)
        missing = set(targets) - self._store.existing(targets)
        if missing:
            raise MemoryNotFoundError(f"no memory with id {', '.join(sorted(missing))}")
        if request.entity_id is not None:
            entity = self.resolve_entity(request.entity_id) if request.prefix else request.entity_id
            of_entity = self._store.ids_of_entity(entity)
            if not of_entity and not request.prefix:
                raise MemoryNotFoundError(
                    f"no memory has entity_id {entity!r}; forget needs the exact id "
                    "(prefix=True, or --prefix, also matches an alias or unique prefix)"
                )
            targets.extend(of_entity)
        # A document's propositions were derived from it: they go with it (and so does its uploaded file).
        named = set(targets)
        derived = [i for i in dict.fromkeys(Ledger(self._store).derived_from(targets)) if i not in named]
        forgotten = self._writer.forget([*targets, *derived])
        if forgotten:
            self._entities.purge_unreferenced()
            self._store.checkpoint()
            remove_unreferenced_uploads(self.data_dir, self._store)
        return ForgetResponse(tuple(forgotten), len(set(derived) & set(forgotten)))

    # --- reads -----------------------------------------------------------------------------------------
    def get(self, memory_id: str) -> Memory:
        found = self._store.get_many([memory_id])
        if memory_id not in found:
            raise MemoryNotFoundError(f"no memory with id {memory_id}")
        return found[memory_id]

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        return self._store.get_many(memory_ids)

    def list_memories(self, **filters: Any) -> list[Memory]:
        """Memories filtered by entity_id, kind, time_range, min_importance, include_revisions, newest first
        (`limit`, `offset`). `list_page` also returns the total."""
        return list(self.list_page(**filters).memories)

    def list_page(self, **filters: Any) -> ListResponse:
        """One page of memories matching the filters, and how many match in all (filters before paging)."""
        response: ListResponse = self.handle(ListRequest.parse(filters))
        return response

    def _list(self, request: ListRequest) -> ListResponse:
        start, end = request.time_range or (None, None)
        entity = None if request.entity_id is None else self.resolve_entity(request.entity_id)
        memories, total = self._store.list_memories(
            entity_id=entity,
            kind=request.kind,
            start=start,
            end=end,
            min_importance=request.min_importance,
            include_revisions=request.include_revisions,
            limit=request.limit,
            offset=request.offset,
        )
        return ListResponse(tuple(memories), total, request.limit, request.offset)

    def resolve_entity(self, entity_id: str) -> str:
        """The entity id a name means: as given when memories use it, else the id of an indexed entity it is
        an alias or unique prefix of ("meridian" -> "meridian analytics"); AmbiguousEntityError lists the
        candidates when several match."""
        if self._indexes.has_entity(entity_id):  # memories use it as given: no query (a timeline recall's case)
            return entity_id
        return self._entities.resolve(entity_id)

    def resolve_memory_id(self, text: str) -> str:
        """The full id a short id means: an id as given, else the one memory whose id starts or ends with the
        text (the workbench shows the last 8 characters); AmbiguousMemoryIdError lists the candidates when
        several match, MemoryNotFoundError when none does."""
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

    def edges_of(self, memory_id: str) -> list[Edge]:
        return self._store.edges_of(memory_id)

    def entities(self) -> list[str]:
        """Entity ids that have memories on a timeline."""
        return self._indexes.timeline.entities()

    def structure_of(self, memory_id: str) -> dict[str, Any]:
        """The relational structure stored with a memory (what analogical recall compares)."""
        with store_errors(self.data_dir):
            self._structures.catch_up()
        record = self._store.get_record(memory_id)
        if record is None:
            raise MemoryNotFoundError(f"no memory with id {memory_id}")
        return dict(record.structure)

    def reextract_structures(self, *, all_memories: bool = False) -> int:
        """Re-extract stored structures written by another extractor version (or every one) and rebuild the
        feature index, as every index is rebuilt from the record store. Returns how many were rebuilt."""
        from engine.analogy.graph import GRAPH_VERSION

        self._structures.catch_up()
        with self._lock:
            self._structures_checked = True
            if all_memories:
                stale = self._store.stale_structures(-1)
            elif getattr(self._writer.extractor, "name", "") != "episode":
                return 0
            else:
                stale = self._store.stale_structures(GRAPH_VERSION)
            for start in range(0, len(stale), 1000):
                chunk = stale[start : start + 1000]
                found = self._writer.extractor.extract([content for _, content in chunk])
                self._store.set_structures([(i, c, s) for (i, c), s in zip(chunk, found, strict=True)])
            if stale:
                self._indexes.structures_replaced()
            return len(stale)

    def analyze(self, text: str) -> dict[str, Any]:
        """The relational structure of a text, e.g. a cue, as the analogical strategy sees it."""
        content = RememberRequest.parse({"content": text}).content
        return dict(self._writer.extractor.extract([content])[0])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of texts with the store's model (unit length, one row per text)."""
        return self._writer.embed(list(texts))

    def stats(self, vector_index: bool = True) -> dict[str, int | None]:
        """Counts from each store; `vector_index` is read from Chroma itself so a mismatch would show (left out,
        None, with `vector_index=False`: then nothing opens the vector index)."""
        response: StatsResponse = self.handle(StatsRequest(vector_index=vector_index))
        return response.to_dict()

    def _stats(self, request: StatsRequest) -> StatsResponse:
        return StatsResponse(
            memories=self._store.count(),
            vector_index=self._indexes.vectors.count() if request.vector_index else None,
            edges=self._store.count_edges(),
            entities=self._store.count_entities(),
            structures_pending=self._structures.pending(),
        )

    def catch_up_structures(self) -> int:
        """Extract every pending structure now (what any read of structures does first); returns how many."""
        with store_errors(self.data_dir):
            return self._structures.catch_up()

    def pending_structures(self) -> int:
        """How many memories wait for their relational structure (config.DEFER_STRUCTURES)."""
        return self._structures.pending()

    def neighbourhood(self, memory_id: str, **params: Any) -> NeighbourhoodResponse:
        """The memories within `depth` edges of a memory (both directions), nearest first, at most
        `max_nodes`, and the stored edges among them; `edge_types` restricts the walk."""
        response: NeighbourhoodResponse = self.handle(NeighbourhoodRequest.parse({"memory_id": memory_id, **params}))
        return response

    def _neighbourhood(self, request: NeighbourhoodRequest) -> NeighbourhoodResponse:
        if not self._store.existing([request.memory_id]):
            raise MemoryNotFoundError(f"no memory with id {request.memory_id}")
        revisions = self._indexes.revision_ids()
        reached: list[Reached] = []
        truncated = False
        for level in self._indexes.graph.levels(request.memory_id, request.depth, request.edge_types):
            level = [r for r in level if r.id not in revisions or r.depth == 0]
            room = request.max_nodes - len(reached)
            if len(level) > room:
                level, truncated = level[:room], True
            reached.extend(level)
            if truncated:
                break
        memories = self._store.get_many([r.id for r in reached])
        nodes = tuple(
            NeighbourNode(memories[r.id], r.depth, r.path, None if r.edge_type is None else r.edge_type.value,
                          r.direction)
            for r in reached
            if r.id in memories
        )
        allowed = request.edge_types
        edges = tuple(
            e for e in self._store.edges_among([n.memory.id for n in nodes]) if allowed is None or e.type in allowed
        )
        return NeighbourhoodResponse(request.memory_id, nodes, edges, truncated)

    # --- recall ----------------------------------------------------------------------------------------
    def recall(self, cue: str | RecallRequest = "", **params: Any) -> list[RecallResult]:
        """Run the requested strategies, fuse, score, cut to top_k, and count the recall.

        Parameters are the fields of `engine.api.RecallRequest` (strategies, top_k, scoring_weights,
        entity_id, time_range, ef_search, seed_memory_id, max_depth, edge_types, analogical_alpha).
        """
        request = cue if isinstance(cue, RecallRequest) else RecallRequest.parse({"cue": cue, **params})
        response: RecallResponse = self.handle(request)
        return list(response.results)

    def _recall(self, request: RecallRequest) -> list[RecallResult]:
        return self._count_access(self.retrieve(request))

    def _count_access(self, results: list[RecallResult]) -> list[RecallResult]:
        """Every memory a recall returns gets access_count + 1 and last_accessed_at = now, persisted (not on a
        read-only data dir: recall still works there, without counting)."""
        if not results or self._store.read_only:
            return results
        now = self.clock.now()
        self._store.record_access([r.memory.id for r in results], now)
        return [
            dataclasses.replace(
                r,
                memory=dataclasses.replace(r.memory, access_count=r.memory.access_count + 1, last_accessed_at=now),
            )
            for r in results
        ]

    def prime(self, entity_id: str, cue: str = "", **params: Any) -> list[RecallResult]:
        """An entity's memories to prime an agent with: its timeline, ranked by relevance to `cue` when
        given (else newest first by the composite), counted as a recall."""
        response: RecallResponse = self.handle(PrimeRequest.parse({"entity_id": entity_id, "cue": cue, **params}))
        return list(response.results)

    def _prime(self, request: PrimeRequest) -> list[RecallResult]:
        strategies = [Strategy.TEMPORAL, Strategy.SIMILARITY] if request.cue.strip() else [Strategy.TEMPORAL]
        recall = RecallRequest(
            cue=request.cue,
            strategies=tuple(strategies),
            top_k=config.MAX_TOP_K,
            scoring_weights=request.scoring_weights,
            entity_id=request.entity_id,
        )
        results = self.retrieve(recall)
        entity = self.resolve_entity(request.entity_id)
        mine = [r for r in results if r.memory.entity_id == entity][: request.top_k]
        return self._count_access(mine)

    def retrieve(self, request: RecallRequest) -> list[RecallResult]:
        """Recall without counting it: the candidates, scored and ranked. Notebooks and benchmarks use it."""
        inputs = self._recall_inputs(request)
        request = inputs.request
        candidates = self._fused_candidates(inputs) if request.fused else _best_of(self._run_strategies(inputs))
        results = self._rank(candidates, request.scoring_weights, request.top_k)
        if Strategy.LEXICAL in request.strategies:
            results = with_matched_terms(results, self._store, request.cue)
        if request.strategies == (Strategy.TEMPORAL,):
            # A timeline is read in the order things happened.
            results.sort(key=lambda r: (r.memory.created_at, r.memory.id))
        return results

    def fusion_frame(self, request: RecallRequest) -> FusionFrame:
        """The benchmark hook: a fused recall's evidence before weighting (pool, per-signal z-scores,
        episodes), so a grid of fusion settings is scored without searching again. Read-only."""
        inputs = self._recall_inputs(request)
        return fusion_frame(inputs, self._fused_hits(inputs))

    def _recall_inputs(self, request: RecallRequest) -> RecallInputs:
        """Everything the strategies read for one recall: the cue's embedding and parse, the indexes."""
        if request.seed_memory_id is not None and not self._store.existing([request.seed_memory_id]):
            raise MemoryNotFoundError(f"seed memory {request.seed_memory_id} does not exist")
        if request.entity_id is not None:
            resolved = self.resolve_entity(request.entity_id)
            if resolved != request.entity_id:
                request = dataclasses.replace(request, entity_id=resolved)
        cue_parse: Callable[[], dict[str, Any]] = dict
        if Strategy.ANALOGICAL in request.strategies:
            self._structures.catch_up()  # the read barrier: no pending structure is missed
            if not self._structures_checked:
                self.reextract_structures()
            # The cue's parse (spaCy) overlaps its embedding (onnxruntime): both release the GIL for their
            # kernels. Only analogical recall waits for it; the other strategies run meanwhile.
            parsing = self._strategy_pool().submit(self._writer.extractor.extract, [request.cue])

            def cue_parse() -> dict[str, Any]:
                return parsing.result()[0]
        if request.needs_cue_embedding and not self._indexes.vectors_open and not self._searches_exactly(request):
            self._indexes.open_vectors_meanwhile()  # a cold start imports Chroma while the model loads
        cue_embedding, unnamed_embedding = self._cue_embeddings(request)
        indexes = self._indexes
        inputs = RecallInputs(
            request=request,
            cue_embedding=cue_embedding,
            cue_parse=cue_parse,
            store=self._store,
            vectors=lambda: indexes.vectors,
            timeline=lambda: indexes.timeline,
            graph=lambda: indexes.graph,
            structures=lambda: indexes.structures,
            excluded=frozenset(indexes.revision_ids()),
            now=self.clock.now(),
            candidates=indexes.candidates,
            postings=indexes.lexical_postings(),
            unnamed_embedding=unnamed_embedding,
        )
        return inputs

    def _searches_exactly(self, request: RecallRequest) -> bool:
        """Whether a fused recall will search a small store exactly, in the candidate table (`_fused_hits`),
        so it never touches the vector index: a cold `hebbs recall` then does not import Chroma at all."""
        fusion = request.fusion
        return request.fused and fusion.exact_search and self._store.count() <= config.EXACT_SEARCH_MAX_MEMORIES

    def _cue_embeddings(self, request: RecallRequest) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The cue's embedding and, when a fused recall weighs `similarity_unnamed` and the cue names an
        entity of the store, the embedding of the cue without that name: one batch of two for the model."""
        if not request.needs_cue_embedding:
            return None, None
        cue_unnamed = None
        weighed = request.fused and request.fusion.weight("similarity_unnamed") > 0
        if weighed and Strategy.SIMILARITY in request.strategies:
            cue_unnamed = unnamed(request.cue, self._indexes.timeline.entities())
        vectors = self._writer.embed([request.cue] if cue_unnamed is None else [request.cue, cue_unnamed])
        return vectors[0], (vectors[1] if cue_unnamed is not None else None)

    def _run_strategies(self, inputs: RecallInputs) -> list[list[Hit]]:
        strategies = inputs.request.strategies
        if len(strategies) == 1:
            return [STRATEGIES[strategies[0]](inputs)]
        return list(self._strategy_pool().map(lambda s: STRATEGIES[s](inputs), strategies))

    def _fused_candidates(self, inputs: RecallInputs) -> Candidates:
        """Several strategies' evidence added up (engine/recall/fusion.py); details only for the winners."""
        request = inputs.request
        limit = max(config.FUSION_RANKED_FACTOR * request.top_k, config.FUSION_POOL)
        fusion = fused(inputs, self._fused_hits(inputs), request.fusion, limit)
        return Candidates(dict(zip(fusion.ids, fusion.relevance, strict=True)), fusion.details)

    def _fused_hits(self, inputs: RecallInputs) -> dict[Strategy, list[Hit]]:
        """Each strategy's hits for a fused recall. Similarity and lexical search a pool wider than top_k,
        exactly (HNSW asked for every memory) when the store is small."""
        request = inputs.request
        ef, exact = request.ef_search, False
        if request.fusion.exact_search:
            table = inputs.table()
            count = len(table) if table is not None else self._store.count()
            if count <= config.EXACT_SEARCH_MAX_MEMORIES:
                ef, exact = max(ef, count), True
        pool_k = max(request.top_k, config.FUSION_POOL)
        wide = dataclasses.replace(
            inputs, request=dataclasses.replace(request, ef_search=ef, top_k=pool_k), exact=exact
        )
        narrow = dataclasses.replace(inputs, request=dataclasses.replace(request, ef_search=ef), exact=exact)
        seeding = narrow
        if Strategy.SIMILARITY in request.strategies and request.seed_memory_id is None:
            # The causal seed (the cue's nearest memory) is the first of similarity's wider search: one HNSW
            # search instead of two (a wider search finds the same nearest memory, or a nearer one).
            width = max(inputs.overfetch(pool_k), ef)
            seeding = dataclasses.replace(inputs, request=dataclasses.replace(request, ef_search=width), exact=exact)

        def run(strategy: Strategy) -> list[Hit]:
            chosen = wide if strategy in (Strategy.SIMILARITY, Strategy.LEXICAL) else narrow
            return STRATEGIES[strategy](seeding if strategy == Strategy.CAUSAL else chosen)

        strategies = request.strategies
        many = len(strategies) > 1
        hit_lists = list(self._strategy_pool().map(run, strategies)) if many else [run(strategies[0])]
        return dict(zip(strategies, hit_lists, strict=True))

    def _strategy_pool(self) -> ThreadPoolExecutor:
        """One pool for the engine's life: starting threads on every recall cost more than a strategy."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=len(Strategy), thread_name_prefix="hebbs-recall")
            return self._pool

    def _rank(self, candidates: Candidates, weights: scoring.ScoringWeights, top_k: int) -> list[RecallResult]:
        """Score and cut to top_k, reading whole memories (and building strategy details) for the winners only.

        A candidate's score needs just its importance, created_at and access_count: a temporal pool of
        hundreds is scored from those and only the top_k are read and parsed in full. A single strategy's few
        candidates (at most 2 x top_k, all of them contenders) are read whole at once: one query, not two.
        """
        best = candidates.relevance
        now = self.clock.now()
        memories: dict[str, Memory] | None = None
        contenders: list[tuple[str, datetime | None, float, int]]
        if len(best) <= 2 * top_k:
            memories = self._store.get_many(list(best))  # drops anything forgotten meanwhile
            contenders = [(i, m.created_at, m.importance, m.access_count) for i, m in memories.items()]
        else:
            inputs = self._store.score_inputs(list(best))
            relevance = np.array([best[i] for i in inputs.ids], dtype=np.float64)
            contenders = [
                (inputs.ids[n], from_micros(int(inputs.created_us[n])), float(inputs.importance[n]),
                 int(inputs.access_count[n]))
                for n in _contenders(relevance, inputs, now, weights, top_k)
            ]
        ranked = []
        for i, created, importance, access_count in contenders:
            assert created is not None
            signals = scoring.signals_from(best[i], created, importance, access_count, now)
            score = scoring.composite(signals, weights)
            ranked.append((scoring.sort_key(score, signals.relevance, created, i), score, signals, i))
        ranked.sort(key=lambda r: r[0])
        winners = ranked[:top_k]
        if memories is None:
            memories = self._store.get_many([i for *_, i in winners])
        details = candidates.details([i for *_, i in winners if i in memories])
        return [
            RecallResult(memories[i], score, signals, tuple(details[i]))
            for _, score, signals, i in winners
            if i in memories
        ]

    @staticmethod
    def rescore(
        results: Sequence[RecallResult], weights: scoring.ScoringWeights | Mapping[str, float] | str
    ) -> list[RecallResult]:
        """Re-rank results under new weights. Pure: no retrieval and no access counting."""
        request = RescoreRequest.parse({"results": list(results), "scoring_weights": weights})
        return scoring.rescore(request.results, request.scoring_weights)

    # --- benchmarks ----------------------------------------------------------------------------------------
    def raw_vector_query(self, embedding: np.ndarray, n: int) -> Any:
        """The benchmark hook: one plain Chroma query on this store's collection, nothing around it. The
        speed floor of a similarity recall is `embed` + this; benchmarks report recall relative to it."""
        return self._indexes.vectors.raw_query(embedding, n)


class Candidates(NamedTuple):
    """What the composite score ranks: each candidate's relevance, and its strategies' details on demand (a
    fused recall builds them for the few winners only)."""

    relevance: Mapping[str, float]
    details: Callable[[Collection[str]], Mapping[str, Sequence[StrategyDetail]]]


# Bound on the difference between numpy's composite score and the exact one (float rounding, about 1e-15).
_SCORE_SLACK = 1e-9


def _contenders(
    relevance: np.ndarray, inputs: ScoreInputs, now: datetime, weights: scoring.ScoringWeights, top_k: int
) -> list[int]:
    """Positions (in `inputs`) of the candidates that can be among the `top_k` (`relevance`: each one's, in the
    same order): the pool is scored at once in numpy and only those within `_SCORE_SLACK` of the k-th best
    numpy score are scored exactly (and tie-broken) in Python. Exact: every one of the true top_k scores at
    least the k-th best exact score, which is within the slack of the k-th best numpy score, so the ranking
    and scores are those of scoring every candidate exactly."""
    count = len(inputs.ids)
    if count <= 2 * top_k:
        return list(range(count))
    approx = scoring.composite_arrays(
        relevance, inputs.created_us, inputs.importance, inputs.access_count, to_micros(now), weights
    )
    kth = float(np.partition(approx, count - top_k)[count - top_k])
    return np.flatnonzero(approx >= kth - _SCORE_SLACK).tolist()


def _best_of(hit_lists: Sequence[list[Hit]]) -> Candidates:
    """One strategy's hits as candidates (de-duplicated by id, keeping the highest relevance)."""
    out: dict[str, tuple[float, list[StrategyDetail]]] = {}
    for hits in hit_lists:
        for h in hits:
            relevance, details = out.get(h.id, (0.0, []))
            out[h.id] = (max(relevance, h.relevance), [*details, h.detail])
    return Candidates({i: r for i, (r, _) in out.items()}, lambda ids: {i: out[i][1] for i in ids})


def _make_private_dir(folder: Path) -> None:
    """Create the data dir readable by its owner only (0700); one that exists keeps its mode."""
    if not folder.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)


def _create_private_file(path: Path) -> None:
    """Create the record store's file 0600 before SQLite opens it: SQLite gives its WAL and shared-memory
    files the database file's mode, so the memories' text is never readable by other users."""
    if not path.exists() and os.access(path.parent, os.W_OK):
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
