"""The four recall strategies. Each turns a request into hits: (memory id, relevance, detail).

They read the indexes only; hydration, scoring and access counting happen once, in the `Recaller`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Mapping as ReadOnlyMap
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, overload

import numpy as np

from engine import config
from engine.analogy.mapping import Mapping, map_episodes, self_score
from engine.analogy.plot import Plot, PlotMatch, decode_plot, plot_match, plot_similarity
from engine.analogy.text import StoredEpisode, episode, stored_episode
from engine.api.requests import RecallRequest
from engine.blas import one_thread
from engine.errors import MemoryNotFoundError
from engine.index.candidate_segment import row_dots
from engine.index.candidates import CandidateTable
from engine.index.edge_graph import GraphIndex, Reached
from engine.index.feature_index import FeatureIndex
from engine.index.plot_index import PlotIndex
from engine.index.postings import LexicalPostings
from engine.index.timeline import TimelineIndex
from engine.index.vector import Neighbour, VectorIndex
from engine.models import Strategy, StrategyDetail, iso_micros
from engine.recall import scoring
from engine.store.interface import Storage
from engine.store.rows import FusionRow, to_micros

# Temporal recall takes this many of an entity's newest memories in the range (times top_k, at least the
# floor) as candidates; the composite score then keeps top_k of them.
TEMPORAL_POOL_FACTOR = 20
TEMPORAL_POOL_MIN = 200
# Analogical recall looks at this many embedding neighbours (times top_k) plus structural matches.
ANALOGICAL_CANDIDATE_FACTOR = 10
# Of those, the best this many (times top_k) by the cheap stage (alpha * embedding similarity + (1 - alpha) *
# feature overlap) are structure-mapped: mapping is the dear step, and MAC/FAC maps only the survivors.
ANALOGICAL_MAPPED_FACTOR = 4
# ... and never fewer than these (the pools of the default top_k): a small top_k must not shrink the pool the
# mapper chooses from, or the cheap stage cuts the best structural match before it is mapped (top_k 1 with 10
# candidates and 4 mapped missed what top_k 10 ranked first for 9 of the 32 triad cues). Top_k 1 now returns
# top_k 10's first.
ANALOGICAL_CANDIDATE_MIN = 100
ANALOGICAL_MAPPED_MIN = 40


def temporal_pool(top_k: int) -> int:
    return max(top_k * TEMPORAL_POOL_FACTOR, TEMPORAL_POOL_MIN)


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    relevance: float
    detail: StrategyDetail


class HitColumns(Sequence[Hit]):
    """A strategy's hits as columns: their ids, their relevances (float64) and a function that makes the detail
    fields of the hits at given positions, each `Hit` made only when read. A fused recall reads the ids and
    relevances of a temporal pool of hundreds and the details of the few it keeps (engine/recall/fusion.py), and
    making every hit of the pool (a `Hit`, a `StrategyDetail`, its fields and timestamp) cost more than the rest
    of the strategy. Read as a sequence it is the list of `Hit`s the strategy made before, equal to it."""

    __slots__ = ("strategy", "ids", "relevance", "columns", "_fields", "_made")

    def __init__(self, strategy: Strategy, ids: list[str], relevance: np.ndarray,
                 fields: Callable[[list[int]], list[dict[str, Any]]],
                 columns: ReadOnlyMap[str, list[float]] | None = None) -> None:
        self.strategy = strategy
        self.ids = ids
        self.relevance = relevance
        self.columns = columns or {}  # detail fields of every hit, in order, that fusion reads as signals
        self._fields = fields
        self._made: list[Hit] | None = None

    def at(self, positions: Sequence[int]) -> list[Hit]:
        """The hits at the given positions, in that order (made now, unless all were made already)."""
        if self._made is not None:
            return [self._made[n] for n in positions]
        where = list(positions)  # a few, in a fused recall's details: Python ints, no small arrays to make
        strategy, ids, relevance = self.strategy, self.ids, self.relevance.item  # (item: a Python float)
        return [Hit(ids[n], r, StrategyDetail(strategy, r, fields))
                for n, r, fields in zip(where, map(relevance, where), self._fields(where), strict=True)]

    def _all(self) -> list[Hit]:
        if self._made is None:
            self._made = self.at(range(len(self.ids)))
        return self._made

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, n: int) -> Hit: ...

    @overload
    def __getitem__(self, n: slice) -> list[Hit]: ...

    def __getitem__(self, n: int | slice) -> Hit | list[Hit]:
        return self._all()[n]

    def __iter__(self) -> Iterator[Hit]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HitColumns):
            return self._all() == other._all()
        return self._all() == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HitColumns({self._all()!r})"


Gatherer = Callable[[Callable[[np.ndarray], np.ndarray], np.ndarray], Callable[[], np.ndarray]]


def gathered_here(gather: Callable[[np.ndarray], np.ndarray], rows: np.ndarray) -> Callable[[], np.ndarray]:
    """`gather(rows)` now, on this thread (a `Gatherer`)."""
    matrix = gather(rows)
    return lambda: matrix


@dataclass(frozen=True, slots=True)
class RecallInputs:
    """What the strategies read: the request, the cue's embedding and structure, and the indexes."""

    request: RecallRequest
    cue_embedding: np.ndarray | None
    # The cue's structure (analogical recall), asked for only where it is read: the cue's spaCy parse runs on
    # a side thread, and the strategies that do not read it run meanwhile instead of waiting for it.
    cue_parse: Callable[[], dict[str, Any]]
    store: Storage
    vectors: Callable[[], VectorIndex]
    timeline: Callable[[], TimelineIndex]
    graph: Callable[[], GraphIndex]
    feature_index: Callable[[], FeatureIndex]
    excluded: frozenset[str]  # ids never returned (revisions: history, not knowledge)
    now: datetime | None = None  # the recall's "now" (recency); the facade's clock
    # The stored plots (engine/index/plot_index.py), asked for by a story cue's analogical recall alone.
    plot_index: Callable[[], PlotIndex] = PlotIndex
    # The candidate table at the store's current version, or None (a large store: read from the store).
    candidates: Callable[[], CandidateTable | None] = lambda: None
    # Search exactly (the preset's `exact_search` on a small store): HNSW is asked for every memory, or,
    # with the candidate table in memory, the cue is compared with every stored embedding in numpy.
    exact: bool = False
    # BM25 from posting lists in memory; None: computed in SQL (`Storage.lexical_search`).
    postings: LexicalPostings | None = None
    # The cue without the entity names in it (engine/recall/unnamed.py), embedded with the cue when a fused
    # recall weighs `similarity_unnamed` and the cue names an entity; None otherwise.
    unnamed_embedding: np.ndarray | None = None
    # One recall's HNSW searches, by width: strategies that search as wide share one Chroma query.
    _searches: dict[int, list[Neighbour]] = field(default_factory=dict, compare=False, repr=False)
    _search_lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    # One recall's reads of candidate rows (`fusion_rows`): temporal's pool is read once, not again by fusion.
    _rows: dict[str, FusionRow] = field(default_factory=dict, compare=False, repr=False)
    _rows_lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    _table: list[CandidateTable | None] = field(default_factory=list, compare=False, repr=False)
    # BM25 searches begun before the cue was embedded (`Recaller._inputs`), by (table, words, limit).
    lexical_ahead: ReadOnlyMap[tuple[str, tuple[str, ...], int], Future[list[tuple[str, float]]]] = field(
        default_factory=dict, compare=False, repr=False)
    # Gathers rows of embeddings, perhaps on another thread while the caller reads the rest: what to call for them
    # (`Recaller.gather_meanwhile`; here and now by default).
    gather_meanwhile: Gatherer = field(default=gathered_here, compare=False, repr=False)

    @property
    def cue_structure(self) -> dict[str, Any]:
        return self.cue_parse()

    @property
    def cue_features(self) -> tuple[str, ...]:
        return tuple(self.cue_structure.get("features", []))

    def overfetch(self, k: int) -> int:
        """How many neighbours to ask for so that dropping excluded ids still leaves about k."""
        return k + min(len(self.excluded), k)

    def table(self) -> CandidateTable | None:
        """The candidate table, looked up once per recall (every strategy and fusion see the same one)."""
        with self._rows_lock:
            if not self._table:
                self._table.append(self.candidates())
            return self._table[0]

    def rows(self, ids: Sequence[str]) -> dict[str, FusionRow]:
        """The given memories' `fusion_rows` (embeddings included when the cue was embedded), each read from
        the store at most once per recall; ids that do not exist (forgotten meanwhile) are left out."""
        table = self.table()
        if table is not None:  # embeddings are gathered from the table's matrix by the callers (`embeddings`)
            return table.rows(ids, with_embeddings=False)
        with self._rows_lock:
            missing = [i for i in dict.fromkeys(ids) if i not in self._rows]
        if missing:
            read = self.store.fusion_rows(missing, with_embeddings=self.cue_embedding is not None)
            with self._rows_lock:
                self._rows.update(read)
        with self._rows_lock:
            return {i: self._rows[i] for i in ids if i in self._rows}

    def embeddings(self, ids: Sequence[str], rows: ReadOnlyMap[str, FusionRow]) -> np.ndarray:
        """The stored embeddings of ids that `rows` (this recall's `rows`) found, one row each, in order: from the
        candidate table's matrix in one step, else from the rows read from the store."""
        table = self.table()
        if table is not None:
            return table.embeddings(ids)
        return np.stack([rows[i].embedding for i in ids]).astype(np.float32, copy=False)  # type: ignore[misc]

    def lexical_search(self, table: str, words: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The best `limit` BM25 matches of any of the words in a lexical table (`Storage.lexical_search`)."""
        ahead = self.lexical_ahead.get((table, tuple(words), limit))
        if ahead is not None:
            return ahead.result()
        if self.postings is None:
            return self.store.lexical_search(table, words, limit)
        return self.postings.search(table, words, limit, config.LEXICAL_BM25_K1, config.LEXICAL_BM25_B)

    def followed_by(self, ids: Sequence[str]) -> dict[str, set[str]]:
        """Both directions of the followed_by edges touching the given memories."""
        table = self.table()
        return table.followed_by(ids) if table is not None else self.store.followed_by_neighbours(ids)

    def nearest(self, k: int) -> list[Neighbour]:
        """The cue's k nearest neighbours, searched with the request's ef_search.

        `VectorIndex.query` runs one search of width max(k, ef_search) and keeps the first k, so every
        k up to that width is a prefix of the same search: similarity, the causal seed and analogical
        share it instead of querying Chroma once each. An exact search with the candidate table in memory
        is one matrix product over every stored embedding.
        """
        assert self.cue_embedding is not None
        width = max(k, self.request.ef_search)
        table = self.table() if self.exact else None
        with self._search_lock:
            found = self._searches.get(width)
            if found is None:
                if table is not None and width >= len(table):
                    found = table.nearest(self.cue_embedding, width)
                elif self.exact:  # no table in memory: HNSW asked for every memory can still miss one
                    found = self._nearest_in_store(width)
                else:
                    found = self.vectors().query(self.cue_embedding, width, width)
                self._searches[width] = found
        return found[:k]

    def _nearest_in_store(self, k: int) -> list[Neighbour]:
        """An exact search without the candidate table: every stored embedding read once (exact search is for
        small stores), ranked as `CandidateTable.nearest` ranks (cosine distance, ties by id)."""
        assert self.cue_embedding is not None
        rows = [row for batch in self.store.all_embeddings() for row in batch]
        if not rows:
            return []
        distances = 1.0 - row_dots(np.stack([v for _, v in rows]), np.asarray(self.cue_embedding, dtype=np.float32))
        ordered = sorted(range(len(rows)), key=lambda n: (float(distances[n]), rows[n][0]))[:k]
        return [Neighbour(rows[n][0], float(distances[n])) for n in ordered]


def similarity(inp: RecallInputs) -> Sequence[Hit]:
    """The cue's nearest memories, relevance 1 - cosine distance (a fused recall's pool of 100: `HitColumns`)."""
    req = inp.request
    assert inp.cue_embedding is not None
    # Ask for a few more than top_k so that dropping excluded ids still leaves top_k.
    excluded = inp.excluded
    kept = [n for n in inp.nearest(inp.overfetch(req.top_k)) if n.id not in excluded][: req.top_k]
    distances = [n.distance for n in kept]

    def fields(at: list[int]) -> list[dict[str, Any]]:
        return [{"distance": distances[n]} for n in at]

    relevance = 1.0 - np.array(distances, dtype=np.float64)  # the same doubles as 1.0 - each distance in Python
    return HitColumns(Strategy.SIMILARITY, [n.id for n in kept], relevance, fields)


def temporal(inp: RecallInputs) -> Sequence[Hit]:
    """An entity's memories within the range, newest first, as candidates for the composite cut.

    The newest `temporal_pool(top_k)` of the window are candidates, so an entity's weightier memories
    (importance, reinforcement) can outrank its merely newer ones. Relevance is the cue's similarity when
    another strategy embedded the cue (a timeline must not flood a mixed recall), else 1: a timeline
    read on its own needs no model.

    Vectorised: the window is two binary searches on the entity's sorted times; the cue's similarity is one
    matrix product. Without a cue every candidate's relevance is the same 1, so the composite order depends
    only on recency, importance and reinforcement: for a plain (unfused) timeline read the pool is scored
    here in numpy and only its top_k become hits (the facade then reads and scores just those). A fused
    recall gets the whole pool, as fusion adds neighbours and evidence across strategies.
    """
    req = inp.request
    assert req.entity_id is not None
    start, end = req.time_range or (None, None)
    ids, times = inp.timeline().window(
        req.entity_id,
        None if start is None else to_micros(start),
        None if end is None else to_micros(end),
        limit=temporal_pool(req.top_k),
    )
    if len(ids) == 0:
        return []
    ranks = np.arange(len(ids))
    if inp.cue_embedding is None:
        relevance = np.ones(len(ids))
        if len(ids) > req.top_k and inp.now is not None and not req.fused:
            keep = _top_by_composite(inp, ids, times, req.top_k)
            ids, times, ranks, relevance = ids[keep], times[keep], ranks[keep], relevance[keep]
    else:
        table = inp.table()
        if table is not None:  # one lookup of the ids; the rows' embeddings gathered as `embeddings` would
            rows = table.rows_of(ids.tolist())
            present = rows >= 0
        else:
            stored = inp.rows(ids.tolist())  # fusion reads the same rows: once per recall
            present = np.fromiter((i in stored for i in ids), dtype=bool, count=len(ids))
        ids, times, ranks = ids[present], times[present], ranks[present]
        if len(ids) == 0:
            return []
        vectors = table.embeddings_at(rows[present]) if table is not None else inp.embeddings(ids.tolist(), stored)
        with one_thread():  # a small product (engine/blas.py)
            relevance = np.maximum(0.0, vectors @ inp.cue_embedding).astype(np.float64)

    def fields(at: list[int]) -> list[dict[str, Any]]:
        return [{"rank": rank, "timestamp": stamp} for rank, stamp in zip(ranks[at].tolist(), iso_micros(times[at]),
                                                                            strict=True)]

    return HitColumns(Strategy.TEMPORAL, ids.tolist(), relevance.astype(np.float64, copy=False), fields)


def _top_by_composite(inp: RecallInputs, ids: np.ndarray, times: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k best of a no-cue pool by the composite score, with the facade's tie-break
    (score, then newest, then id); memories forgotten meanwhile drop out."""
    assert inp.now is not None
    found = inp.store.score_inputs(ids.tolist())
    position = {memory_id: p for p, memory_id in enumerate(ids.tolist())}
    where = np.fromiter((position[i] for i in found.ids), dtype=np.int64, count=len(found.ids))
    if len(where) == 0:
        return where
    created = times[where]
    score = scoring.composite_arrays(
        np.ones(len(where)), created, found.importance, found.access_count, to_micros(inp.now),
        inp.request.scoring_weights,
    )
    id_rank = np.argsort(np.argsort(ids[where]))  # ids are unique: their sort order breaks the last ties
    order = np.lexsort((id_rank, -created, -score))
    return np.sort(where[order[:k]])  # back in newest-first order


