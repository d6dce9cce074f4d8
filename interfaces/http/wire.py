"""Responses as REST sends them: the engine's `to_dict()` plus the fields the official SDK reads.

`HebbsRestClient` reads a memory's `memory_id`, `created_at_us` and `last_accessed_at_us`, finds a recall
result's memory fields at the top level of the result, and counts in `count` / `forgotten_count`. These
are added beside the engine's own fields (never instead of them), so our clients and the SDK both work.
"""

from __future__ import annotations

from typing import Any

from engine.api import ForgetResponse, RecallResponse
from engine.models import Memory

SDK_MEMORY_FIELDS = ("memory_id", "created_at_us", "last_accessed_at_us")
SDK_RESULT_FIELDS = ("memory_id", "content", "importance", "entity_id", "kind", "context", "access_count",
                     "created_at_us", "last_accessed_at_us")


def _micros(memory: Memory) -> dict[str, int]:
    last = memory.last_accessed_at
    return {
        "created_at_us": int(memory.created_at.timestamp() * 1_000_000),
        "last_accessed_at_us": int(last.timestamp() * 1_000_000) if last else 0,
    }


def memory_to_wire(memory: Memory) -> dict[str, Any]:
    return {**memory.to_dict(), "memory_id": memory.id, **_micros(memory)}


def recall_to_wire(response: RecallResponse) -> dict[str, Any]:
    results = []
    for result in response.results:
        plain = memory_to_wire(result.memory)
        flat = {k: plain[k] for k in SDK_RESULT_FIELDS}
        results.append({**result.to_dict(), "memory": plain, **flat})
    return {"results": results, "count": len(results)}


def forget_to_wire(response: ForgetResponse) -> dict[str, Any]:
    return {**response.to_dict(), "forgotten_count": len(response.forgotten)}
