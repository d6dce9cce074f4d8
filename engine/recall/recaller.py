"""`Recaller`: the recall pipeline, from a request to ranked, counted results.

One recall: the request's entity is resolved, the cue embedded (and parsed, for analogical recall) into
`RecallInputs`; the strategies run (concurrently when several), their hits are fused (engine/recall/fusion.py)
or taken best-of, ranked by the composite score (engine/recall/ranking.py), and the returned memories'
accesses are counted. The facade hands requests here; strategies read the indexes, never the facade.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from engine import config
from engine.analogy.text import StructureExtractor
from engine.api.requests import PrimeRequest, RecallRequest
from engine.clock import Clock
from engine.errors import MemoryNotFoundError
from engine.index.derived import DerivedIndexes
from engine.models import RecallResult, Strategy
from engine.recall.fusion import FusionFrame, fused
from engine.recall.fusion import frame as fusion_frame
from engine.recall.lexical import LEXICAL_POOL, lexical, with_matched_terms
from engine.recall.lexical_query import terms
from engine.recall.presets import PLAIN_FUSION
from engine.recall.ranking import Candidates, best_of, rank
from engine.recall.strategies import (
    ANALOGICAL_CANDIDATE_FACTOR,
    ANALOGICAL_CANDIDATE_MIN,
    Hit,
    RecallInputs,
    analogical,
    causal,
    gathered_here,
    similarity,
    temporal,
)
from engine.recall.unnamed import unnamed
from engine.store.entities import EntityRegistry
from engine.store.interface import Storage
from engine.store.lexical import TABLES
from engine.structures import StructureFollower

# Fused recalls rank a candidate pool at least this large (similarity and lexical each contribute it).
FUSION_POOL = 100
# The fused list handed to the composite score: this many times top_k (at least FUSION_POOL); the rest of
# the pool only served to normalise and smooth.
FUSION_RANKED_FACTOR = 4
# Stores up to this many memories are searched exactly (HNSW asked for every memory = brute force).
EXACT_SEARCH_MAX_MEMORIES = 5000
# Threads that gather a fused recall's embeddings while its frame reads the rest (`gather_meanwhile`); with every
# one of them busy (many recalls at once) a recall gathers its own.
GATHER_THREADS = 2


# A lexical search's answer: (memory id, BM25 score), best first.
Found = list[tuple[str, float]]

# Which function runs each strategy.
STRATEGIES: dict[Strategy, Callable[[RecallInputs], Sequence[Hit]]] = {
    Strategy.SIMILARITY: similarity,
    Strategy.TEMPORAL: temporal,
    Strategy.CAUSAL: causal,
    Strategy.ANALOGICAL: analogical,
    Strategy.LEXICAL: lexical,
}


def _searches_alike(narrow: RecallInputs, wide: RecallInputs) -> bool:
    """Whether analogical's search of the cue's neighbours (`narrow` inputs) is the one similarity's wider pool and
    the causal seed read (`wide`): the same width, so one Chroma query answers all three (`RecallInputs.nearest`)."""
    request = narrow.request
    if request.analogical_alpha <= 0:  # structure alone: analogical searches no embedding neighbours
        return False
    pool = max(request.top_k * ANALOGICAL_CANDIDATE_FACTOR, ANALOGICAL_CANDIDATE_MIN)
    return (max(narrow.overfetch(pool), request.ef_search)
            == max(wide.overfetch(wide.request.top_k), wide.request.ef_search))


class Recaller:
    """Runs recalls over one store's indexes: inputs, strategy pools, fusion, ranking, access counting."""

    def __init__(
        self,
        store: Storage,
        indexes: DerivedIndexes,
        structures: StructureFollower,
        entities: EntityRegistry,
        embed: Callable[[list[str]], np.ndarray],
        extractor: Callable[[], StructureExtractor],
        clock: Clock,
    ) -> None:
        self._store = store
        self._indexes = indexes
        self._structures = structures
        self._embed = embed
        self._extractor = extractor
        self._clock = clock
        self._entities = entities
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None  # runs a multi-strategy recall's strategies concurrently
        self._gatherer: ThreadPoolExecutor | None = None  # `gather_meanwhile`'s threads
        self._gather_slots = threading.BoundedSemaphore(GATHER_THREADS)

    def close(self) -> None:
        with self._lock:
            pools, self._pool, self._gatherer = (self._pool, self._gatherer), None, None
        for pool in pools:
            if pool is not None:
                pool.shutdown(wait=True)

    # --- counted recalls ---------------------------------------------------------------------------------
    def recall(self, request: RecallRequest) -> list[RecallResult]:
        return self.count_access(self.retrieve(request))

    def prime(self, request: PrimeRequest) -> list[RecallResult]:
        """An entity's timeline, ranked by relevance to the cue when given, cut to top_k and counted."""
        strategies = [Strategy.TEMPORAL, Strategy.SIMILARITY] if request.cue.strip() else [Strategy.TEMPORAL]
        recall = RecallRequest(
            cue=request.cue,
            strategies=tuple(strategies),
            top_k=config.MAX_TOP_K,
            scoring_weights=request.scoring_weights,
            entity_id=request.entity_id,
            preset=None,  # its own mix, not the default preset
            fusion=PLAIN_FUSION,
        )
        results = self.retrieve(recall)
        entity = self.resolve_entity(request.entity_id)
        mine = [r for r in results if r.memory.entity_id == entity][: request.top_k]
        return self.count_access(mine)

    def count_access(self, results: list[RecallResult]) -> list[RecallResult]:
        """Every memory a recall returns gets access_count + 1 and last_accessed_at = now, persisted (not on a
        read-only data dir: recall still works there, without counting)."""
        if not results or self._store.read_only:
            return results
        now = self._clock.now()
        self._store.record_access([r.memory.id for r in results], now)
        return [
            dataclasses.replace(
                r,
                memory=dataclasses.replace(r.memory, access_count=r.memory.access_count + 1, last_accessed_at=now),
            )
            for r in results
        ]

    def resolve_entity(self, entity_id: str) -> str:
        """The entity id a name means: as given when memories use it, else the id of an indexed entity it is
        an alias or unique prefix of; AmbiguousEntityError lists the candidates when several match."""
        if self._indexes.has_entity(entity_id):  # memories use it as given: no query (a timeline recall's case)
            return entity_id
        return self._entities.resolve(entity_id)

    # --- uncounted -----------------------------------------------------------------------------------------
    def retrieve(self, request: RecallRequest) -> list[RecallResult]:
        """The candidates, scored and ranked, without counting the recall."""
        inputs = self._inputs(request)
        request = inputs.request
        candidates = self._fused_candidates(inputs) if request.fused else best_of(self._run_strategies(inputs))
        results = rank(self._store, candidates, request.scoring_weights, request.top_k, self._clock.now())
        if Strategy.LEXICAL in request.strategies:
            results = with_matched_terms(results, self._store, request.cue)
        if request.strategies == (Strategy.TEMPORAL,):
            # A timeline is read in the order things happened.
            results.sort(key=lambda r: (r.memory.created_at, r.memory.id))
        return results

    def fusion_frame(self, request: RecallRequest) -> FusionFrame:
        """A fused recall's evidence before weighting (pool, per-signal z-scores, episodes)."""
        inputs = self._inputs(request)
        return fusion_frame(inputs, self._fused_hits(inputs))

    # --- the pipeline --------------------------------------------------------------------------------------
    def _inputs(self, request: RecallRequest) -> RecallInputs:
        """Everything the strategies read for one recall: the cue's embedding and parse, the indexes."""
        if request.seed_memory_id is not None and not self._store.existing([request.seed_memory_id]):
            raise MemoryNotFoundError(f"seed memory {request.seed_memory_id} does not exist")
        if request.entity_id is not None:
            resolved = self.resolve_entity(request.entity_id)
            if resolved != request.entity_id:
                request = dataclasses.replace(request, entity_id=resolved)
        cue_parse: Callable[[], dict[str, Any]] = dict
        if Strategy.ANALOGICAL in request.strategies:
            self._structures.before_analogical_read()  # the read barrier: no pending structure is missed
            # The cue's parse (spaCy) overlaps its embedding (onnxruntime): both release the GIL for their
            # kernels. Only analogical recall waits for it; the other strategies run meanwhile.
            parsing = self._strategy_pool().submit(self._extractor().extract, [request.cue])

            def cue_parse() -> dict[str, Any]:
                return parsing.result()[0]

        if request.needs_cue_embedding and not self._indexes.vectors_open and not self._searches_exactly(request):
            self._indexes.open_vectors_meanwhile()  # a cold start imports Chroma while the model loads
        lexical_ahead = self._search_text_meanwhile(request)
        cue_embedding, unnamed_embedding = self._cue_embeddings(request)
        indexes = self._indexes
        return RecallInputs(
            request=request,
            cue_embedding=cue_embedding,
            cue_parse=cue_parse,
            store=self._store,
            vectors=lambda: indexes.vectors,
            timeline=lambda: indexes.timeline,
            graph=lambda: indexes.graph,
            feature_index=lambda: indexes.feature_index,
            plot_index=lambda: indexes.plot_index,
            excluded=frozenset(indexes.revision_ids()),
            now=self._clock.now(),
            candidates=indexes.candidates,
            postings=indexes.lexical_postings(),
            unnamed_embedding=unnamed_embedding,
            lexical_ahead=lexical_ahead,
            gather_meanwhile=self.gather_meanwhile,
        )

    def _search_text_meanwhile(self, request: RecallRequest) -> dict[tuple[str, tuple[str, ...], int], Future[Found]]:
        """The lexical strategy's two BM25 searches, begun on the strategy pool while the cue is embedded (the
        model releases the GIL): they need no embedding, and searched after it they added their time to the
        recall's. Keyed as `RecallInputs.lexical_search` asks; a search asked otherwise runs then.

        One pool task runs both in turn, so the model keeps a core to itself: as two tasks, three threads shared
        the two cores and the embedding, which the recall waits for first, took 8.5 ms instead of 6.3 on the 1M
        store (docs/scaling.md, session 20)."""
        postings = self._indexes.lexical_postings()
        if Strategy.LEXICAL not in request.strategies or postings is None or not request.needs_cue_embedding:
            return {}
        words = tuple(terms(request.cue))
        if not words:
            return {}
        limit = max(LEXICAL_POOL, max(request.top_k, FUSION_POOL) if request.fused else request.top_k)
        k1, b = config.LEXICAL_BM25_K1, config.LEXICAL_BM25_B
        searches: dict[tuple[str, tuple[str, ...], int], Future[Found]] = {
            (table, words, limit): Future() for table in TABLES}

        def search_all() -> None:
            for (table, _, _), answer in searches.items():
                if answer.set_running_or_notify_cancel():
                    try:
                        answer.set_result(postings.search(table, words, limit, k1, b))
                    except BaseException as exc:  # handed to whoever reads the answer
                        answer.set_exception(exc)

        self._strategy_pool().submit(search_all)
        return searches

    def _searches_exactly(self, request: RecallRequest) -> bool:
        """Whether a fused recall will search a small store exactly, in the candidate table (`_fused_hits`),
        so it never touches the vector index: a cold `hebbs recall` then does not import Chroma at all."""
        fusion = request.fusion
        return request.fused and fusion.exact_search and self._store.count() <= EXACT_SEARCH_MAX_MEMORIES

    def _cue_embeddings(self, request: RecallRequest) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The cue's embedding and, when a fused recall weighs `similarity_unnamed` and the cue names an
        entity of the store, the embedding of the cue without that name: one batch of two for the model."""
        if not request.needs_cue_embedding:
            return None, None
        cue_unnamed = None
        weighed = request.fused and request.fusion.weight("similarity_unnamed") > 0
        if weighed and Strategy.SIMILARITY in request.strategies:
            cue_unnamed = unnamed(request.cue, self._indexes.entity_names())
        vectors = self._embed([request.cue] if cue_unnamed is None else [request.cue, cue_unnamed])
        return vectors[0], (vectors[1] if cue_unnamed is not None else None)

    def _run_strategies(self, inputs: RecallInputs) -> list[Sequence[Hit]]:
        strategies = inputs.request.strategies
        if len(strategies) == 1:
            return [STRATEGIES[strategies[0]](inputs)]
        return list(self._strategy_pool().map(lambda s: STRATEGIES[s](inputs), strategies))

    def _fused_candidates(self, inputs: RecallInputs) -> Candidates:
        """Several strategies' evidence added up (engine/recall/fusion.py); details only for the winners."""
        request = inputs.request
        limit = max(FUSION_RANKED_FACTOR * request.top_k, FUSION_POOL)
        fusion = fused(inputs, self._fused_hits(inputs), request.fusion, limit)
        return Candidates(dict(zip(fusion.ids, fusion.relevance, strict=True)), fusion.details)

    def _fused_hits(self, inputs: RecallInputs) -> dict[Strategy, Sequence[Hit]]:
        """Each strategy's hits for a fused recall. Similarity and lexical search a pool wider than top_k,
        exactly (HNSW asked for every memory) when the store is small."""
        request = inputs.request
        ef, exact = request.ef_search, False
        if request.fusion.exact_search:
            table = inputs.table()
            count = len(table) if table is not None else self._store.count()
            if count <= EXACT_SEARCH_MAX_MEMORIES:
                ef, exact = max(ef, count), True
        pool_k = max(request.top_k, FUSION_POOL)
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

        def run(strategy: Strategy) -> Sequence[Hit]:
            chosen = wide if strategy in (Strategy.SIMILARITY, Strategy.LEXICAL) else narrow
            return STRATEGIES[strategy](seeding if strategy == Strategy.CAUSAL else chosen)

        # The last strategy runs on this thread while the others run on the pool: one thread handoff fewer per
        # recall (on a busy machine each one waits for a time slice), the same hits. Lexical, when its searches
        # were begun before the cue was embedded (`_search_text_meanwhile`), runs here after it: what is left of
        # it is reading their answers. On the pool it cost the default recall two handoffs (similarity's HNSW
        # search began a time slice after the embedding, and its answer reached this thread one later).
        #
        # When analogical runs here and makes the cue's HNSW search, the strategies that read only that search
        # (similarity, and causal seeded by its nearest memory) follow it here instead of waiting for it on the pool:
        # there they woke to contend with analogical's Python for the GIL (all four at 100k: the recall's process
        # CPU 0.5 ms less, the same hits; docs/scaling.md, session 21). Temporal, which needs no search, still runs
        # on the pool while this thread searches.
        strategies = request.strategies
        later = [Strategy.LEXICAL] if inputs.lexical_ahead and Strategy.LEXICAL in strategies[1:] else []
        rest = [s for s in strategies if s not in later]
        after = ([s for s in rest[:-1] if s == Strategy.SIMILARITY or (s == Strategy.CAUSAL and seeding is not narrow)]
                 if rest[-1] == Strategy.ANALOGICAL and _searches_alike(narrow, wide) else [])
        pooled = [s for s in rest[:-1] if s not in after]
        pool = self._strategy_pool() if pooled else None
        others = {s: pool.submit(run, s) for s in pooled} if pool is not None else {}
        hits = {s: run(s) for s in (rest[-1], *after, *later)}
        hits.update((s, found.result()) for s, found in others.items())
        return {s: hits[s] for s in strategies}

    def gather_meanwhile(self, gather: Callable[[np.ndarray], np.ndarray], rows: np.ndarray
                         ) -> Callable[[], np.ndarray]:
        """`gather(rows)` (a fused recall's embeddings) on a thread of its own while the frame reads the rest (numpy
        copies the rows without the GIL; on the 1M store 0.8 ms a recall beside 0.7 ms of the frame's other
        reads): what to call for them. With every gathering thread busy (many recalls at once) here and now."""
        if not self._gather_slots.acquire(blocking=False):
            return gathered_here(gather, rows)
        try:
            with self._lock:
                if self._gatherer is None:
                    self._gatherer = ThreadPoolExecutor(max_workers=GATHER_THREADS, thread_name_prefix="hebbs-gather")
                gathering = self._gatherer.submit(gather, rows)
        except BaseException:
            self._gather_slots.release()
            raise
        gathering.add_done_callback(lambda _: self._gather_slots.release())
        return gathering.result

    def _strategy_pool(self) -> ThreadPoolExecutor:
        """One pool for the engine's life: starting threads on every recall cost more than a strategy."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=len(Strategy), thread_name_prefix="hebbs-recall")
            return self._pool