def causal(inp: RecallInputs) -> list[Hit]:
    req = inp.request
    seed = req.seed_memory_id
    if seed is None:
        assert inp.cue_embedding is not None
        nearest = [n for n in inp.nearest(inp.overfetch(1)) if n.id not in inp.excluded]
        if not nearest:
            return []
        seed = nearest[0].id
    elif not inp.store.existing([seed]):
        raise MemoryNotFoundError(f"seed memory {seed} does not exist")
    # Rank by depth, then newest first. Whole depth levels are taken until top_k is reached, so the walk
    # stops after the last level needed: deeper levels are never computed.
    chosen: list[Reached] = []
    for walked in inp.graph().levels(seed, req.max_depth, req.edge_types):
        level = [r for r in walked if r.id not in inp.excluded]
        if not level:
            continue
        times = inp.store.created_at_of([r.id for r in level])
        level = [r for r in level if r.id in times]
        level.sort(key=lambda r: (-times[r.id], r.id))
        chosen.extend(level[: req.top_k - len(chosen)])
        if len(chosen) >= req.top_k:
            break
    hits = []
    for r in chosen:
        relevance = 1.0 - r.depth / (req.max_depth + 1)
        fields = {
            "depth": r.depth,
            "path": list(r.path),
            "edge_type": None if r.edge_type is None else r.edge_type.value,
            "direction": r.direction,
            "path_confidence": r.confidence,
            "seed_id": seed,
        }
        hits.append(Hit(r.id, relevance, StrategyDetail(Strategy.CAUSAL, relevance, fields)))
    return hits


