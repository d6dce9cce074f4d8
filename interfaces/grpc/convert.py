"""Between the official SDK's `hebbs.v1` messages and `engine.api` request mappings / responses.

Memory ids travel as the 16 bytes the engine prints as 26-character strings (`engine.ids`); times as
microseconds since the epoch. A recall's per-strategy configs are merged into the engine's one set of
parameters (two configs that disagree on a parameter are refused, never silently picked from).
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

from google.protobuf import json_format, struct_pb2
from hebbs._generated import hebbs_pb2 as pb

from engine import config, ids
from engine.errors import InvalidContextError, ValidationError
from engine.models import Memory, MemoryKind, RecallResult, StrategyDetail
from engine.store.rows import from_micros
from engine.subscribe import Push

STRATEGY_OF = {pb.SIMILARITY: "similarity", pb.TEMPORAL: "temporal", pb.CAUSAL: "causal", pb.ANALOGICAL: "analogical"}
STRATEGY_TO = {name: number for number, name in STRATEGY_OF.items()}
EDGE_OF = {
    pb.EDGE_TYPE_CAUSED_BY: "caused_by", pb.EDGE_TYPE_RELATED_TO: "related_to",
    pb.EDGE_TYPE_FOLLOWED_BY: "followed_by", pb.EDGE_TYPE_REVISED_FROM: "revised_from",
    pb.EDGE_TYPE_CONTRADICTS: "contradicts", pb.EDGE_TYPE_ENTITY_RELATION: "entity_relation",
    pb.EDGE_TYPE_PROPOSITION_OF: "proposition_of", pb.EDGE_TYPE_INSIGHT_FROM: "insight_from",
}
EDGE_TO = {name: number for number, name in EDGE_OF.items()}
KIND_TO = {
    MemoryKind.EPISODE: pb.MEMORY_KIND_EPISODE, MemoryKind.INSIGHT: pb.MEMORY_KIND_INSIGHT,
    MemoryKind.REVISION: pb.MEMORY_KIND_REVISION, MemoryKind.DOCUMENT: pb.MEMORY_KIND_DOCUMENT,
    MemoryKind.PROPOSITION: pb.MEMORY_KIND_PROPOSITION,
}
KIND_OF = {number: kind.value for kind, number in KIND_TO.items()}
CONTEXT_MODE_OF = {pb.CONTEXT_MODE_MERGE: "merge", pb.CONTEXT_MODE_REPLACE: "replace"}


def memory_id(raw: bytes, what: str = "memory_id") -> str:
    """The engine's id of 16 wire bytes; a clear error for anything else."""
    try:
        return ids.from_bytes(bytes(raw))
    except ValueError:
        raise ValidationError(f"{what} must be the 16 bytes of a memory id, got {len(raw)} bytes") from None


def _micros(moment: datetime | None) -> int:
    return 0 if moment is None else int(moment.timestamp() * 1_000_000)


def _iso(micros: int, what: str) -> str | None:
    try:
        moment = from_micros(micros) if micros else None
    except OverflowError:
        raise ValidationError(f"{what} {micros} microseconds since 1970 is past the year {config.MAX_YEAR}") from None
    return None if moment is None else moment.isoformat()


def _name(enum: Any, number: int) -> str:
    """An enum value's name, or its number for one the protos do not define (a newer or hostile client)."""
    try:
        return str(enum.Name(number))
    except ValueError:
        return f"{number} (not a value of {enum.DESCRIPTOR.name})"


def _struct(value: dict[str, Any] | None) -> struct_pb2.Struct | None:
    if not value:
        return None
    s = struct_pb2.Struct()
    s.update(value)
    return s


def context_of(message: Any, field: str = "context") -> dict[str, Any] | None:
    """A Struct field as a JSON object; NaN, Infinity and nesting past protobuf's own limits are refused."""
    if not message.HasField(field):
        return None
    try:
        return dict(json_format.MessageToDict(getattr(message, field)))
    except (json_format.Error, ValueError, RecursionError) as exc:
        raise InvalidContextError(f"{field} is not a JSON object: {str(exc)[:160]}") from None


def memory_to_proto(memory: Memory) -> Any:
    out = pb.Memory(
        memory_id=ids.to_bytes(memory.id),
        content=memory.content,
        importance=memory.importance,
        created_at=_micros(memory.created_at),
        updated_at=_micros(memory.updated_at),
        last_accessed_at=_micros(memory.last_accessed_at),
        access_count=memory.access_count,
        kind=KIND_TO.get(memory.kind, pb.MEMORY_KIND_UNSPECIFIED),
        decay_score=memory.decay_score or 0.0,
    )
    context = _struct(memory.context)
    if context is not None:
        out.context.CopyFrom(context)
    if memory.entity_id is not None:
        out.entity_id = memory.entity_id
    return out


