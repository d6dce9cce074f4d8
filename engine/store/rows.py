"""Rows the record store returns and takes, whatever the backend: memories with their embedding and structure,
the columns ranking and fusion read, and the store's time format (integer microseconds since the epoch)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import numpy as np

from engine import config
from engine.models import Memory, MemoryKind, iso

# `fusion_rows`' episode key of a memory whose context names no episode (the JSON array of nulls).
NO_EPISODE = "[" + ",".join("null" for _ in config.EPISODE_KEYS) + "]"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_micros(ts: datetime) -> int:
    return (ts - _EPOCH) // timedelta(microseconds=1)


def from_micros(value: int | None) -> datetime | None:
    if value is None:
        return None
    return _EPOCH + timedelta(microseconds=value)


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """A memory with what only the engine needs: its embedding and relational structure."""

    memory: Memory
    embedding: np.ndarray
    structure: dict[str, Any]
    structure_pending: bool = False  # not extracted yet: `structure` is {} until the store's mark is cleared
    check_pending: bool = False  # its contradiction check has not run yet (engine/contradictions/follow.py)


class FusionRow(NamedTuple):
    """What a fused recall reads of one candidate (`RecordStore.fusion_rows`)."""

    episode: str  # the JSON array of its context's episode keys; NO_EPISODE when it names none
    embedding: np.ndarray | None  # None when not asked for
    entity_id: str | None


class ScoreInputs(NamedTuple):
    """What the composite score reads of each candidate (`RecordStore.score_inputs`): row n is memory ids[n]."""

    ids: list[str]
    importance: np.ndarray  # float64
    created_us: np.ndarray  # int64, microseconds since the epoch
    access_count: np.ndarray  # int64


class CandidateColumns(NamedTuple):
    """Every memory's `fusion_rows` values as columns (`RecordStore.candidate_rows`): row n is memory ids[n]."""

    ids: list[str]
    episodes: list[str]
    entities: list[str | None]
    embeddings: np.ndarray  # (memories x width) float32


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One row of the ingestion ledger (engine/store/ledger.py): which source a memory came from."""

    memory_id: str
    source: str
    role: str
    position: int
    content_hash: str
    analysis: dict[str, Any]

    def params(self) -> tuple[Any, ...]:
        return (self.memory_id, self.source, self.role, self.position, self.content_hash,
                json.dumps(self.analysis, sort_keys=True, separators=(",", ":")))


@dataclass(frozen=True, slots=True)
class LinkRow:
    """What the linker reads for one ingested memory: its ledger entry plus entity and time."""

    memory_id: str
    source: str
    role: str
    position: int
    analysis: dict[str, Any]
    entity_id: str | None
    created_at: int  # microseconds


@dataclass
class EntityRecord:
    """One entity of the registry (engine/store/entities.py)."""

    id: str
    name: str
    type: str
    mentions: int = 0
    aliases: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class AlsoWrite:
    """Rows that must commit in the same transaction as a write of memories or edges: ledger rows, entities
    with the aliases to add, and (`mentions`) the registry's mention counts to set, dropping entities nothing
    refers to any more. Every backend writes them its own way; callers never see a cursor."""

    ledger: Sequence[LedgerRow] = ()
    entities: Sequence[tuple[EntityRecord, Sequence[str]]] = ()
    mentions: Mapping[str, int] | None = None


@dataclass(frozen=True, slots=True)
class PendingPair:
    """A contradiction candidate waiting for an agent's verdict (engine/contradictions/review.py): `memory_a`
    the older memory, `memory_b` the newer."""

    pending_id: str
    memory_a: str
    memory_b: str
    verdict: str  # what the check suggests: contradiction or revision
    reason: str  # negation, opposites, values, revision
    confidence: float
    similarity: float  # cosine of the two memories' embeddings
    detail: str
    created_at: int  # microseconds

    def to_dict(self) -> dict[str, Any]:
        return {"pending_id": self.pending_id, "memory_id_a": self.memory_a, "memory_id_b": self.memory_b,
                "suggested": self.verdict, "reason": self.reason, "confidence": self.confidence,
                "similarity": self.similarity, "detail": self.detail, "created_at_us": self.created_at}


@dataclass(frozen=True, slots=True)
class DecayInputs:
    """What a memory's decay score is computed from (`engine.recall.scoring.decay_score`)."""

    id: str
    importance: float
    created_at: datetime
    last_accessed_at: datetime | None
    access_count: int


@dataclass(frozen=True, slots=True)
class Tombstone:
    """What is left of a memory forgotten by criteria or by the sweep (engine/store/tombstones.py)."""

    memory_id: str
    forgotten_at: datetime
    content_sha256: str
    reason: str  # "criteria" or "sweep"

    def to_dict(self) -> dict[str, Any]:
        return {"memory_id": self.memory_id, "forgotten_at": iso(self.forgotten_at),
                "content_sha256": self.content_sha256, "reason": self.reason}


# The memories table's columns as both backends read and write them.
MEMORY_COLUMNS = (
    "id, content, importance, context, entity_id, kind, created_at, updated_at, last_accessed_at, access_count"
)


def row_to_memory(row: Sequence[Any]) -> Memory:
    created = from_micros(row[6])
    updated = from_micros(row[7])
    assert created is not None and updated is not None
    return Memory(
        id=row[0],
        content=row[1],
        importance=row[2],
        context=json.loads(row[3]),
        entity_id=row[4],
        kind=MemoryKind(row[5]),
        created_at=created,
        updated_at=updated,
        last_accessed_at=from_micros(row[8]),
        access_count=row[9],
    )


def record_params(r: MemoryRecord) -> tuple[Any, ...]:
    m = r.memory
    return (
        m.id,
        m.content,
        m.importance,
        json.dumps(m.context, sort_keys=True),
        m.entity_id,
        m.kind.value,
        to_micros(m.created_at),
        to_micros(m.updated_at),
        None if m.last_accessed_at is None else to_micros(m.last_accessed_at),
        m.access_count,
        json.dumps(r.structure, sort_keys=True),
        np.asarray(r.embedding, dtype=np.float32).tobytes(),
    )


# A reflect session that expired is still told apart from an unknown one this long (both backends).
EXPIRED_KEPT_SECONDS = 2 * 24 * 3600


# What a migration (engine/store/migrate.py) copies whole beside memories, edges, entities and the ledger: the
# tables both backends hold with the same columns, and the columns that tell a row already copied.
COPIED_TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "replies": (("key", "operation", "reply", "stored_at"), ("key",)),
    "pending_contradictions": (
        ("pending_id", "memory_a", "memory_b", "verdict", "reason", "confidence", "similarity", "detail",
         "created_at"), ("pending_id",)),
    "reflect_sessions": (("session_id", "clusters", "expires_at"), ("session_id",)),
    "tombstones": (("memory_id", "forgotten_at", "content_sha256", "reason"),
                   ("memory_id", "forgotten_at", "content_sha256")),
}
# Every table whose row count a migration compares (revisions are memories; the ledger is `ingested`).
COUNTED_TABLES = ("memories", "edges", "ingested", "entities", "entity_aliases", *COPIED_TABLES)


@dataclass(slots=True)
class KeyDocument:
    """The API keys as one JSON text (interfaces/auth.py writes it), in a store several servers share: what a
    `KeyStorage.changing_api_keys` block reads and replaces (None: no key was ever stored)."""

    text: str | None
