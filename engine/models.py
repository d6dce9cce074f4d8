"""The data the engine stores and returns: memories, edges and recall results."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class MemoryKind(StrEnum):
    EPISODE = "episode"
    DOCUMENT = "document"
    PROPOSITION = "proposition"
    INSIGHT = "insight"
    REVISION = "revision"


class EdgeType(StrEnum):
    CAUSED_BY = "caused_by"
    FOLLOWED_BY = "followed_by"
    RELATED_TO = "related_to"
    ENTITY_RELATION = "entity_relation"
    PROPOSITION_OF = "proposition_of"
    REVISED_FROM = "revised_from"
    CONTRADICTS = "contradicts"


class Strategy(StrEnum):
    SIMILARITY = "similarity"
    TEMPORAL = "temporal"
    CAUSAL = "causal"
    ANALOGICAL = "analogical"


def iso(ts: datetime | None) -> str | None:
    """ISO 8601 in UTC with a `Z`, the one time format every interface prints."""
    if ts is None:
        return None
    return ts.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    content: str
    importance: float
    context: dict[str, Any]
    entity_id: str | None
    kind: MemoryKind
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None
    access_count: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "importance": self.importance,
            "context": self.context,
            "entity_id": self.entity_id,
            "kind": self.kind.value,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "last_accessed_at": iso(self.last_accessed_at),
            "access_count": self.access_count,
        }


@dataclass(frozen=True, slots=True)
class Edge:
    """`source --type--> target`; for `caused_by`, the source was caused by the target."""

    source: str
    target: str
    type: EdgeType
    confidence: float = 1.0
    attrs: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "type": self.type.value,
            "confidence": self.confidence,
            "attrs": self.attrs,
        }


@dataclass(frozen=True, slots=True)
class EdgeSpec:
    """An edge to create along with a new memory (the new memory is the source)."""

    target: str
    type: EdgeType
    confidence: float = 1.0
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What `remember` takes: everything but the fields the engine assigns."""

    content: str
    importance: float | None = None
    context: dict[str, Any] | str | None = None  # a JSON object, or its text
    entity_id: str | None = None
    kind: MemoryKind | str = MemoryKind.EPISODE
    created_at: datetime | str | None = None
    edges: tuple[EdgeSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class Signals:
    """The four raw inputs of the composite score, each in [0, 1]."""

    relevance: float
    recency: float
    importance: float
    reinforcement: float

    def to_dict(self) -> dict[str, float]:
        return {
            "relevance": self.relevance,
            "recency": self.recency,
            "importance": self.importance,
            "reinforcement": self.reinforcement,
        }


@dataclass(frozen=True, slots=True)
class StrategyDetail:
    """Why one strategy found a memory: its relevance plus the strategy's own fields."""

    strategy: Strategy
    relevance: float
    fields: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy.value, "relevance": self.relevance, **self.fields}


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory found by one or more strategies, before composite scoring."""

    memory: Memory
    relevance: float
    details: tuple[StrategyDetail, ...]


@dataclass(frozen=True, slots=True)
class RecallResult:
    memory: Memory
    score: float
    signals: Signals
    strategy_details: tuple[StrategyDetail, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory.to_dict(),
            "score": self.score,
            "signals": self.signals.to_dict(),
            "strategy_details": [d.to_dict() for d in self.strategy_details],
        }