# The smallest unit a part is counted in (see pool_spread): about half the spread of either part over the
# 40-candidate pools of the story sets (embedding 0.05-0.09, structure 0.035-0.08), so it binds only in small or
# near-uniform pools.
POOL_SPREAD_FLOOR = 0.03
# The surface part's smallest unit: a cosine gap under 0.1 between two stories is not a clear difference in how
# they look (the story sets' 40-candidate pools spread 0.05-0.09), so at alpha 0.5 one unit of surface trades
# against one standard deviation of structure only from 0.1 up (tune half at alpha 0.5: top-1 17% -> 22%,
# MRR 0.29 -> 0.33).
SURFACE_SPREAD_FLOOR = 0.1


def pool_spread(values: dict[str, float], floor: float = POOL_SPREAD_FLOOR) -> dict[str, float]:
    """Each value's height above the pool's lowest in units of the pool's standard deviation, so that two
    signals of different spread weigh as alpha says: embedding similarities of a pool differ by a few
    hundredths where systematicity differs by tenths. Unlike min-max, a candidate that stands far out of its
    pool on one part (the one story shaped like the cue among many that are not) keeps that lead instead of
    being held to the same range as the evenly spread other part. The unit is at least `floor`
    (`SURFACE_SPREAD_FLOOR` for the surface part). A pool of fewer than 3, or with no spread, keeps its values."""
    if len(values) < 3:
        return values
    mean = sum(values.values()) / len(values)  # plain Python: for a pool of 40, 3x quicker than numpy's std
    spread = (sum((v - mean) ** 2 for v in values.values()) / len(values)) ** 0.5
    low = min(values.values())
    if spread < 1e-9:
        return values
    # the unit never falls below POOL_SPREAD_FLOOR: in a small pool of near-equal cosines a gap of 0.02 is noise,
    # not several standard deviations to set against a clear structural gap
    return {i: (v - low) / max(spread, floor) for i, v in values.items()}


