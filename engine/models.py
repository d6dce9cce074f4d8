"""The data the engine stores and returns: memories, edges and recall results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

import numpy as np


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
    INSIGHT_FROM = "insight_from"


class Strategy(StrEnum):
    SIMILARITY = "similarity"
    TEMPORAL = "temporal"
    CAUSAL = "causal"
    ANALOGICAL = "analogical"
    LEXICAL = "lexical"


def iso(ts: datetime | None) -> str | None:
    """ISO 8601 in UTC with a `Z`, the one time format every interface prints."""
    if ts is None:
        return None
    return ts.isoformat().replace("+00:00", "Z")


_EPOCH = datetime(1970, 1, 1)  # naive: UTC's text without the offset, which "Z" replaces (half the formatting time)
_FEW_TIMES = 16  # `iso_micros` formats this many or fewer one by one


def iso_micros(micros: np.ndarray) -> list[str]:
    """`iso` of many UTC times given as microseconds since the epoch, at once (numpy formats them; the
    same text as `iso(from_micros(t))`: seconds only when there is no fraction, else six digits)."""
    micros = np.asarray(micros, dtype=np.int64)
    if len(micros) <= _FEW_TIMES:  # (a fused recall's kept few: numpy's fixed costs are more than formatting them)
        return [f"{(_EPOCH + timedelta(microseconds=t)).isoformat()}Z" for t in micros.tolist()]
    # Formatted once, to the microsecond; a whole second's text is that without its ".000000".
    fine = np.datetime_as_string(micros.astype("datetime64[us]"), unit="us").tolist()
    return [f"{text[:-7]}Z" if whole else f"{text}Z"
            for text, whole in zip(fine, (micros % 1_000_000 == 0).tolist(), strict=True)]


def from_iso(text: str | None) -> datetime | None:
    """The inverse of `iso`."""
    return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))


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
    # HEBBS' decay score under the tenant's policy at the time it was read (engine/decay.py stamps it on the
    # way out of `MemoryEngine.handle`); None on a memory nobody stamped. Not part of equality.
    decay_score: float | None = field(default=None, compare=False)

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
            "decay_score": self.decay_score,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Memory:
        created, updated = from_iso(raw["created_at"]), from_iso(raw["updated_at"])
        assert created is not None and updated is not None
        return cls(
            id=raw["id"],
            content=raw["content"],
            importance=float(raw["importance"]),
            context=dict(raw["context"]),
            entity_id=raw["entity_id"],
            kind=MemoryKind(raw["kind"]),
            created_at=created,
            updated_at=updated,
            last_accessed_at=from_iso(raw["last_accessed_at"]),
            access_count=int(raw["access_count"]),
            decay_score=None if raw.get("decay_score") is None else float(raw["decay_score"]),
        )


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

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Edge:
        return cls(raw["source"], raw["target"], EdgeType(raw["type"]), float(raw["confidence"]),
                   dict(raw.get("attrs") or {}))


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

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Signals:
        return cls(*(float(raw[k]) for k in ("relevance", "recency", "importance", "reinforcement")))


@dataclass(frozen=True, slots=True)
class StrategyDetail:
    """Why one strategy found a memory: its relevance plus the strategy's own fields."""

    strategy: Strategy
    relevance: float
    fields: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy.value, "relevance": self.relevance, **self.fields}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> StrategyDetail:
        rest = {k: v for k, v in raw.items() if k not in ("strategy", "relevance")}
        return cls(Strategy(raw["strategy"]), float(raw["relevance"]), rest)


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

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> RecallResult:
        return cls(
            Memory.from_dict(raw["memory"]),
            float(raw["score"]),
            Signals.from_dict(raw["signals"]),
            tuple(StrategyDetail.from_dict(d) for d in raw["strategy_details"]),
        )
