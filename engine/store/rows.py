"""Rows the record store returns and takes, whatever the backend: memories with their embedding and structure,
the columns ranking and fusion read, and the store's time format (integer microseconds since the epoch)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import numpy as np

from engine import config
from engine.models import Memory

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
class DecayInputs:
    """What a memory's decay score is computed from (`engine.recall.scoring.decay_score`)."""

    id: str
    importance: float
    created_at: datetime
    last_accessed_at: datetime | None
    access_count: int
