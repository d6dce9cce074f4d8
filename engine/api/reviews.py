"""Requests and responses of reflection and contradiction review (the SDK's ReflectService).

`reflect` and `insights` run the engine's own offline reflection; `reflect_prepare` / `reflect_commit` let an
agent's LLM write the insights instead, from the clusters the engine found; `contradiction_prepare` /
`contradiction_commit` hand the contradiction candidates found for writes to an agent for its verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, ClassVar, Self

from engine import config, validation
from engine.api.fields import wire
from engine.errors import ValidationError
from engine.models import Memory, iso
from engine.store.rows import PendingPair

MAX_INSIGHTS = 1_000
MAX_COMMIT_ITEMS = 1_000
VERDICTS = ("contradiction", "revision", "dismiss")
_INSIGHT_SHAPE = {
    "type": "object",
    "properties": {"content": {"type": "string"}, "confidence": {"type": "number"},
                   "source_memory_ids": {"type": "array", "items": {"type": "string"}},
                   "tags": {"type": "array", "items": {"type": "string"}}, "cluster_id": {"type": "integer"}},
    "required": ["content", "source_memory_ids"],
}
_VERDICT_SHAPE = {
    "type": "object",
    "properties": {"pending_id": {"type": "string"}, "verdict": {"type": "string", "enum": list(VERDICTS)},
                   "confidence": {"type": "number"}, "reasoning": {"type": "string"}},
    "required": ["pending_id", "verdict"],
}


def _fields(raw: object, op: str, cls: type) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{op} request must be an object of fields, got {type(raw).__name__}")
    names = [f.name for f in fields(cls)]
    unknown = sorted(str(k) for k in raw if k not in names)
    if unknown:
        raise ValidationError(f"unknown field(s) for {op}: {', '.join(unknown)}; expected {', '.join(names)}")
    return {k: v for k, v in raw.items() if v is not None}


def _list(value: object, what: str, limit: int) -> list[Any]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise ValidationError(f"{what} must be a list, got {type(value).__name__}")
    items = list(value)
    if len(items) > limit:
        raise ValidationError(f"{what} holds at most {limit} items, got {len(items)}")
    return items


def _count(value: object, what: str, lo: int, hi: int) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValidationError(f"{what} must be an integer between {lo} and {hi}, got {validation.short_repr(value)}")
    return value


@dataclass(frozen=True, slots=True)
class ReflectRequest:
    """Cluster the scope's memories and store one extractive insight per cluster of at least 3."""

    OP: ClassVar[str] = "reflect"
    entity_id: str | None = wire(str | None, "Reflect on this entity's memories only (default: all).", default=None)
    since: datetime | None = wire(str | None, "Only memories created since (ISO 8601).", default=None)

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None = None) -> Self:
        values = _fields(raw or {}, cls.OP, cls)
        since = values.get("since")
        return cls(validation.entity_id(values.get("entity_id")),
                   None if since in (None, "") else validation.timestamp(since, what="since"))


@dataclass(frozen=True, slots=True)
class ReflectPrepareRequest(ReflectRequest):
    """The clusters and their memories, under a session id valid for `config.REFLECT_SESSION_SECONDS`."""

    OP: ClassVar[str] = "reflect_prepare"


@dataclass(frozen=True, slots=True)
class InsightsRequest:
    """The top insights across the store, by confidence (then importance)."""

    OP: ClassVar[str] = "insights"
    entity_id: str | None = wire(str | None, "Only insights about this entity.", default=None)
    min_confidence: float = wire(float | None, "0.0-1.0 (default 0).", default=0.0)
    max_results: int = wire(int | None, f"1-{MAX_INSIGHTS} (default 10).", default=10)

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None = None) -> Self:
        values = _fields(raw or {}, cls.OP, cls)
        return cls(validation.entity_id(values.get("entity_id")),
                   validation.number(values.get("min_confidence", 0.0), "min_confidence", 0.0, 1.0),
                   _count(values.get("max_results", 10), "max_results", 1, MAX_INSIGHTS))