def detail_to_proto(detail: StrategyDetail) -> Any:
    f = detail.fields
    # Strategies the official protos cannot name (lexical) travel as UNSPECIFIED_STRATEGY ("unknown" in the SDK).
    kind = STRATEGY_TO.get(detail.strategy.value, pb.UNSPECIFIED_STRATEGY)
    out = pb.StrategyDetailMessage(strategy_type=kind, relevance=detail.relevance)
    if "distance" in f:
        out.distance = float(f["distance"])
    if "rank" in f:
        out.rank = int(f["rank"])
    if f.get("timestamp"):
        moment = datetime.fromisoformat(str(f["timestamp"]).replace("Z", "+00:00"))
        out.timestamp = _micros(moment)
    if "depth" in f:
        out.depth = int(f["depth"])
    if f.get("edge_type") in EDGE_TO:
        out.causal_edge_type = EDGE_TO[f["edge_type"]]
    if f.get("seed_id"):
        out.seed_id = ids.to_bytes(f["seed_id"])
    if "embedding_similarity" in f:
        out.embedding_similarity = float(f["embedding_similarity"])
    if "structural_similarity" in f:
        out.structural_similarity = float(f["structural_similarity"])
    return out


def result_to_proto(result: RecallResult) -> Any:
    return pb.RecallResult(
        memory=memory_to_proto(result.memory),
        score=result.score,
        strategy_details=[detail_to_proto(d) for d in result.strategy_details],
    )


def weights_of(message: Any) -> dict[str, float] | None:
    if not message.HasField("scoring_weights"):
        return None
    w = message.scoring_weights
    return {"w_relevance": w.w_relevance, "w_recency": w.w_recency, "w_importance": w.w_importance,
            "w_reinforcement": w.w_reinforcement}


def remember_fields(request: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"content": request.content}
    if request.HasField("importance"):
        fields["importance"] = request.importance
    if request.HasField("context"):
        fields["context"] = context_of(request)
    if request.HasField("entity_id") and request.entity_id:
        fields["entity_id"] = request.entity_id
    if request.HasField("kind") and request.kind != pb.MEMORY_KIND_UNSPECIFIED:
        fields["kind"] = KIND_OF.get(request.kind, _name(pb.MemoryKind, request.kind))
    edges = []
    for edge in request.edges:
        if edge.edge_type not in EDGE_OF:
            raise ValidationError(f"edge type {_name(pb.EdgeType, edge.edge_type)} is not stored by this engine")
        spec: dict[str, Any] = {"target": memory_id(edge.target_id, "edge target_id"), "type": EDGE_OF[edge.edge_type]}
        if edge.HasField("confidence"):
            spec["confidence"] = edge.confidence
        edges.append(spec)
    if edges:
        fields["edges"] = edges
    return fields


def revise_fields(request: Any) -> dict[str, Any]:
    if len(request.edges):
        raise ValidationError("revise does not take edges here; remember a memory with edges instead")
    fields: dict[str, Any] = {"memory_id": memory_id(request.memory_id)}
    for name in ("content", "importance", "entity_id"):
        if request.HasField(name):
            fields[name] = getattr(request, name)
    if request.HasField("context"):
        fields["context"] = context_of(request)
    if request.context_mode != pb.CONTEXT_MODE_UNSPECIFIED:
        fields["context_mode"] = CONTEXT_MODE_OF.get(request.context_mode, _name(pb.ContextMode, request.context_mode))
    return fields


def _merge(params: dict[str, Any], name: str, value: Any) -> None:
    if name in params and params[name] != value:
        raise ValidationError(f"strategy configs disagree on {name}: {params[name]!r} and {value!r}")
    params[name] = value


