"""REST routes of reflection and contradiction review: the SDK's ReflectService over HTTP.

`GET /v1/insights` is what the official `HebbsRestClient.insights()` reads (`insights`, `count`); each insight
is a memory (with the SDK's memory fields) plus its `confidence`, `source_memory_ids` and `stale`.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from fastapi import FastAPI

from engine.api.reviews import Insight
from interfaces.http.schemas import ReflectBody, ReflectCommitBody, VerdictsBody
from interfaces.http.tenant import Tenant
from interfaces.http.wire import memory_to_wire


def insight_to_wire(insight: Insight) -> dict[str, Any]:
    return {**insight.to_dict(), **memory_to_wire(insight.memory)}


def add_review_routes(app: FastAPI, call: Callable[[str, str, dict[str, Any]], Any]) -> None:
    tags: list[str | Enum] = ["reflect"]

    @app.post("/v1/reflect", tags=tags)
    def reflect(tenant: Tenant, body: ReflectBody) -> dict[str, Any]:
        """Cluster the scope's memories and store one extractive insight per cluster of at least 3 (clusters
        whose insight exists for the same sources are skipped)."""
        done = call(tenant, "reflect", body.fields())
        return {**done.to_dict(), "insights": [insight_to_wire(i) for i in done.insights]}

    @app.get("/v1/insights", tags=tags)
    def insights(tenant: Tenant, entity_id: str | None = None, min_confidence: float | None = None,
                 max_results: int | None = None) -> dict[str, Any]:
        """The top insights by confidence (then importance) across the store."""
        given = {"entity_id": entity_id, "min_confidence": min_confidence, "max_results": max_results}
        found = call(tenant, "insights", {k: v for k, v in given.items() if v is not None})
        return {"insights": [insight_to_wire(i) for i in found.insights], "count": len(found.insights)}

    @app.post("/v1/reflect/prepare", tags=tags)
    def reflect_prepare(tenant: Tenant, body: ReflectBody) -> dict[str, Any]:
        """The clusters with their memories, under a session id valid for 10 minutes."""
        return dict(call(tenant, "reflect_prepare", body.fields()).to_dict())

    @app.post("/v1/reflect/commit", tags=tags, status_code=201)
    def reflect_commit(tenant: Tenant, body: ReflectCommitBody) -> dict[str, Any]:
        """An agent's insights for a prepared session; each source must be one of the session's memories."""
        done = call(tenant, "reflect_commit", body.fields())
        return {**done.to_dict(), "insights": [insight_to_wire(i) for i in done.insights]}

    @app.get("/v1/contradictions", tags=tags)
    def contradictions(tenant: Tenant, limit: int | None = None) -> dict[str, Any]:
        """Contradiction candidates waiting for a verdict, most confident first."""
        return dict(call(tenant, "contradiction_prepare", {} if limit is None else {"limit": limit}).to_dict())

    @app.post("/v1/contradictions/commit", tags=tags)
    def contradiction_commit(tenant: Tenant, body: VerdictsBody) -> dict[str, Any]:
        """Verdicts: contradiction (contradicts edges both ways), revision (revised_from), dismiss."""
        return dict(call(tenant, "contradiction_commit", body.fields()).to_dict())
