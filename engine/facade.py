"""`MemoryEngine`: the one facade every interface calls (CLI, servers, workbench, notebooks).

Each operation has a request type in `engine.api`; `handle(request)` runs any of them and returns its
response, which is what transports call. The keyword-argument methods below are the Python API: each
builds its request with the same `parse`, so validation is identical everywhere. Writes go through the
`Writer`, reads through the record store and the derived `DerivedIndexes`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import review
from engine.analogy.text import EpisodeExtractor, StructureExtractor
from engine.api.requests import (
    AddEdgesRequest,
    ForgetRequest,
    GetPolicyRequest,
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
    SetPolicyRequest,
    StatsRequest,
    SweepRequest,
)
from engine.api.responses import (
    EdgesResponse,
    ForgetResponse,
    ListResponse,
    MemoriesResponse,
    NeighbourhoodResponse,
    RecallResponse,
    StatsResponse,
)
from engine.clock import Clock, SystemClock
from engine.decay import stamp
from engine.embedding import Embedder, create_embedder
from engine.errors import MemoryNotFoundError, StoreError, ValidationError
from engine.index.derived import DerivedIndexes
from engine.index.replica import ReplicaFollower
from engine.index.vector import VectorIndex
from engine.models import Edge, EdgeType, Memory, NewMemory, RecallResult
from engine.recall import scoring
from engine.recall.browse import Browser
from engine.recall.fusion import FusionFrame
from engine.recall.neighbourhood import neighbourhood
from engine.recall.recaller import Recaller
from engine.retention import Retention
from engine.store.entities import EntityRegistry
from engine.store.errors import store_errors
from engine.store.interface import KeyStorage
from engine.store.opening import default_database, known_tenants, open_storage
from engine.store.replies import Replies
from engine.structures import StructureFollower
from engine.tenancy import DEFAULT_TENANT, tenant_name
from engine.writer import Writer

if TYPE_CHECKING:
    import numpy as np

    from engine.ingest.analysis import DocumentExtractor
    from engine.ingest.summary import IngestSummary

Response = Any  # each request's response type: see `MemoryEngine.handle`


class MemoryEngine:
    """Remember, recall, revise and forget memories in one data directory, or (`database`, a postgresql:// URL)
    in a PostgreSQL database that several engines and servers share (engine/store/opening.py).

    Collaborators are injectable: `embedder` (default: all-MiniLM-L6-v2, loaded on first use), `clock`
    (default: system UTC), `extractor` (relational structure), `vector_index` (default: embedded Chroma
    under the data dir). DerivedIndexes are built lazily, so opening a store to read one memory is fast.

    `tenant` (engine/tenancy.py): whose memories; each tenant has a store and indexes of its own, so an engine
    sees one tenant's memories and no other's. `default` is the store as it was before tenants.
    """

    def __init__(
        self,
        data_dir: str | Path | None = None,
        *,
        database: str | None = None,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        extractor: StructureExtractor | None = None,
        vector_index: VectorIndex | Callable[[], VectorIndex] | None = None,
        tenant: str = DEFAULT_TENANT,
    ) -> None:
        database = database or (default_database() if data_dir is None else None)
        self.tenant = tenant_name(tenant)
        self._owner, self._store, self.data_dir = open_storage(data_dir, database, self.tenant)
        self._placement = (data_dir, database, vector_index is not None)
        self.clock: Clock = clock or SystemClock()
        # Cues are read as episodes unless told otherwise (structures of another extractor are re-extracted).
        model = embedder or create_embedder()
        # The engine's own extractor reads stories' plots with the engine's model (engine/analogy/plot.py).
        chosen = extractor or EpisodeExtractor(embed=model.encode)
        self._indexes = DerivedIndexes(self._store, self.data_dir, vector_index)
        # A store other engines write at the same time (replicas on one PostgreSQL database): follow them.
        self._replica = ReplicaFollower(self._store, self._indexes) if self._store.shared else None
        if self._replica is not None:
            self._store.listen(self._replica.notified)
        self._writer = Writer(self._store, self._indexes, model, chosen, self.clock)
        self._entities = EntityRegistry(self._store)
        # Structures follow writes: extracted before any read of them, or when idle.
        self._structures = StructureFollower(self._store, self._indexes, lambda: self._writer.extractor, self.clock)
        self._writer.after_commit = self._structures.wrote
        self._recaller = Recaller(self._store, self._indexes, self._structures, self._entities, self._writer.embed,
                                  lambda: self._writer.extractor, self.clock)
        self._browser = Browser(self._store, self._indexes, self._entities, self._recaller.resolve_entity)
        self.retention = Retention(self._store, self._writer, self._entities, self.clock, self.data_dir,
                                   self._recaller.resolve_entity, self.tenant)
        self._handlers: dict[type, Callable[[Any], Response]] = {
            RememberRequest: lambda r: self._writer.remember([r])[0],
            RememberManyRequest: lambda r: MemoriesResponse(tuple(self._writer.remember(r.items))),
            ReviseRequest: self.retention.revise,
            ForgetRequest: self.retention.forget,
            SweepRequest: self.retention.sweep,
            SetPolicyRequest: self.retention.set_policy,
            GetPolicyRequest: self.retention.get_policy,
            AddEdgesRequest: lambda r: EdgesResponse(tuple(self._writer.add_edges(r.edges))),
            IngestRequest: lambda r: self._ingest(r.paths, None, r.extractor, r.file_seconds),
            GetRequest: lambda r: self.get(r.memory_id),
            ListRequest: self._browser.page,
            StatsRequest: self._stats,
            NeighbourhoodRequest: lambda r: neighbourhood(self._store, self._indexes, r),
            RecallRequest: lambda r: RecallResponse(tuple(self._recaller.recall(r))),
            PrimeRequest: lambda r: RecallResponse(tuple(self._recaller.prime(r))),
            RescoreRequest: lambda r: RecallResponse(tuple(scoring.rescore(r.results, r.scoring_weights, r.top_k))),
        }
        # Reflect, insights, contradictions; each write's contradiction check follows it like structures do.
        self._checks = review.install(self._handlers, self._writer)
        self._structures.also_idle(self._checks)

    # --- lifecycle -------------------------------------------------------------------------------------
    def close(self) -> None:
        self._structures.close()  # after the batch in hand; the rest stays pending, durable
        self._recaller.close()
        self._store.close()
        self._owner.release()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open_tenant(self, tenant: str, vector_index: Callable[[], VectorIndex] | None = None) -> MemoryEngine:
        """An engine of another tenant of the same data dir or database, sharing this one's model and clock
        (servers open one per tenant: engine/tenants.py). An engine given its vector index must be given the
        other tenant's too: one index holding two tenants' vectors would mix them."""
        data_dir, database, injected = self._placement
        if injected and vector_index is None:
            raise StoreError("this engine's vector index was given to it: give tenant "
                             f"{tenant_name(tenant)!r} a vector index of its own")
        return MemoryEngine(data_dir, database=database, embedder=self.embedder, clock=self.clock,
                            extractor=self.extractor, vector_index=vector_index, tenant=tenant)

    def tenants(self) -> list[str]:
        """The tenants with a store beside this engine's, `default` first."""
        data_dir, database, _ = self._placement
        return known_tenants(data_dir, database)

    @property
    def replies(self) -> Replies:
        """Replies kept under idempotency keys (servers use them: engine/store/replies.py)."""
        return Replies(self._store)

    @property
    def shared_keys(self) -> KeyStorage | None:
        """Where servers on this engine's database keep their API keys, when other servers share it
        (PostgreSQL); None: the keys are the data dir's (interfaces/auth.py)."""
        return self._store if self._store.shared and isinstance(self._store, KeyStorage) else None

    @property
    def embedder(self) -> Embedder:
        return self._writer.embedder

    @property
    def extractor(self) -> StructureExtractor:
        return self._writer.extractor

    def warm(self) -> None:
        """Build every index now (servers and benchmarks pay the cost up front, not on the first recall), and
        let the idle worker extract structures (and run contradiction checks) an earlier writer left pending."""
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
            if self._replica is not None:
                self._replica.catch_up()
            return stamp(handler(request), self.clock.now(), self.retention.policies.get().decay_half_life_days)

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

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """A bulk import: `remember_many` / `add_edges` calls inside commit as usual, while recall's derived
        structures (posting lists, candidate table) catch up once at the end instead of after every batch
        (`DerivedIndexes.deferred`): much faster for big imports; a recall meanwhile still sees every write."""
        with self._indexes.deferred():
            yield

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
        extractor: DocumentExtractor | str | None = None,
        file_seconds: float | None = None,
    ) -> IngestSummary:
        """Index documents (files or folders of Markdown, text, JSON chats) into memories: documents,
        propositions, entities, dates, and derived edges. Idempotent; see `engine.ingest`. Returns an
        `IngestSummary`; `progress(phase, done, total)` is called as it goes. `extractor` is `offline`,
        `llm` or an `DocumentExtractor` instance. `file_seconds`: the per-file analysis time budget (a file over it
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
        extractor: DocumentExtractor | str | None, file_seconds: float | None = None,
    ) -> IngestSummary:
        from engine.ingest.pipeline import ingest_paths

        # The idle worker does not parse beside the ingest's own spaCy; recall's derived structures (candidate
        # table, posting lists) catch up once at the end rather than after each batch's commit (`bulk`): the
        # writing phase's largest part after Chroma's insert. A recall meanwhile still catches up first.
        with self._structures.held(), self._indexes.deferred():
            return ingest_paths(self._writer, paths, progress=progress, extractor=extractor,
                               file_seconds=file_seconds)

    def revise(self, memory_id: str, **changes: Any) -> Memory:
        """Change a memory in place (same id); its previous state is kept as a `revision` memory.
        Changes: content, importance, context, entity_id (at least one)."""
        memory: Memory = self.handle(ReviseRequest.parse({"memory_id": memory_id, **changes}))
        return memory

    def forget(
        self, memory_ids: Sequence[str] | str = (), *, entity_id: str | None = None, prefix: bool = False,
        **criteria: Any,
    ) -> list[str]:
        """Remove memories and their revisions from every index: by id, every memory of an entity, or those
        matching criteria (not_accessed_since, access_count_below, kind, decay_score_below), all ANDed.
        `entity_id` must be exact unless `prefix=True` (then an alias or unique prefix is resolved first)."""
        response: ForgetResponse = self.handle(ForgetRequest.parse(
            {"memory_ids": memory_ids, "entity_id": entity_id, "prefix": prefix, **criteria}))
        return list(response.forgotten)

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

    def search_text(self, text: str, **filters: Any) -> ListResponse:
        """`list_page` restricted to memories whose content contains `text` (case-insensitive for ASCII
        letters): a plain substring search for people browsing a store, not a ranked recall."""
        needle = text.strip()
        if not needle:
            raise ValidationError("a search text is required")
        return self._browser.page(ListRequest.parse(filters), contains=needle)

    def revisions_of(self, memory_id: str) -> list[Memory]:
        """The earlier states of a memory (each revise keeps one as a `revision` memory), newest first."""
        return self._browser.revisions_of(memory_id)

    def entities_named_in(self, text: str) -> list[str]:
        """Entities with memories that a text names (their id or a registry alias, as whole words), in the
        order the text first names them: e.g. the entity a temporal recall of a cue is about."""
        return self._browser.entities_named_in(text)

    def resolve_entity(self, entity_id: str) -> str:
        """The entity id a name means: as given when memories use it, else the id of an indexed entity it is
        an alias or unique prefix of ("meridian" -> "meridian analytics"); AmbiguousEntityError lists the
        candidates when several match."""
        return self._recaller.resolve_entity(entity_id)

    def resolve_memory_id(self, text: str) -> str:
        """The full id a short id means: an id as given, else the one memory whose id starts or ends with the
        text (the workbench shows the last 8 characters); AmbiguousMemoryIdError lists the candidates when
        several match, MemoryNotFoundError when none does."""
        return self._browser.resolve_memory_id(text)

    def edges_of(self, memory_id: str) -> list[Edge]:
        return self._store.edges_of(memory_id)

    def entities(self) -> list[str]:
        """Entity ids that have memories on a timeline."""
        return list(self._indexes.timeline.entities())

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
        return self._structures.reextract(all_memories)

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
        """How many memories wait for their relational structure."""
        return self._structures.pending()

    def catch_up_contradictions(self) -> int:
        """Run every pending contradiction check now (what `contradiction_prepare` does first); returns how many
        candidates it proposed."""
        with store_errors(self.data_dir):
            return self._checks.catch_up()

    def pending_contradiction_checks(self) -> int:
        """How many written memories wait for their contradiction check."""
        return self._checks.pending()

    def neighbourhood(self, memory_id: str, **params: Any) -> NeighbourhoodResponse:
        """The memories within `depth` edges of a memory (both directions), nearest first, at most
        `max_nodes`, and the stored edges among them; `edge_types` restricts the walk."""
        response: NeighbourhoodResponse = self.handle(NeighbourhoodRequest.parse({"memory_id": memory_id, **params}))
        return response

    # --- recall ----------------------------------------------------------------------------------------
    def recall(self, cue: str | RecallRequest = "", **params: Any) -> list[RecallResult]:
        """Run the requested strategies, fuse, score, cut to top_k, and count the recall.

        Parameters are the fields of `engine.api.RecallRequest` (strategies, top_k, scoring_weights,
        entity_id, time_range, ef_search, seed_memory_id, max_depth, edge_types, analogical_alpha).
        """
        request = cue if isinstance(cue, RecallRequest) else RecallRequest.parse({"cue": cue, **params})
        response: RecallResponse = self.handle(request)
        return list(response.results)

    def prime(self, entity_id: str, cue: str = "", **params: Any) -> list[RecallResult]:
        """An entity's memories to prime an agent with: its timeline, ranked by relevance to `cue` when
        given (else newest first by the composite), counted as a recall."""
        response: RecallResponse = self.handle(PrimeRequest.parse({"entity_id": entity_id, "cue": cue, **params}))
        return list(response.results)

    def retrieve(self, request: RecallRequest) -> list[RecallResult]:
        """Recall without counting it: the candidates, scored and ranked. Notebooks and benchmarks use it."""
        return self._recaller.retrieve(request)

    def fusion_frame(self, request: RecallRequest) -> FusionFrame:
        """The benchmark hook: a fused recall's evidence before weighting (pool, per-signal z-scores,
        episodes), so a grid of fusion settings is scored without searching again. Read-only."""
        return self._recaller.fusion_frame(request)

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
