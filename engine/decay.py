"""Every memory an operation returns carries its decay score (HEBBS' `decay_score`, under the tenant's
half-life, at the engine clock's now): `MemoryEngine.handle` stamps its responses here on the way out, so every
transport (REST, gRPC, the SDKs, the CLI) sends it without computing it."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from engine.api.responses import ListResponse, MemoriesResponse, NeighbourhoodResponse, RecallResponse
from engine.models import Memory, RecallResult
from engine.recall.scoring import decay_score


def stamped(memory: Memory, now: datetime, half_life_days: float) -> Memory:
    score = decay_score(memory.importance, memory.created_at, memory.last_accessed_at, memory.access_count, now,
                        half_life_days)
    return dataclasses.replace(memory, decay_score=score)


def stamp(response: Any, now: datetime, half_life_days: float) -> Any:
    """The response with each memory in it given its decay score; a response without memories as it is."""

    def one(memory: Memory) -> Memory:
        return stamped(memory, now, half_life_days)

    def result(r: RecallResult) -> RecallResult:
        return dataclasses.replace(r, memory=one(r.memory))

    if isinstance(response, Memory):
        return one(response)
    if isinstance(response, RecallResponse):
        return RecallResponse(tuple(result(r) for r in response.results))
    if isinstance(response, MemoriesResponse | ListResponse):
        return dataclasses.replace(response, memories=tuple(one(m) for m in response.memories))
    if isinstance(response, NeighbourhoodResponse):
        nodes = tuple(dataclasses.replace(n, memory=one(n.memory)) for n in response.nodes)
        return dataclasses.replace(response, nodes=nodes)
    return response
