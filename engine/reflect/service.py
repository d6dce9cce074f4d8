"""Reflection as engine operations: reflect, insights, reflect_prepare and reflect_commit.

An insight is a memory of kind `insight` with an `insight_from` edge to each source and, in its context
under `insight`, its confidence, the fingerprint of its sources, its topic and who wrote it (`engine` or
`agent`). Staleness is read, not stored: an insight is stale when its sources' fingerprint no longer matches
(a source was forgotten, which also drops its edge, or revised). A reflect run skips a cluster whose
fingerprint an existing insight already has, so re-running over unchanged memories adds nothing.

The scope is the newest `config.REFLECT_MAX_MEMORIES` memories (of an entity, created since a time), without
revisions, insights and whole documents (their propositions are in the scope).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import numpy as np

from engine import config, ids
from engine.api.requests import RememberRequest
from engine.api.reviews import (
    Insight,
    InsightsRequest,
    PreparedCluster,
    ProducedInsight,
    ReflectCommitRequest,
    ReflectCommitResponse,
    ReflectPrepareResponse,
    ReflectRequest,
    ReflectResponse,
)
from engine.clock import Clock
from engine.errors import ValidationError
from engine.models import EdgeSpec, EdgeType, Memory, MemoryKind
from engine.reflect.clusters import cluster
from engine.reflect.insights import draft, fingerprint, importance_of
from engine.store.interface import Storage

LEFT_OUT = frozenset({MemoryKind.INSIGHT, MemoryKind.REVISION, MemoryKind.DOCUMENT})
Remember = Callable[[Sequence[RememberRequest]], list[Memory]]


class Reflection:
    def __init__(self, store: Storage, remember: Remember, clock: Clock) -> None:
        self.store = store
        self.remember = remember
        self.clock = clock

    def _scope(self, request: ReflectRequest) -> tuple[list[Memory], np.ndarray]:
        page, _ = self.store.list_memories(entity_id=request.entity_id, start=request.since, include_revisions=False,
                                           limit=config.REFLECT_MAX_MEMORIES)
        memories = [m for m in page if m.kind not in LEFT_OUT]
        vectors = self.store.embeddings([m.id for m in memories])
        memories = [m for m in memories if m.id in vectors]
        matrix = np.stack([vectors[m.id] for m in memories]) if memories else np.zeros((0, 1), np.float32)
        return memories, matrix

    def _existing(self) -> list[Memory]:
        return list(self.store.get_many(self.store.ids_of_kind(MemoryKind.INSIGHT)).values())

    # --- the engine writes the insights ------------------------------------------------------------------
    def reflect(self, request: ReflectRequest) -> ReflectResponse:
        memories, matrix = self._scope(request)
        clusters, _ = cluster(matrix)
        drafts = [draft(c, memories, matrix) for c in clusters]
        known = {_meta(m).get("fingerprint") for m in self._existing()}
        new = [d for d in drafts if d.fingerprint not in known]
        written = self.remember([
            _insight_request(d.content, d.confidence, d.importance, d.source_ids, d.entity_id,
                             {"fingerprint": d.fingerprint, "topic": list(d.topic), "written_by": "engine"})
            for d in new
        ])
        insights = tuple(Insight(m, d.confidence, d.source_ids, False) for m, d in zip(written, new, strict=True))
        return ReflectResponse(len(memories), len(clusters), len(clusters), insights, len(drafts) - len(new))

    def insights(self, request: InsightsRequest) -> tuple[Insight, ...]:
        """The true top `max_results` over every insight in the store, by confidence then importance."""
        chosen = [m for m in self._existing()
                  if (request.entity_id is None or m.entity_id == request.entity_id)
                  and confidence_of(m) >= request.min_confidence]
        chosen.sort(key=lambda m: (-confidence_of(m), -m.importance, m.id))
        return tuple(self.describe(m) for m in chosen[:request.max_results])

    def describe(self, memory: Memory) -> Insight:
        sources = tuple(sorted(e.target for e in self.store.edges_of(memory.id)
                               if e.source == memory.id and e.type == EdgeType.INSIGHT_FROM))
        stored = _meta(memory).get("fingerprint")
        stale = bool(stored) and stored != fingerprint(list(self.store.get_many(sources).values()))
        return Insight(memory, confidence_of(memory), sources, stale)

    # --- an agent writes them -----------------------------------------------------------------------------
    def prepare(self, request: ReflectRequest) -> ReflectPrepareResponse:
        memories, matrix = self._scope(request)
        clusters, _ = cluster(matrix)
        prepared = tuple(
            PreparedCluster(n, tuple(memories[i] for i in c.members), round(c.cohesion, 4),
                            draft(c, memories, matrix).content)
            for n, c in enumerate(clusters)
        )
        now = self.clock.now()
        expires = now + timedelta(seconds=config.REFLECT_SESSION_SECONDS)
        session_id = ids.new_id(int(now.timestamp() * 1000))
        self.store.open_reflect_session(session_id, [[m.id for m in c.memories] for c in prepared], expires.timestamp())
        return ReflectPrepareResponse(session_id, expires, len(memories), prepared, len(self._existing()))

    def commit(self, request: ReflectCommitRequest) -> ReflectCommitResponse:
        """Validate every insight against the session before writing any; the session is used up after."""
        session = self.store.reflect_session(request.session_id)
        if session is None:
            raise ValidationError(f"no reflect session {request.session_id!r} (unknown, or already committed); "
                                  "call reflect_prepare first")
        clusters, expires_at = session
        if self.clock.now().timestamp() > expires_at:
            raise ValidationError(f"reflect session {request.session_id!r} expired at "
                                  f"{datetime.fromtimestamp(expires_at, UTC).isoformat()} (sessions last "
                                  f"{config.REFLECT_SESSION_SECONDS} s); call reflect_prepare again")
        members = {i for c in clusters for i in c}
        needed = sorted({s for insight in request.insights for s in insight.source_memory_ids})
        found = self.store.get_many(needed)
        for n, insight in enumerate(request.insights):
            _check_sources(n, insight, members, found, clusters)
        written = self.remember([
            _insight_request(i.content, i.confidence, importance_of([found[s].importance for s in i.source_memory_ids],
                                                                    i.confidence),
                             i.source_memory_ids, _shared_entity([found[s] for s in i.source_memory_ids]),
                             {"fingerprint": fingerprint([found[s] for s in i.source_memory_ids]), "tags": list(i.tags),
                              "cluster_id": i.cluster_id, "written_by": "agent"})
            for i in request.insights
        ])
        self.store.close_reflect_session(request.session_id)
        return ReflectCommitResponse(tuple(Insight(m, i.confidence, i.source_memory_ids, False)
                                           for m, i in zip(written, request.insights, strict=True)))


def _check_sources(n: int, insight: ProducedInsight, members: set[str], found: dict[str, Memory],
                   clusters: list[list[str]]) -> None:
    outside = [s for s in insight.source_memory_ids if s not in members]
    if outside:
        raise ValidationError(f"insights[{n}]: source memory {', '.join(outside[:5])} is not among this session's "
                              "clusters")
    gone = [s for s in insight.source_memory_ids if s not in found]
    if gone:
        raise ValidationError(f"insights[{n}]: source memory {', '.join(gone[:5])} was forgotten since "
                              "reflect_prepare")
    if insight.cluster_id is not None:
        if insight.cluster_id >= len(clusters):
            raise ValidationError(f"insights[{n}]: cluster_id {insight.cluster_id} is not one of this session's "
                                  f"{len(clusters)} clusters")
        foreign = [s for s in insight.source_memory_ids if s not in set(clusters[insight.cluster_id])]
        if foreign:
            raise ValidationError(f"insights[{n}]: source memory {', '.join(foreign[:5])} is not in cluster "
                                  f"{insight.cluster_id}")


def _insight_request(content: str, confidence: float, importance: float, sources: Sequence[str],
                     entity_id: str | None, meta: dict[str, object]) -> RememberRequest:
    return RememberRequest(
        content=content, importance=importance, entity_id=entity_id, kind=MemoryKind.INSIGHT,
        context={"insight": {"confidence": confidence, "sources": len(sources), **meta}},
        edges=tuple(EdgeSpec(s, EdgeType.INSIGHT_FROM, 1.0, {}) for s in sources),
    )


def _shared_entity(memories: Sequence[Memory]) -> str | None:
    entities = {m.entity_id for m in memories}
    return entities.pop() if len(entities) == 1 else None


def _meta(memory: Memory) -> dict[str, object]:
    meta = memory.context.get("insight")
    return meta if isinstance(meta, dict) else {}


def confidence_of(memory: Memory) -> float:
    """An insight's confidence (from its context); an insight remembered by hand without one: its importance."""
    value = _meta(memory).get("confidence")
    return float(value) if isinstance(value, int | float) else memory.importance
