"""Insights without a remote model: an extractive statement of what a cluster of memories holds.

An insight names the cluster's shared entities (or, without any, the words most of its memories share),
its time span, and quotes its most central memories (nearest the centroid). Its confidence comes from the
cluster's cohesion and its importance from its sources, as in HEBBS:
importance = 0.7 x mean source importance + 0.3 x confidence + ln(1 + n) / 10, capped at 1.
A fingerprint of the sources (ids and contents) lets a re-run skip insights whose sources did not change.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from engine.ingest.keywords import STOPWORDS
from engine.reflect.clusters import Cluster, unit

CENTRAL_QUOTES = 2  # memories quoted in the statement
QUOTE_CHARS = 240  # a quoted memory longer than this is cut at a word boundary
# Cohesion (mean cosine to the centroid) mapped linearly to a confidence: LOW_COHESION and below -> 0,
# HIGH_COHESION and above -> 1. Unrelated MiniLM sentences sit near 0.3 from their mean, one topic's near 0.7.
LOW_COHESION = 0.3
HIGH_COHESION = 0.8
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")


class Source(Protocol):
    """What an insight reads of each memory it is made from."""

    @property
    def id(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def importance(self) -> float: ...
    @property
    def entity_id(self) -> str | None: ...
    @property
    def created_at(self) -> datetime: ...


@dataclass(frozen=True)
class InsightDraft:
    """An insight ready to be stored as a memory of kind `insight`, with an edge to each source."""

    content: str
    confidence: float
    importance: float
    source_ids: tuple[str, ...]
    entity_id: str | None  # the entity every source shares, if one does
    topic: tuple[str, ...]
    span: tuple[datetime, datetime]
    fingerprint: str


def draft(cluster: Cluster, sources: Sequence[Source], embeddings: NDArray[np.float32]) -> InsightDraft:
    """The insight of one cluster; `sources` and `embeddings` are indexed as the cluster's members are."""
    members = [sources[i] for i in cluster.members]
    vectors = unit(np.asarray(embeddings, dtype=np.float32)[list(cluster.members)])
    order = np.argsort(-(vectors @ cluster.centroid), kind="stable")
    central = [members[int(i)] for i in order[:CENTRAL_QUOTES]]
    topic, entity_id = _topic(members)
    start = min(m.created_at for m in members)
    end = max(m.created_at for m in members)
    confidence = confidence_of(cluster.cohesion)
    quotes = " ".join(_quote(m.content) for m in central)
    content = f"{len(members)} memories about {', '.join(topic) or 'one topic'}, {_span(start, end)}: {quotes}"
    return InsightDraft(
        content=content,
        confidence=confidence,
        importance=importance_of([m.importance for m in members], confidence),
        source_ids=tuple(sorted(m.id for m in members)),
        entity_id=entity_id,
        topic=topic,
        span=(start, end),
        fingerprint=fingerprint(members),
    )


def confidence_of(cohesion: float) -> float:
    """A cluster's cohesion as a confidence in [0, 1]."""
    return round(min(1.0, max(0.0, (cohesion - LOW_COHESION) / (HIGH_COHESION - LOW_COHESION))), 4)


def importance_of(source_importances: Sequence[float], confidence: float) -> float:
    """0.7 x mean source importance + 0.3 x confidence + ln(1 + n) / 10, capped at 1 (HEBBS' formula)."""
    n = len(source_importances)
    mean = sum(source_importances) / n if n else 0.0
    return round(min(1.0, 0.7 * mean + 0.3 * confidence + math.log1p(n) / 10), 4)


def fingerprint(sources: Sequence[Source]) -> str:
    """Changes when a source is added, removed or revised; not when the sources are merely reordered."""
    digest = hashlib.sha256()
    for source in sorted(sources, key=lambda s: s.id):
        digest.update(source.id.encode())
        digest.update(hashlib.sha256(source.content.encode()).digest())
    return digest.hexdigest()[:32]


def _topic(members: Sequence[Source]) -> tuple[tuple[str, ...], str | None]:
    """The entities at least half the members share; else the words at least half of them use (top 3)."""
    half = len(members) / 2
    entities = Counter(m.entity_id for m in members if m.entity_id)
    shared = tuple(e for e, count in entities.most_common() if count >= half)
    if shared:
        only = shared[0] if entities[shared[0]] == len(members) else None
        return shared[:3], only
    words: Counter[str] = Counter()
    for m in members:
        words.update({w.lower() for w in _WORD.findall(m.content)} - STOPWORDS)
    common = [w for w, count in words.most_common() if count >= half and count >= 2]
    return tuple(common[:3]), None


def _quote(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= QUOTE_CHARS:
        return text if text.endswith((".", "!", "?")) else text + "."
    return text[:QUOTE_CHARS].rsplit(" ", 1)[0] + " ..."


def _span(start: datetime, end: datetime) -> str:
    if start.date() == end.date():
        return f"on {start.date().isoformat()}"
    return f"from {start.date().isoformat()} to {end.date().isoformat()}"
