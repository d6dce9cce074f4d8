"""Reflection and contradiction review plugged into an engine's request handlers (kept out of the facade).

`install` adds the six review operations (engine/api/reviews.py), has every committed statement checked for
contradiction candidates after its write (engine/contradictions/follow.py: marked pending by the write, checked
before candidates are read or when the engine is idle, never failing the write), and marks known
contradictions in recall and prime results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.api.requests import NewEdge, PrimeRequest, RecallRequest
from engine.api.responses import RecallResponse
from engine.api.reviews import (
    ContradictionCommitRequest,
    ContradictionPrepareRequest,
    ContradictionsResponse,
    InsightsRequest,
    InsightsResponse,
    ReflectCommitRequest,
    ReflectPrepareRequest,
    ReflectRequest,
)
from engine.contradictions.follow import ContradictionChecks, needs_check
from engine.contradictions.review import ContradictionReview, mark_contradictions
from engine.models import Edge
from engine.reflect.service import Reflection
from engine.writer import Writer


def install(handlers: dict[type, Callable[[Any], Any]], writer: Writer) -> ContradictionChecks:
    """Returns the contradiction checks, for the engine's idle worker (`StructureFollower.also_idle`)."""
    store, clock = writer.store, writer.clock
    reflection = Reflection(store, writer.remember, clock)

    def add_edges(edges: Sequence[Edge]) -> None:
        writer.add_edges([NewEdge(e.source, e.target, e.type, e.confidence, e.attrs) for e in edges])

    review = ContradictionReview(store, add_edges)
    checks = ContradictionChecks(store, review, clock)
    writer.needs_check = needs_check

    def prepare(request: ContradictionPrepareRequest) -> ContradictionsResponse:
        checks.catch_up()  # the read barrier: every write so far is checked before its candidates are listed
        return review.prepare(request.limit)

    recall, prime = handlers[RecallRequest], handlers[PrimeRequest]
    handlers.update({
        ReflectRequest: reflection.reflect,
        ReflectPrepareRequest: reflection.prepare,
        ReflectCommitRequest: reflection.commit,
        InsightsRequest: lambda r: InsightsResponse(reflection.insights(r)),
        ContradictionPrepareRequest: prepare,
        ContradictionCommitRequest: review.commit,
        RecallRequest: lambda r: RecallResponse(mark_contradictions(store, recall(r).results)),
        PrimeRequest: lambda r: RecallResponse(mark_contradictions(store, prime(r).results)),
    })
    return checks