def recall_fields(request: Any) -> dict[str, Any]:
    """The engine's recall fields from `RecallRequest`: strategies and each strategy_config's parameters."""
    fields: dict[str, Any] = {"cue": request.cue}
    strategies = []
    params: dict[str, Any] = {}
    for strategy_config in request.strategies:
        if strategy_config.strategy_type not in STRATEGY_OF:
            raise ValidationError(f"unknown strategy {_name(pb.RecallStrategyType, strategy_config.strategy_type)}")
        strategies.append(STRATEGY_OF[strategy_config.strategy_type])
        if strategy_config.HasField("entity_id") and strategy_config.entity_id:
            _merge(params, "entity_id", strategy_config.entity_id)
        if strategy_config.HasField("time_range"):
            span = strategy_config.time_range
            _merge(params, "time_range", [_iso(span.start_us, "time_range start"), _iso(span.end_us, "time_range end")])
        if strategy_config.HasField("seed_memory_id"):
            _merge(params, "seed_memory_id", memory_id(strategy_config.seed_memory_id, "seed_memory_id"))
        if strategy_config.HasField("max_depth"):
            _merge(params, "max_depth", strategy_config.max_depth)
        if strategy_config.HasField("ef_search"):
            _merge(params, "ef_search", strategy_config.ef_search)
        if strategy_config.HasField("analogical_alpha"):
            _merge(params, "analogical_alpha", strategy_config.analogical_alpha)
        if len(strategy_config.edge_types):
            unknown = [_name(pb.EdgeType, t) for t in strategy_config.edge_types if t not in EDGE_OF]
            if unknown:
                raise ValidationError(f"edge types not stored by this engine: {', '.join(unknown)}")
            _merge(params, "edge_types", sorted(EDGE_OF[t] for t in strategy_config.edge_types))
        if strategy_config.HasField("top_k"):
            params["top_k"] = max(params.get("top_k", 0), strategy_config.top_k)
    if strategies:
        fields["strategies"] = strategies
    fields.update(params)
    if request.HasField("top_k"):
        fields["top_k"] = request.top_k
    weights = weights_of(request)
    if weights is not None:
        fields["scoring_weights"] = weights
    return fields


def prime_fields(request: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"entity_id": request.entity_id}
    if request.HasField("similarity_cue"):
        fields["cue"] = request.similarity_cue
    if request.HasField("max_memories"):
        fields["top_k"] = request.max_memories
    weights = weights_of(request)
    if weights is not None:
        fields["scoring_weights"] = weights
    return fields


def forget_fields(request: Any, now: datetime) -> dict[str, Any]:
    """`staleness_threshold_us` is an age: not accessed in that many microseconds before `now`."""
    fields: dict[str, Any] = {"memory_ids": [memory_id(raw) for raw in request.memory_ids]}
    if request.HasField("entity_id") and request.entity_id:
        fields["entity_id"] = request.entity_id
    if request.HasField("staleness_threshold_us"):
        if request.staleness_threshold_us <= 0:
            raise ValidationError(f"staleness_threshold_us must be positive, got {request.staleness_threshold_us}")
        age = request.staleness_threshold_us
        try:
            fields["not_accessed_since"] = (now - timedelta(microseconds=age)).isoformat()
        except OverflowError:
            raise ValidationError(f"staleness_threshold_us {age} reaches back before the year 1") from None
    if request.HasField("access_count_floor"):
        fields["access_count_below"] = request.access_count_floor
    if request.HasField("memory_kind"):
        fields["kind"] = KIND_OF.get(request.memory_kind, _name(pb.MemoryKind, request.memory_kind))
    if request.HasField("decay_score_floor"):
        fields["decay_score_below"] = request.decay_score_floor
    return fields


def policy_fields(request: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name in ("tenant_id", "max_snapshots_per_memory", "auto_forget_threshold", "decay_half_life_days"):
        if request.HasField(name):
            fields[name] = getattr(request, name)
    return fields


def subscribe_fields(request: Any) -> dict[str, Any]:
    """The SDK's SubscribeRequest as the engine's subscribe fields; what this engine does not filter by is refused."""
    if len(request.kind_filter):
        raise ValidationError("kind_filter is not supported by this server's subscriptions; leave it unset")
    for name in ("time_scope_us", "coarse_threshold"):
        if request.HasField(name):
            raise ValidationError(f"{name} is not supported by this server's subscriptions; leave it unset")
    fields: dict[str, Any] = {"confidence_threshold": request.confidence_threshold}
    if request.HasField("entity_id") and request.entity_id:
        fields["entity_id"] = request.entity_id
    if request.HasField("output_buffer_size"):
        fields["queue_size"] = request.output_buffer_size
    return fields


def push_to_proto(subscription_id: int, push: Push[RecallResult]) -> Any:
    return pb.SubscribePushMessage(
        subscription_id=subscription_id, memory=memory_to_proto(push.item.memory), confidence=push.confidence,
        push_timestamp_us=int(time.time() * 1_000_000), sequence_number=push.sequence,
    )
