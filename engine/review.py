"""Reflection and contradiction review plugged into an engine's request handlers (kept out of the facade).

`install` adds the six review operations (engine/api/reviews.py), has every commit checked for contradiction
candidates, marks known contradictions in recall and prime results, and keeps a failed check from failing
the write it follows (the memories are durable by then; the failure is logged).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from engine.api.requests import NewEdge, PrimeRequest, RecallRequest
from engine.api.responses import RecallResponse
from engine.api.reviews import (
    ContradictionCommitRequest,
    ContradictionPrepareRequest,
    InsightsRequest,
    InsightsResponse,
    ReflectCommitRequest,
    ReflectPrepareRequest,
    ReflectRequest,
)
from engine.contradictions.review import ContradictionReview, mark_contradictions
from engine.models import Edge
from engine.reflect.service import Reflection
from engine.store.rows import MemoryRecord
from engine.writer import Writer

log = logging.getLogger("hebbs.review")


def install(handlers: dict[type, Callable[[Any], Any]], writer: Writer,
            held: Callable[[], AbstractContextManager[None]]) -> None:
    """`held`: the structure follower's hold, so the idle worker does not parse beside a check (nor take the
    check's time for idle time)."""
    store, clock = writer.store, writer.clock
    reflection = Reflection(store, writer.remember, clock)

    def add_edges(edges: Sequence[Edge]) -> None:
        writer.add_edges([NewEdge(e.source, e.target, e.type, e.confidence, e.attrs) for e in edges])

    review = ContradictionReview(store, add_edges)

    def check(records: Sequence[MemoryRecord]) -> None:
        try:
            with held():
                review.check([(r.memory.id, r.memory.entity_id, r.memory.kind, r.embedding) for r in records],
                             clock.now())
        except Exception:  # noqa: BLE001 - the write is durable; a candidate search must not fail it
            log.exception("contradiction check after a write failed")

    writer.committed = check
    recall, prime = handlers[RecallRequest], handlers[PrimeRequest]
    handlers.update({
        ReflectRequest: reflection.reflect,
        ReflectPrepareRequest: reflection.prepare,
        ReflectCommitRequest: reflection.commit,
        InsightsRequest: lambda r: InsightsResponse(reflection.insights(r)),
        ContradictionPrepareRequest: lambda r: review.prepare(r.limit),
        ContradictionCommitRequest: review.commit,
        RecallRequest: lambda r: RecallResponse(mark_contradictions(store, recall(r).results)),
        PrimeRequest: lambda r: RecallResponse(mark_contradictions(store, prime(r).results)),
    })