# How sharply the structural support gates the surface part: a candidate keeps exp(-SUPPORT_GAP * (1 - alpha) / alpha
# * d) of its surface part, d its structural gap to the pool's best in the pool's standard deviations of systematicity
# (at least POOL_SPREAD_FLOOR). Sessions 17-20 took the ratio to the best to a power (1, then 1.5): a ratio depends on
# how high the pool's structures map, not on how far a candidate stands below the best among them, so when the best
# maps at 0.3 a look-alike 0.06 lower (one standard deviation of a story pool) kept 72% of its surface lead. Counted
# in the pool's own unit, as the parts are (`pool_spread`), it keeps 22% (session 21: the true analog above the
# mere-appearance story at alpha 0.5, tune half 33% -> 44%, stories_extra 17% -> 42%, stories_new 7% -> 29%; top-1
# 47% -> 53%, 58% -> 50%, 43% -> 50%; 1 and 2 measured beside it). Alpha 0 and 1 do not use it.
SUPPORT_GAP = 1.5


def structural_support(structure: dict[str, float], alpha: float) -> dict[str, float]:
    """How much of each candidate's surface likeness counts: exp(-SUPPORT_GAP * (1 - alpha) / alpha * d), d the
    candidate's systematicity below the pool's best in the pool's standard deviations (1 for the best; all 1 when no
    candidate maps at all). Looking like the cue is evidence for an analog only as far as the candidate is also
    shaped like it (MAC/FAC: surface retrieves, structure judges): at alpha 0.5 a candidate one standard deviation
    below the best keeps 22% of its surface part, two 5%, so surface alone cannot carry a story of clearly another
    shape past one shaped like the cue, while between structures that map about as well (a tenth of a deviation
    apart: 86%) the surface still decides. Towards alpha 1 the gate opens (at 0.8 one deviation keeps 69%), towards
    alpha 0 it closes, so alpha still weighs surface against structure (session 17: the support; session 21: the
    gap counted in standard deviations instead of the ratio to the best to a power)."""
    top = max(structure.values(), default=0.0)
    if top <= 1e-9 or not 0 < alpha < 1:
        return {i: 1.0 for i in structure}
    mean = sum(structure.values()) / len(structure)
    unit = max((sum((v - mean) ** 2 for v in structure.values()) / len(structure)) ** 0.5, POOL_SPREAD_FLOOR)
    steep = SUPPORT_GAP * (1 - alpha) / alpha / unit
    return {i: math.exp(-steep * (top - max(0.0, v))) for i, v in structure.items()}


