"""`hebbs.v1.ReflectService`: reflect, insights, reflect_prepare / commit, contradiction_prepare / commit.

Memory ids in this service's string fields (cluster members, sources, contradiction sides) are the engine's
26-character ids; an insight's `Memory.source_memory_ids` are the 16-byte ids like every `memory_id`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from hebbs._generated import hebbs_pb2 as pb
from hebbs._generated import hebbs_pb2_grpc as pb_grpc

from engine import ids
from engine.api.reviews import Insight
from engine.models import iso
from engine.store.rows import from_micros
from interfaces.grpc import convert
from interfaces.grpc.calls import rpc as _rpc
from interfaces.service import HebbsService

SYSTEM_PROMPT = ("You consolidate an agent's memories. From the numbered memories of one topic, write one or more "
                 "insights: short general statements that the memories support. Cite the memory ids each insight "
                 "rests on; use only ids listed.")
SNIPPET_CHARS = 200


def micros(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


def _scope(request: Any) -> dict[str, Any]:
    """ReflectScope: an entity (with an optional since) or global."""
    fields: dict[str, Any] = {}
    which = request.scope.WhichOneof("scope") if request.HasField("scope") else None
    chosen = request.scope.entity if which == "entity" else getattr(request.scope, "global")
    if which == "entity":
        fields["entity_id"] = chosen.entity_id
    if which is not None and chosen.HasField("since_us"):
        fields["since"] = iso(from_micros(chosen.since_us))
    return fields


def insight_to_proto(insight: Insight) -> Any:
    out = convert.memory_to_proto(insight.memory)
    out.source_memory_ids.extend(ids.to_bytes(s) for s in insight.source_ids)
    return out


class ReflectServicer(pb_grpc.ReflectServiceServicer):
    def __init__(self, service: HebbsService) -> None:
        self.service = service

    @_rpc
    def Reflect(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802 (gRPC method names)
        done = self.service.call(tenant, "reflect", _scope(request))
        return pb.ReflectResponse(insights_created=len(done.insights), clusters_found=done.clusters_found,
                                  clusters_processed=done.clusters_processed,
                                  memories_processed=done.memories_processed)

    @_rpc
    def GetInsights(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        fields: dict[str, Any] = {}
        if request.HasField("entity_id") and request.entity_id:
            fields["entity_id"] = request.entity_id
        if request.HasField("min_confidence"):
            fields["min_confidence"] = request.min_confidence
        if request.HasField("max_results"):
            fields["max_results"] = request.max_results
        found = self.service.call(tenant, "insights", fields)
        return pb.GetInsightsResponse(insights=[insight_to_proto(i) for i in found.insights])

    @_rpc
    def ReflectPrepare(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        prepared = self.service.call(tenant, "reflect_prepare", _scope(request))
        clusters = []
        for c in prepared.clusters:
            listed = "\n".join(f"[{m.id}] {m.content}" for m in c.memories)
            clusters.append(pb.ClusterPrompt(
                cluster_id=c.cluster_id, member_count=len(c.memories), proposal_system_prompt=SYSTEM_PROMPT,
                proposal_user_prompt=f"Memories:\n{listed}\n\nThe engine's own summary: {c.suggestion}",
                memory_ids=[m.id for m in c.memories],
                validation_context=json.dumps({"session_id": prepared.session_id, "cohesion": c.cohesion,
                                               "suggestion": c.suggestion}),
                memories=[pb.ClusterMemorySummary(memory_id=m.id, content=m.content, importance=m.importance,
                                                  entity_id=m.entity_id, created_at=micros(m.created_at))
                          for m in c.memories],
            ))
        return pb.ReflectPrepareResponse(session_id=prepared.session_id,
                                         memories_processed=prepared.memories_processed, clusters=clusters,
                                         existing_insight_count=prepared.existing_insight_count)

    @_rpc
    def ReflectCommit(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        insights = []
        for item in request.insights:
            fields: dict[str, Any] = {"content": item.content, "confidence": item.confidence,
                                      "source_memory_ids": list(item.source_memory_ids), "tags": list(item.tags)}
            if item.HasField("cluster_id"):
                fields["cluster_id"] = item.cluster_id
            insights.append(fields)
        done = self.service.call(tenant, "reflect_commit", {"session_id": request.session_id, "insights": insights})
        return pb.ReflectCommitResponse(insights_created=len(done.insights))

    @_rpc
    def ContradictionPrepare(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        found = self.service.call(tenant, "contradiction_prepare", {})
        return pb.ContradictionPrepareResponse(candidates=[
            pb.PendingContradictionProto(
                pending_id=c.pending_id, memory_id_a=c.memory_a, memory_id_b=c.memory_b,
                content_a_snippet=found.contents.get(c.memory_a, "")[:SNIPPET_CHARS],
                content_b_snippet=found.contents.get(c.memory_b, "")[:SNIPPET_CHARS],
                classifier_score=c.confidence, classifier_method=f"offline:{c.reason}:{c.verdict}",
                similarity=c.similarity, created_at=c.created_at)
            for c in found.candidates
        ])

    @_rpc
    def ContradictionCommit(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        verdicts = []
        for v in request.verdicts:
            fields: dict[str, Any] = {"pending_id": v.pending_id, "verdict": v.verdict, "confidence": v.confidence}
            if v.HasField("reasoning"):
                fields["reasoning"] = v.reasoning
            verdicts.append(fields)
        done = self.service.call(tenant, "contradiction_commit", {"verdicts": verdicts})
        return pb.ContradictionCommitResponse(contradictions_confirmed=done.contradictions_confirmed,
                                              revisions_created=done.revisions_created, dismissed=done.dismissed)