@dataclass(frozen=True, slots=True)
class ProducedInsight:
    content: str
    confidence: float
    source_memory_ids: tuple[str, ...]
    tags: tuple[str, ...] = ()
    cluster_id: int | None = None

    @classmethod
    def parse(cls, raw: object, at: int) -> ProducedInsight:
        what = f"insights[{at}]"
        if not isinstance(raw, Mapping):
            raise ValidationError(f"{what} must be an object with content and source_memory_ids")
        unknown = sorted(set(raw) - {"content", "confidence", "source_memory_ids", "tags", "cluster_id"})
        if unknown:
            raise ValidationError(f"unknown field(s) in {what}: {', '.join(unknown)}")
        sources = tuple(dict.fromkeys(validation.identifier(s, f"{what}.source_memory_ids")
                                      for s in _list(raw.get("source_memory_ids") or [], f"{what}.source_memory_ids",
                                                     config.MAX_BATCH_ITEMS)))
        if not sources:
            raise ValidationError(f"{what} needs at least one source memory id")
        cluster = raw.get("cluster_id")
        return cls(
            content=validation.content(raw.get("content")),
            confidence=validation.number(raw.get("confidence", 0.5), f"{what}.confidence", 0.0, 1.0),
            source_memory_ids=sources,
            tags=tuple(validation.text(t, f"{what}.tags", 200) for t in _list(raw.get("tags") or [], f"{what}.tags",
                                                                              50)),
            cluster_id=None if cluster is None else _count(cluster, f"{what}.cluster_id", 0, 10_000),
        )


@dataclass(frozen=True, slots=True)
class ReflectCommitRequest:
    """An agent's insights for a prepared session; every source must belong to the session."""

    OP: ClassVar[str] = "reflect_commit"
    session_id: str = wire(str, "What reflect_prepare returned.")
    insights: tuple[ProducedInsight, ...] = wire(
        {"type": "array", "items": _INSIGHT_SHAPE}, "content, confidence, source_memory_ids, tags, cluster_id.",
        default=())

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields(raw, cls.OP, cls)
        session_id = validation.identifier(values.get("session_id"), "session_id")
        items = _list(values.get("insights", []), "insights", MAX_COMMIT_ITEMS)
        if not items:
            raise ValidationError("reflect_commit needs at least one insight")
        return cls(session_id, tuple(ProducedInsight.parse(item, n) for n, item in enumerate(items)))


@dataclass(frozen=True, slots=True)
class ContradictionPrepareRequest:
    OP: ClassVar[str] = "contradiction_prepare"
    limit: int = wire(int | None, "At most this many candidates (default 100).", default=100)

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None = None) -> Self:
        values = _fields(raw or {}, cls.OP, cls)
        return cls(_count(values.get("limit", 100), "limit", 1, MAX_COMMIT_ITEMS))


@dataclass(frozen=True, slots=True)
class Verdict:
    pending_id: str
    verdict: str
    confidence: float
    reasoning: str | None


@dataclass(frozen=True, slots=True)
class ContradictionCommitRequest:
    """An agent's verdicts on pending candidates: contradiction, revision or dismiss."""

    OP: ClassVar[str] = "contradiction_commit"
    verdicts: tuple[Verdict, ...] = wire({"type": "array", "items": _VERDICT_SHAPE},
                                         "pending_id, verdict (contradiction, revision, dismiss), confidence, "
                                         "reasoning.", default=())

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields(raw, cls.OP, cls)
        items = _list(values.get("verdicts", []), "verdicts", MAX_COMMIT_ITEMS)
        if not items:
            raise ValidationError("contradiction_commit needs at least one verdict")
        parsed = []
        for n, item in enumerate(items):
            what = f"verdicts[{n}]"
            if not isinstance(item, Mapping):
                raise ValidationError(f"{what} must be an object with pending_id and verdict")
            unknown = sorted(set(item) - {"pending_id", "verdict", "confidence", "reasoning"})
            if unknown:
                raise ValidationError(f"unknown field(s) in {what}: {', '.join(unknown)}")
            verdict = item.get("verdict")
            if verdict not in VERDICTS:
                raise ValidationError(f"{what}.verdict must be one of {', '.join(VERDICTS)}, got "
                                      f"{validation.short_repr(verdict)}")
            reasoning = item.get("reasoning")
            parsed.append(Verdict(
                validation.identifier(item.get("pending_id"), f"{what}.pending_id"), str(verdict),
                validation.number(item.get("confidence", 1.0), f"{what}.confidence", 0.0, 1.0),
                None if reasoning in (None, "") else validation.text(reasoning, f"{what}.reasoning", 4_000)))
        ids = [v.pending_id for v in parsed]
        if len(set(ids)) != len(ids):
            raise ValidationError("a pending_id appears twice among the verdicts")
        return cls(tuple(parsed))


