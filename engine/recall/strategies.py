"""The four recall strategies. Each turns a request into hits: (memory id, relevance, detail).

They read the indexes only; hydration, scoring and access counting happen once, in the facade.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine import config
from engine.errors import MemoryNotFoundError
from engine.index.graph import GraphIndex, Reached
from engine.index.structure import StructureIndex
from engine.index.timeline import TimelineIndex
from engine.index.vector import VectorIndex
from engine.models import Strategy, StrategyDetail, iso
from engine.recall.request import RecallRequest
from engine.store.records import RecordStore, from_micros, to_micros
from engine.structure import structural_similarity


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    relevance: float
    detail: StrategyDetail


@dataclass(frozen=True, slots=True)
class RecallInputs:
    """What the strategies read: the request, the cue's embedding and structure, and the indexes."""

    request: RecallRequest
    cue_embedding: np.ndarray | None
    cue_features: tuple[str, ...]
    store: RecordStore
    vectors: Callable[[], VectorIndex]
    timeline: Callable[[], TimelineIndex]
    graph: Callable[[], GraphIndex]
    structures: Callable[[], StructureIndex]
    excluded: frozenset[str]  # ids never returned (revisions: history, not knowledge)

    def overfetch(self, k: int) -> int:
        """How many neighbours to ask for so that dropping excluded ids still leaves about k."""
        return k + min(len(self.excluded), k)


def similarity(inp: RecallInputs) -> list[Hit]:
    req = inp.request
    assert inp.cue_embedding is not None
    # Ask for a few more than top_k so that dropping excluded ids still leaves top_k.
    neighbours = inp.vectors().query(inp.cue_embedding, inp.overfetch(req.top_k), req.ef_search)
    hits = []
    for n in neighbours:
        if n.id in inp.excluded:
            continue
        relevance = 1.0 - n.distance
        hits.append(Hit(n.id, relevance, StrategyDetail(Strategy.SIMILARITY, relevance, {"distance": n.distance})))
    return hits[: req.top_k]


def temporal(inp: RecallInputs) -> list[Hit]:
    req = inp.request
    assert req.entity_id is not None
    start, end = req.time_range or (None, None)
    rows = inp.timeline().range(
        req.entity_id,
        None if start is None else to_micros(start),
        None if end is None else to_micros(end),
        limit=req.top_k,
    )
    hits = []
    for rank, (memory_id, created_us) in enumerate(rows):
        detail = StrategyDetail(Strategy.TEMPORAL, 1.0, {"rank": rank, "timestamp": iso(from_micros(created_us))})
        hits.append(Hit(memory_id, 1.0, detail))
    return hits


def causal(inp: RecallInputs) -> list[Hit]:
    req = inp.request
    seed = req.seed_memory_id
    if seed is None:
        assert inp.cue_embedding is not None
        nearest = [
            n
            for n in inp.vectors().query(inp.cue_embedding, inp.overfetch(1), req.ef_search)
            if n.id not in inp.excluded
        ]
        if not nearest:
            return []
        seed = nearest[0].id
    elif not inp.store.existing([seed]):
        raise MemoryNotFoundError(f"seed memory {seed} does not exist")
    reached = [r for r in inp.graph().walk(seed, req.max_depth, req.edge_types) if r.id not in inp.excluded]
    # Rank by depth, then newest first. Whole depth levels are taken until top_k is reached, so only the
    # last level needs its timestamps read.
    chosen: list[Reached] = []
    by_depth: dict[int, list[Reached]] = {}
    for r in reached:
        by_depth.setdefault(r.depth, []).append(r)
    for depth in sorted(by_depth):
        level = by_depth[depth]
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


def analogical(inp: RecallInputs) -> list[Hit]:
    """relevance = alpha * embedding similarity + (1 - alpha) * structural similarity."""
    req = inp.request
    assert inp.cue_embedding is not None
    alpha = req.analogical_alpha
    pool = req.top_k * config.ANALOGICAL_CANDIDATE_FACTOR
    structures = inp.structures()
    embedding_sim: dict[str, float] = {}
    if alpha > 0:
        for n in inp.vectors().query(inp.cue_embedding, inp.overfetch(pool), req.ef_search):
            embedding_sim[n.id] = 1.0 - n.distance
    structural = dict(structures.best_matches(inp.cue_features, pool)) if alpha < 1 else {}
    candidates = [i for i in dict.fromkeys([*embedding_sim, *structural]) if i not in inp.excluded]
    missing = [i for i in candidates if i not in embedding_sim]
    if missing:
        stored = inp.store.embeddings(missing)
        for i, vector in stored.items():
            embedding_sim[i] = float(np.dot(vector, inp.cue_embedding))
    hits = []
    for i in candidates:
        if i not in embedding_sim:
            continue  # forgotten while we looked
        features = structures.features_of(i)
        s_sim = structural.get(i, structural_similarity(inp.cue_features, features))
        e_sim = max(0.0, min(1.0, embedding_sim[i]))
        relevance = alpha * e_sim + (1 - alpha) * s_sim
        fields = {
            "embedding_similarity": e_sim,
            "structural_similarity": s_sim,
            "alpha": alpha,
            "shared_structure": sorted(set(inp.cue_features) & features),
        }
        hits.append(Hit(i, relevance, StrategyDetail(Strategy.ANALOGICAL, relevance, fields)))
    hits.sort(key=lambda h: (-h.relevance, h.id))
    return hits[: req.top_k]


STRATEGIES: dict[Strategy, Callable[[RecallInputs], list[Hit]]] = {
    Strategy.SIMILARITY: similarity,
    Strategy.TEMPORAL: temporal,
    Strategy.CAUSAL: causal,
    Strategy.ANALOGICAL: analogical,
}