def pool_parts(surface: dict[str, float], structure: dict[str, float], alpha: float
               ) -> tuple[dict[str, float], dict[str, float]]:
    """The two parts as mixed for 0 < alpha < 1: each in its pool's standard deviations (`pool_spread`), the
    surface part scaled by the candidate's structural support (`structural_support`), both divided by the best
    candidate's mix, so relevance = alpha * part + (1 - alpha) * part is 1 for the pool's best and the parts stay
    additive (the workbench stacks them)."""
    e, s = pool_spread(surface, SURFACE_SPREAD_FLOOR), pool_spread(structure)
    support = structural_support(structure, alpha)
    e = {i: v * support[i] for i, v in e.items()}
    top = max((alpha * e[i] + (1 - alpha) * s[i] for i in e), default=0.0)
    if top <= 1e-9:
        return e, s
    return {i: v / top for i, v in e.items()}, {i: v / top for i, v in s.items()}


def analogical(inp: RecallInputs) -> Sequence[Hit]:
    """Two stages (MAC/FAC): candidates are the cue's embedding neighbours (when alpha > 0), the memories
    whose abstract feature vector is nearest the cue's (when alpha < 1) and, for a story cue, the memories whose
    plots best match its own; the cheap stage keeps the best of them and each is then structure-mapped onto the
    cue. relevance = alpha * embedding similarity + (1 - alpha) * structural similarity (`structural_similarity`:
    the systematicity, and for a story cue its plot too), each part
    counted in its candidate pool's standard deviations first when both count (0 < alpha < 1, `pool_parts`),
    so that surface similarity alone cannot decide between candidates whose structures differ clearly."""
    req = inp.request
    assert inp.cue_embedding is not None
    alpha = req.analogical_alpha
    pool = max(req.top_k * ANALOGICAL_CANDIDATE_FACTOR, ANALOGICAL_CANDIDATE_MIN)
    embedding_sim: dict[str, float] = {}
    if alpha > 0:
        for n in inp.nearest(inp.overfetch(pool)):
            embedding_sim[n.id] = 1.0 - n.distance
    structural = [i for i, _ in inp.feature_index().best_matches(inp.cue_features, pool)] if alpha < 1 else []
    # A story cue's plot (two sentences or more) brings its own candidates, the stories told like it, which may share
    # neither its words nor its features (engine/index/plot_index.py), and counts in both stages: the alignment is cheap
    # beside the mapping, and a story from another domain whose features overlap little would otherwise be cut before
    # it is mapped.
    cue_plot = decode_plot(inp.cue_structure.get("plot")) if alpha < 1 else None
    told_alike = [i for i, _ in inp.plot_index().best_matches(cue_plot, pool)] if cue_plot is not None else []
    candidates = [i for i in dict.fromkeys([*embedding_sim, *structural, *told_alike]) if i not in inp.excluded]
    missing = [i for i in candidates if i not in embedding_sim]
    if missing:
        table = inp.table()
        if table is not None:
            rows = table.rows_of(missing)  # one lookup of every id (asking `table.slot` per id cost 0.5 ms at 100k)
            present = [i for i, row in zip(missing, rows.tolist(), strict=True) if row >= 0]
            # One gather; each row's own dot product, as before (the same float32 sums, bit for bit).
            for i, vector in zip(present, table.embeddings_at(rows[rows >= 0]), strict=True):
                embedding_sim[i] = float(np.dot(vector, inp.cue_embedding))
        else:
            for i, vector in inp.store.embeddings(missing).items():
                embedding_sim[i] = float(np.dot(vector, inp.cue_embedding))
    candidates = [i for i in candidates if i in embedding_sim]  # forgotten while we looked
    texts = inp.store.structure_texts(candidates) if cue_plot is not None else {}
    plots = ({i: plot_similarity(cue_plot, _stored_plot(texts.get(i))) for i in candidates}
             if cue_plot is not None else {})
    if alpha < 1:  # MAC: keep the cheap stage's best for the dear mapping (FAC)
        overlap = inp.feature_index().similarities(inp.cue_features, candidates)
        if cue_plot is not None:
            overlap = {i: structural_similarity(overlap[i], plots[i], embedding_sim[i], story_cue=True)
                       for i in candidates}
        surface = {i: max(0.0, min(1.0, embedding_sim[i])) for i in candidates}
        if alpha > 0:
            surface = pool_spread(surface, SURFACE_SPREAD_FLOOR)
            overlap = pool_spread({i: overlap[i] for i in candidates})

        def cheap(i: str) -> float:
            return alpha * surface[i] + (1 - alpha) * overlap[i]

        mapped_pool = max(req.top_k * ANALOGICAL_MAPPED_FACTOR, ANALOGICAL_MAPPED_MIN)
        candidates = sorted(candidates, key=lambda i: (-cheap(i), i))[:mapped_pool]
    if alpha < 1 and cue_plot is None:
        texts = inp.store.structure_texts(candidates)
    cue = episode(inp.cue_structure)
    cue_self = float(inp.cue_structure.get("self") or self_score(cue))
    mapped: dict[str, tuple[Mapping, StoredEpisode | None]] = {}
    for i in candidates:
        stored = stored_episode(texts[i]) if i in texts else None
        mapping = map_episodes(cue, stored.episode, cue_self, stored.self_score) if stored is not None else Mapping()
        mapped[i] = (mapping, stored)
    e_sims = {i: max(0.0, min(1.0, embedding_sim[i])) for i in candidates}
    s_sims = {i: structural_similarity(mapped[i][0].score, plots.get(i, 0.0), e_sims[i], cue_plot is not None)
              for i in candidates}
    e_part, s_part = pool_parts(e_sims, s_sims, alpha) if 0 < alpha < 1 else (e_sims, s_sims)
    relevance = {i: alpha * e_part[i] + (1 - alpha) * s_part[i] for i in candidates}
    kept = sorted(candidates, key=lambda i: (-relevance[i], i))[: req.top_k]  # (ids are distinct: a total order)
    cue_features = set(inp.cue_features)

    def fields(at: list[int]) -> list[dict[str, Any]]:
        """The kept hits' details: the parts, and the shared features and the mapping in words (describing costs
        as much as mapping: a fused recall describes only the hits it returns)."""
        made = []
        for n in at:
            i = kept[n]
            mapping, stored = mapped[i]
            detail: dict[str, Any] = {
                "embedding_similarity": e_sims[i],
                "structural_similarity": s_sims[i],
                "systematicity": mapping.score,
                "surface_kept": surface_kept(e_sims[i], cue_plot is not None),
                "plot_similarity": plots.get(i, 0.0),
                "embedding_part": e_part[i],  # the parts as mixed: over the candidate pool when 0 < alpha < 1
                "structural_part": s_part[i],
                "alpha": alpha,
                "shared_structure": [],
                "mapping": {},
            }
            if stored is not None:
                detail["shared_structure"] = sorted(cue_features & set(stored.features))
                if mapping.events:
                    detail["mapping"] = describe_mapping(mapping, cue, stored.episode)
                if plots.get(i):
                    detail["plot"] = describe_plot(plot_match(cue_plot, stored.plot), cue_plot, stored.plot)
            made.append(detail)
        return made

    return HitColumns(Strategy.ANALOGICAL, kept, np.array([relevance[i] for i in kept], dtype=np.float64), fields)