# --- responses -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Insight:
    """An insight memory with the sources it cites and whether it still describes them."""

    memory: Memory
    confidence: float
    source_ids: tuple[str, ...]
    stale: bool  # a source was forgotten or revised since the insight was written

    def to_dict(self) -> dict[str, Any]:
        return {**self.memory.to_dict(), "confidence": self.confidence, "source_memory_ids": list(self.source_ids),
                "stale": self.stale}


@dataclass(frozen=True)
class InsightsResponse:
    insights: tuple[Insight, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"insights": [i.to_dict() for i in self.insights], "count": len(self.insights)}


@dataclass(frozen=True)
class ReflectResponse:
    memories_processed: int
    clusters_found: int
    clusters_processed: int
    insights: tuple[Insight, ...]  # the insights written by this run
    unchanged: int  # clusters whose insight already exists for the same sources

    def to_dict(self) -> dict[str, Any]:
        return {"insights_created": len(self.insights), "clusters_found": self.clusters_found,
                "clusters_processed": self.clusters_processed, "memories_processed": self.memories_processed,
                "unchanged": self.unchanged, "insights": [i.to_dict() for i in self.insights]}


@dataclass(frozen=True)
class PreparedCluster:
    cluster_id: int
    memories: tuple[Memory, ...]
    cohesion: float
    suggestion: str  # the engine's own extractive insight, for the agent to improve on

    def to_dict(self) -> dict[str, Any]:
        return {"cluster_id": self.cluster_id, "member_count": len(self.memories), "cohesion": self.cohesion,
                "memory_ids": [m.id for m in self.memories], "suggestion": self.suggestion,
                "memories": [{"memory_id": m.id, "content": m.content, "importance": m.importance,
                              "entity_id": m.entity_id, "created_at": iso(m.created_at)} for m in self.memories]}


@dataclass(frozen=True)
class ReflectPrepareResponse:
    session_id: str
    expires_at: datetime
    memories_processed: int
    clusters: tuple[PreparedCluster, ...]
    existing_insight_count: int

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "expires_at": iso(self.expires_at),
                "memories_processed": self.memories_processed, "existing_insight_count": self.existing_insight_count,
                "clusters": [c.to_dict() for c in self.clusters]}


@dataclass(frozen=True)
class ReflectCommitResponse:
    insights: tuple[Insight, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"insights_created": len(self.insights), "insights": [i.to_dict() for i in self.insights]}


@dataclass(frozen=True)
class ContradictionsResponse:
    candidates: tuple[PendingPair, ...]
    contents: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"candidates": [{**c.to_dict(), "content_a": self.contents.get(c.memory_a, ""),
                                "content_b": self.contents.get(c.memory_b, "")} for c in self.candidates],
                "count": len(self.candidates)}


@dataclass(frozen=True)
class ContradictionCommitResponse:
    contradictions_confirmed: int
    revisions_created: int
    dismissed: int

    def to_dict(self) -> dict[str, Any]:
        return {"contradictions_confirmed": self.contradictions_confirmed, "revisions_created": self.revisions_created,
                "dismissed": self.dismissed}


REVIEW_REQUESTS: tuple[Any, ...] = (
    ReflectRequest, ReflectPrepareRequest, InsightsRequest, ReflectCommitRequest, ContradictionPrepareRequest,
    ContradictionCommitRequest,
)
WRITE_OPS = frozenset({"reflect", "reflect_prepare", "reflect_commit", "contradiction_commit"})