def _stored_plot(text: str | None) -> Plot | None:
    """The plot of a stored structure's JSON text (parsed once per text, `stored_episode`)."""
    stored = stored_episode(text) if text is not None else None
    return stored.plot if stored is not None else None


def structural_similarity(systematicity: float, plot: float, surface: float, story_cue: bool) -> float:
    """A candidate's structural similarity to the cue: for a cue that tells a story (two sentences or more), the
    mapper's systematicity and the plots' in-order alignment mixed (`config.ANALOGICAL_PLOT_WEIGHT`; a memory
    without a plot brings 0 there), the systematicity counted net of the surface the two texts share (`surface_kept`: a
    story that retells the cue's characters and sentences with another plot maps their events because they are the
    same words, as the plot discounts a sentence told again). For a one-sentence cue, the systematicity alone."""
    if not story_cue:
        return systematicity
    weight = config.ANALOGICAL_PLOT_WEIGHT
    return (1.0 - weight) * systematicity * surface_kept(surface, story_cue) + weight * plot


def surface_kept(surface: float, story_cue: bool) -> float:
    """The share of a story cue's systematicity that counts for a memory whose embedding cosine to the cue is
    `surface` (`structural_similarity`): all of it up to `config.ANALOGICAL_SURFACE_FREE` (a story of another
    setting), then less in proportion, down to none for the cue's own text; 1 for a one-sentence cue."""
    if not story_cue:
        return 1.0
    return min(1.0, (1.0 - min(1.0, max(0.0, surface))) / (1.0 - config.ANALOGICAL_SURFACE_FREE))


def describe_plot(match: PlotMatch, cue: Plot | None, candidate: Plot | None) -> dict[str, Any]:
    """The plots' alignment in words: which cue sentence lines up with which of the memory's, and how closely (the
    texts' sentence numbers, from 0, with their character spans when the plots keep them)."""
    if cue is None or candidate is None:  # (a match has pairs only between two plots)
        return {"similarity": 0.0, "sentences": []}
    pairs = [{"cue": cue.places[a], "memory": candidate.places[b], "similarity": similarity,
              "cue_span": list(cue.spans[a]) if cue.spans else None,
              "memory_span": list(candidate.spans[b]) if candidate.spans else None}
             for a, b, similarity in match.pairs]
    return {"similarity": round(match.score, 4), "sentences": pairs}


def describe_mapping(mapping: Mapping, cue: Any, candidate: Any) -> dict[str, Any]:
    """The mapping in words: which cue event / participant maps to which, the relations that carried it
    (higher-order ones too), and which cue sentence maps to which of the memory's (the sentence most of its
    mapped events went to, with the sentences' character spans when the episode kept them)."""
    p1 = {p.id: p for p in cue.participants}
    p2 = {p.id: p for p in candidate.participants}
    s1 = {e.id: e.sentence for e in cue.events}
    s2 = {e.id: e.sentence for e in candidate.events}
    votes: dict[int, dict[int, int]] = {}
    for a, b, _ in mapping.events:
        votes.setdefault(s1[a], {}).setdefault(s2[b], 0)
        votes[s1[a]][s2[b]] += 1
    sentences = []
    for n in sorted(votes):
        m = max(votes[n], key=lambda x: (votes[n][x], -x))
        sentences.append({"cue": n, "memory": m, "events": votes[n][m],
                          "cue_span": cue.sentences[n] if n < len(cue.sentences) else None,
                          "memory_span": candidate.sentences[m] if m < len(candidate.sentences) else None})
    return {
        "sentences": sentences,
        "events": [{"cue": cue.describe_event(a), "memory": candidate.describe_event(b), "cue_id": a,
                    "memory_id": b, "match": s} for a, b, s in mapping.events],
        "participants": [{"role": role, "cue": f"{p1[a].type}({p1[a].text})", "memory": f"{p2[b].type}({p2[b].text})",
                          "cue_id": a, "memory_id": b} for a, b, role in mapping.participants],
        "relations": [{"kind": k, "cue": f"{cue.describe_event(a1)} -> {cue.describe_event(b1)}",
                       "memory": f"{candidate.describe_event(a2)} -> {candidate.describe_event(b2)}"}
                      for k, a1, b1, a2, b2 in mapping.relations],
    }

