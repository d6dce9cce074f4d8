"""Transport-free requests: one frozen dataclass per operation, each with one `parse(mapping)`.

`parse` is the only validation path. The facade's keyword arguments, the CLI, the workbench and the
servers all build their request through it, so a bad input raises the same `ValidationError` subclass
with the same message whichever way it arrived. A request that exists has been validated: the engine
never checks its fields again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Self

from engine import config, validation
from engine.api.fields import EDGE_SPECS_SHAPE, TIME_RANGE_HELP, WEIGHTS_SHAPE, wire
from engine.api.reviews import (
    REVIEW_REQUESTS,
    ContradictionCommitRequest,
    ContradictionPrepareRequest,
    InsightsRequest,
    ReflectCommitRequest,
    ReflectPrepareRequest,
    ReflectRequest,
)
from engine.errors import InvalidEdgeError, InvalidPolicyError, InvalidRecallError, ValidationError
from engine.models import EdgeSpec, EdgeType, MemoryKind, NewMemory, RecallResult, Strategy
from engine.policy import MAX_SNAPSHOTS_LIMIT, Policy
from engine.recall.presets import DEFAULT_PRESET, PLAIN_FUSION, PRESETS, SIGNALS, FusionSettings
from engine.recall.scoring import DEFAULT_WEIGHTS, ScoringWeights
from engine.tenancy import tenant_name

TimeRange = tuple[datetime | None, datetime | None]


def _fields_of(raw: object, op: str, allowed: Iterable[str]) -> dict[str, Any]:
    """The request's fields as a dict; unknown names are an error (a typo must not be ignored silently)."""
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{op} request must be an object of fields, got {type(raw).__name__}")
    names = tuple(allowed)
    unknown = [str(k) for k in raw if k not in names]
    if unknown:
        raise ValidationError(f"unknown field(s) for {op}: {', '.join(sorted(unknown))}; expected {', '.join(names)}")
    return dict(raw)


def _int(name: str, value: object, lo: int, hi: int, error: type[ValidationError] = InvalidRecallError) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{name} must be an integer, got {validation.short_repr(value)}")
    if not lo <= value <= hi:
        raise error(f"{name} must be between {lo} and {hi}, got {validation.short_repr(value)}")
    return value


def _memory_id(value: object, what: str = "memory id") -> str:
    return validation.identifier(value, what)


def _optional_memory_id(value: object, what: str) -> str | None:
    return None if value in (None, "") else _memory_id(value, what)


def parse_edge_spec(value: object) -> EdgeSpec:
    """An edge from a new memory: `EdgeSpec`, `TARGET:TYPE[:CONF]`, `(target, type[, conf])` or
    `{target, type, confidence?}`. The one place edge specs are parsed."""
    target: object
    type_: object
    conf: object
    attrs: object
    if isinstance(value, EdgeSpec):
        target, type_, conf, attrs = value.target, value.type, value.confidence, value.attrs
    elif isinstance(value, str):
        parts = value.split(":")
        if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
            raise InvalidEdgeError(f"an edge is TARGET:TYPE[:CONFIDENCE], got {value!r}")
        target, type_, attrs = parts[0], parts[1], {}
        try:
            conf = float(parts[2]) if len(parts) == 3 else 1.0
        except ValueError:
            raise InvalidEdgeError(f"edge confidence must be a number, got {parts[2]!r}") from None
    elif isinstance(value, tuple | list) and len(value) in (2, 3):
        target, type_ = value[0], value[1]
        conf, attrs = (value[2] if len(value) == 3 else 1.0), {}
    elif isinstance(value, Mapping):
        unknown = set(value) - {"target", "type", "confidence", "attrs"}
        if unknown:
            raise InvalidEdgeError(f"an edge takes target, type, confidence, not {', '.join(sorted(unknown))}")
        target, type_ = value.get("target"), value.get("type")
        conf, attrs = value.get("confidence", 1.0), value.get("attrs") or {}
    else:
        raise InvalidEdgeError(f"an edge is TARGET:TYPE[:CONFIDENCE] or {{target, type, confidence}}, got {value!r}")
    if not isinstance(attrs, Mapping):
        raise InvalidEdgeError(f"edge attrs must be an object, got {type(attrs).__name__}")
    return EdgeSpec(
        _memory_id(target, "edge target"),
        validation.edge_type(type_),
        validation.confidence(conf),
        validation.context(attrs, "edge attrs"),
    )


@dataclass(frozen=True, slots=True)
class NewEdge:
    """An edge between two stored memories: `source --type--> target`."""

    source: str
    target: str
    type: EdgeType
    confidence: float = 1.0
    attrs: Mapping[str, Any] | None = None

    @classmethod
    def parse(cls, value: object) -> NewEdge:
        """`NewEdge`, an `Edge`, `(source, target, type[, confidence])` or `{source, target, type, confidence?}`."""
        if isinstance(value, NewEdge):
            return value
        if isinstance(value, tuple | list) and len(value) in (3, 4):
            source, rest = value[0], (value[1], value[2], *(value[3:]))
        elif isinstance(value, Mapping):
            source = value.get("source")
            rest = {k: v for k, v in value.items() if k != "source"}  # type: ignore[assignment]
        elif hasattr(value, "source") and hasattr(value, "target") and hasattr(value, "type"):
            source = value.source
            rest = (value.target, value.type, getattr(value, "confidence", 1.0))
        else:
            raise InvalidEdgeError(f"an edge is (source, target, type[, confidence]), got {value!r}")
        spec = parse_edge_spec(rest)
        return cls(_memory_id(source, "edge source"), spec.target, spec.type, spec.confidence, spec.attrs)


# --- writes --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RememberRequest:
    """One memory to store; the engine assigns its id and times."""

    OP: ClassVar[str] = "remember"
    content: str = wire(str | None, f"Non-empty text, at most {config.MAX_CONTENT_BYTES} bytes.")
    importance: float = wire(float | None, "0.0-1.0 (default 0.5).", default=config.DEFAULT_IMPORTANCE)
    context: Mapping[str, Any] | None = wire(dict[str, Any] | str | None, "A JSON object (or its text).", default=None)
    entity_id: str | None = wire(str | None, default=None)
    kind: MemoryKind = wire(str | None, "episode, document, proposition, insight.", default=MemoryKind.EPISODE)
    created_at: datetime | None = wire(str | None, "ISO 8601, for importing history.", default=None)
    edges: tuple[EdgeSpec, ...] = wire(EDGE_SPECS_SHAPE, "Edges from the new memory: TARGET:TYPE[:CONF].", default=())

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | NewMemory) -> Self:
        if isinstance(raw, NewMemory):
            raw = {f.name: getattr(raw, f.name) for f in fields(raw)}
        values = _fields_of(raw, cls.OP, (f.name for f in fields(cls)))
        created = values.get("created_at")
        edges = values.get("edges") or ()
        if isinstance(edges, str | Mapping) or not isinstance(edges, Iterable):
            edges = [edges]
        return cls(
            content=validation.content(values.get("content")),
            importance=validation.importance(values.get("importance")),
            context=validation.context(values.get("context")),
            entity_id=validation.entity_id(values.get("entity_id")),
            kind=validation.new_kind(values.get("kind", MemoryKind.EPISODE)),
            created_at=None if created in (None, "") else validation.timestamp(created, what="created_at"),
            edges=tuple(parse_edge_spec(e) for e in edges),
        )


@dataclass(frozen=True, slots=True)
class RememberManyRequest:
    """A batch stored atomically: every item is validated before anything is written."""

    OP: ClassVar[str] = "remember_many"
    items: tuple[RememberRequest, ...] = wire(list[dict[str, Any]] | None, "A batch of memories (instead of one).")

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, ("items",))
        items = values.get("items")
        if isinstance(items, str | Mapping) or not isinstance(items, Iterable):
            raise ValidationError(f"items must be a list of memories, got {type(items).__name__}")
        return cls(tuple(_remember(item) for item in items))


def _remember(item: object) -> RememberRequest:
    if isinstance(item, RememberRequest):
        return item
    if isinstance(item, NewMemory | Mapping):
        return RememberRequest.parse(item)
    raise ValidationError(f"a memory to remember is an object with content, got {type(item).__name__}")


CONTEXT_MODES = ("merge", "replace")


@dataclass(frozen=True, slots=True)
class ReviseRequest:
    """Change a memory in place; at least one field besides the id (and `context_mode`)."""

    OP: ClassVar[str] = "revise"
    memory_id: str
    content: str | None = wire(str | None, default=None)
    importance: float | None = wire(float | None, default=None)
    context: Mapping[str, Any] | None = wire(dict[str, Any] | str | None, default=None)
    entity_id: str | None = wire(str | None, default=None)
    context_mode: str = wire(str | None, "merge (default): the given context's keys are set on the memory's "
                             "context, the rest kept; replace: the given context becomes the whole context.",
                             default="merge")

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, (f.name for f in fields(cls)))
        changes = {k: v for k, v in values.items() if k not in ("memory_id", "context_mode") and v is not None}
        if not changes:
            raise ValidationError("revise needs at least one of content, importance, context, entity_id")
        mode = values.get("context_mode") or "merge"
        if mode not in CONTEXT_MODES:
            raise ValidationError(f"context_mode must be merge or replace, got {validation.short_repr(mode)}")
        return cls(
            memory_id=_memory_id(values.get("memory_id")),
            content=None if "content" not in changes else validation.content(changes["content"]),
            importance=None if "importance" not in changes else validation.importance(changes["importance"]),
            context=None if "context" not in changes else validation.context(changes["context"]),
            entity_id=None if "entity_id" not in changes else validation.entity_id(changes["entity_id"]),
            context_mode=mode,
        )


def _flag(name: str, value: object) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ValidationError(f"{name} must be true or false, got {validation.short_repr(value)}")
    return value


@dataclass(frozen=True, slots=True)
class ForgetCriteria:
    """What a memory must match to be forgotten, every given criterion at once (ANDed); None: not a criterion."""

    not_accessed_since: datetime | None = None
    access_count_below: int | None = None
    kind: MemoryKind | None = None
    decay_score_below: float | None = None

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self))


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    """Forget memories by id, every memory of an entity, or those matching criteria: everything given is ANDed
    (ids and an entity: those ids, if of that entity). Revisions go with their memory. `dry_run` reports what
    would go and changes nothing. A forget by criteria leaves a tombstone per memory (id, time, content hash).

    A delete names its entity exactly: the alias and unique-prefix matching that reads allow ("cloudv" for
    "cloudvault") applies only when `prefix` is true, so a typo never erases another entity's memories.
    """

    OP: ClassVar[str] = "forget"
    memory_ids: tuple[str, ...] = wire(list[str] | None, default=())
    entity_id: str | None = wire(str | None, "Forget every memory of this entity.", default=None)
    prefix: bool = False
    not_accessed_since: datetime | None = wire(
        str | None, "Only memories not accessed (recalled) since this time (never accessed: since creation); ISO "
        "8601.", default=None)
    access_count_below: int | None = wire(int | None, "Only memories recalled fewer times than this.", default=None)
    kind: MemoryKind | None = wire(str | None, "Only memories of this kind.", default=None)
    decay_score_below: float | None = wire(float | None, "Only memories whose decay score is below this.",
                                           default=None)
    dry_run: bool = wire(bool | None, "Report what would be forgotten; change nothing.", default=False)

    @property
    def criteria(self) -> ForgetCriteria:
        return ForgetCriteria(self.not_accessed_since, self.access_count_below, self.kind, self.decay_score_below)

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, (f.name for f in fields(cls)))
        ids = values.get("memory_ids") or ()
        if isinstance(ids, str):
            ids = [ids]
        if not isinstance(ids, Iterable) or isinstance(ids, Mapping):
            raise ValidationError(f"memory_ids must be a list of ids, got {type(ids).__name__}")
        prefix = _flag("prefix", values.get("prefix"))
        since, below = values.get("not_accessed_since"), values.get("access_count_below")
        kind, decay = values.get("kind"), values.get("decay_score_below")
        request = cls(
            tuple(_memory_id(i) for i in ids), validation.entity_id(values.get("entity_id")), prefix,
            not_accessed_since=None if since in (None, "") else validation.timestamp(since, what="not_accessed_since"),
            access_count_below=None if below is None else _int("access_count_below", below, 1, 2**53,
                                                                 ValidationError),
            kind=None if kind in (None, "") else validation.kind(kind),
            decay_score_below=None if decay is None else validation.number(decay, "decay_score_below", 0.0, 2.0),
            dry_run=_flag("dry_run", values.get("dry_run")),
        )
        if not request.memory_ids and request.entity_id is None and not request.criteria:
            raise ValidationError("forget needs memory ids, an entity_id or a criterion (not_accessed_since, "
                                  "access_count_below, kind, decay_score_below)")
        if prefix and request.entity_id is None:
            raise ValidationError("prefix applies to entity_id; give an entity_id")
        return request


@dataclass(frozen=True, slots=True)
class AddEdgesRequest:
    """Edges between stored memories, written in one transaction (bulk imports link a batch this way)."""

    OP: ClassVar[str] = "add_edges"
    edges: tuple[NewEdge, ...]

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        """`edges`: `NewEdge`s or their forms; with `source`, edges from that one memory, each given as a
        remembered memory's edges are (`TARGET:TYPE[:CONF]`, `{target, type, confidence}`)."""
        values = _fields_of(raw, cls.OP, ("edges", "source"))
        edges = values.get("edges")
        if isinstance(edges, str | Mapping) or not isinstance(edges, Iterable):
            raise InvalidEdgeError(f"edges must be a list, got {type(edges).__name__}")
        if values.get("source") is None:
            parsed = tuple(NewEdge.parse(e) for e in edges)
        else:
            source = _memory_id(values["source"], "edge source")
            specs = [parse_edge_spec(e) for e in edges]
            parsed = tuple(NewEdge(source, s.target, s.type, s.confidence, s.attrs) for s in specs)
        if not parsed:
            raise InvalidEdgeError("edges must not be empty")
        return cls(parsed)


@dataclass(frozen=True, slots=True)
class IngestRequest:
    """Index documents (files or folders) into propositions, entities and edges."""

    OP: ClassVar[str] = "ingest"
    paths: tuple[Path, ...] = wire(list[str] | str, "Files or folders on the server's file system.")
    extractor: str | None = wire(str | None, "offline (default) or llm.", default=None)
    # The per-file analysis budget; None: env or config default, 0: no limit.
    file_seconds: float | None = wire(
        float | None, "Skip a file whose analysis takes longer (0: no limit).", default=None
    )

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, ("paths", "extractor", "file_seconds"))
        paths = values.get("paths")
        if isinstance(paths, str | Path):
            paths = [paths]
        if not isinstance(paths, Iterable) or isinstance(paths, Mapping):
            raise ValidationError(f"paths must be a list of files or folders, got {type(paths).__name__}")
        parsed = tuple(
            Path(validation.text(str(p), "path", 4096)) for p in paths if isinstance(p, str | Path) and str(p).strip()
        )
        if not parsed:
            raise ValidationError("ingest needs at least one file or folder")
        extractor = values.get("extractor")
        if extractor is not None and extractor not in ("offline", "llm"):
            raise ValidationError(f"unknown extractor {extractor!r}; expected offline or llm")
        seconds = values.get("file_seconds")
        if seconds is not None:
            seconds = validation.number(seconds, "file_seconds (seconds, 0: no limit)", 0.0, math.inf)
        return cls(parsed, extractor, seconds)


# --- reads ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class GetRequest:
    OP: ClassVar[str] = "get"
    memory_id: str

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        return cls(_memory_id(_fields_of(raw, cls.OP, ("memory_id",)).get("memory_id")))


@dataclass(frozen=True, slots=True)
class ListRequest:
    """Memories filtered by entity, kind, time and importance, newest first; filters apply before paging."""

    OP: ClassVar[str] = "list"
    entity_id: str | None = None
    kind: MemoryKind | None = None
    time_range: TimeRange | None = None
    min_importance: float | None = None
    include_revisions: bool = True
    limit: int = config.DEFAULT_LIST_LIMIT
    offset: int = 0

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, (f.name for f in fields(cls)))
        kind = values.get("kind")
        floor = values.get("min_importance")
        revisions = values.get("include_revisions", True)
        if not isinstance(revisions, bool):
            raise ValidationError(f"include_revisions must be true or false, got {revisions!r}")
        return cls(
            entity_id=validation.entity_id(values.get("entity_id")),
            kind=None if kind in (None, "") else validation.kind(kind),
            time_range=validation.time_range(values.get("time_range")),
            min_importance=None if floor is None else validation.importance(floor),
            include_revisions=revisions,
            limit=_int("limit", values.get("limit", config.DEFAULT_LIST_LIMIT), 1, config.MAX_LIST_LIMIT,
                       ValidationError),
            offset=_int("offset", values.get("offset", 0), 0, 2**53, ValidationError),
        )


@dataclass(frozen=True, slots=True)
class StatsRequest:
    """Counts from each store. `vector_index: false` leaves out the vector index's own count (None), so the
    counts are read from the record store alone and do not open the index (importing Chroma takes seconds of
    a cold start: the workbench's sidebar shows counts on every page)."""

    OP: ClassVar[str] = "stats"
    vector_index: bool = True

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None = None) -> Self:
        fields = _fields_of(raw or {}, cls.OP, ("vector_index",))
        value = fields.get("vector_index", True)
        if not isinstance(value, bool):
            raise ValidationError(f"vector_index must be true or false, got {value!r}")
        return cls(value)


@dataclass(frozen=True, slots=True)
class NeighbourhoodRequest:
    """The subgraph around a memory: what the causal-graph view draws and a REST client reads."""

    OP: ClassVar[str] = "neighbourhood"
    memory_id: str
    depth: int = config.DEFAULT_NEIGHBOURHOOD_DEPTH
    max_nodes: int = config.DEFAULT_NEIGHBOURHOOD_NODES
    edge_types: frozenset[EdgeType] | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, (f.name for f in fields(cls)))
        return cls(
            memory_id=_memory_id(values.get("memory_id")),
            depth=_int("depth", values.get("depth", config.DEFAULT_NEIGHBOURHOOD_DEPTH), 1, config.MAX_DEPTH_CAP,
                       ValidationError),
            max_nodes=_int("max_nodes", values.get("max_nodes", config.DEFAULT_NEIGHBOURHOOD_NODES), 1,
                           config.MAX_NEIGHBOURHOOD_NODES, ValidationError),
            edge_types=_edge_types(values.get("edge_types")),
        )


def _edge_types(value: object) -> frozenset[EdgeType] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [t for t in value.split(",") if t.strip()]
    if not isinstance(value, Iterable) or isinstance(value, Mapping):
        raise InvalidRecallError(f"edge_types must be a list of edge types, got {value!r}")
    types = frozenset(validation.edge_type(t.strip() if isinstance(t, str) else t) for t in value)
    if not types:
        raise InvalidRecallError("edge_types must name at least one edge type")
    return types


# --- policies ------------------------------------------------------------------------------------------
def _tenant(value: object) -> str | None:
    """A request's tenant: None (the engine's own) or a valid tenant name, which the engine checks is its own."""
    return None if value in (None, "") else tenant_name(value, "tenant_id")


@dataclass(frozen=True, slots=True)
class SetPolicyRequest:
    """Change a tenant's policy (the official SDK's set_policy): the values given, the others kept."""

    OP: ClassVar[str] = "set_policy"
    tenant_id: str | None = wire(str | None, "Whose policy (left out: the tenant the request is served for).",
                                 default=None)
    max_snapshots_per_memory: int | None = wire(
        int | None, f"Earlier states (revisions) kept per memory, 1-{MAX_SNAPSHOTS_LIMIT}; older ones are forgotten.",
        default=None)
    auto_forget_threshold: float | None = wire(
        float | None, "0-1: the auto-forget sweep forgets memories whose decay score is below it.", default=None)
    decay_half_life_days: float | None = wire(float | None, "Days for a decay score to halve (default 30).",
                                              default=None)

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, (f.name for f in fields(cls)))
        changes = {k: values.get(k) for k in ("max_snapshots_per_memory", "auto_forget_threshold",
                                              "decay_half_life_days")}
        if all(v is None for v in changes.values()):
            raise InvalidPolicyError("set_policy needs at least one of " + ", ".join(changes))
        Policy().updated(**changes)  # validated here, so a bad value is refused before anything is read
        return cls(_tenant(values.get("tenant_id")), **changes)


@dataclass(frozen=True, slots=True)
class GetPolicyRequest:
    """A tenant's policy as it is now."""

    OP: ClassVar[str] = "get_policy"
    tenant_id: str | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None = None) -> Self:
        values = _fields_of(raw or {}, cls.OP, ("tenant_id",))
        return cls(_tenant(values.get("tenant_id")))


@dataclass(frozen=True, slots=True)
class SweepRequest:
    """The auto-forget sweep: forget every memory whose decay score is below the policy's threshold, leaving
    tombstones. `dry_run` reports what would go."""

    OP: ClassVar[str] = "sweep"
    tenant_id: str | None = wire(str | None, default=None)
    dry_run: bool = wire(bool | None, "Report what would be forgotten; change nothing.", default=False)

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None = None) -> Self:
        values = _fields_of(raw or {}, cls.OP, (f.name for f in fields(cls)))
        return cls(_tenant(values.get("tenant_id")), _flag("dry_run", values.get("dry_run")))


# --- recall --------------------------------------------------------------------------------------------
def _weights(value: object) -> ScoringWeights:
    if value is None:
        return DEFAULT_WEIGHTS
    if isinstance(value, ScoringWeights):
        return value
    if isinstance(value, str):
        return ScoringWeights.parse(value)
    if isinstance(value, Mapping):
        return ScoringWeights.from_mapping(value)
    raise InvalidRecallError(f"scoring_weights must be an object or R:T:I:F, got {type(value).__name__}")


def _fusion(value: object, default: FusionSettings) -> FusionSettings:
    """Fusion settings: a `FusionSettings`, or an object overriding some of the preset's fields."""
    if value is None:
        return default
    if isinstance(value, FusionSettings):
        return value
    if not isinstance(value, Mapping):
        raise InvalidRecallError(f"fusion must be an object, got {type(value).__name__}")
    allowed = ("weights", "neighbour_weight", "episode_weight", "episode_decay", "exact_search")
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        raise InvalidRecallError(f"unknown fusion field(s) {', '.join(unknown)}; expected {', '.join(allowed)}")
    weights = value.get("weights", default.weights)
    if not isinstance(weights, Mapping) or any(k not in SIGNALS for k in weights):
        raise InvalidRecallError(f"fusion weights must be an object with keys among {', '.join(SIGNALS)}")
    numbers = {"weights": {k: _share(f"fusion weight {k}", v, 10.0) for k, v in weights.items()}}
    for name in ("neighbour_weight", "episode_weight", "episode_decay"):
        numbers[name] = _share(name, value.get(name, getattr(default, name)), 1.0)  # type: ignore[assignment]
    exact = value.get("exact_search", default.exact_search)
    if not isinstance(exact, bool):
        raise InvalidRecallError(f"exact_search must be true or false, got {exact!r}")
    return FusionSettings(
        weights=numbers["weights"],
        neighbour_weight=numbers["neighbour_weight"],  # type: ignore[arg-type]
        episode_weight=numbers["episode_weight"],  # type: ignore[arg-type]
        episode_decay=numbers["episode_decay"],  # type: ignore[arg-type]
        exact_search=exact,
    )


def _share(name: str, value: object, hi: float) -> float:
    return validation.number(value, name, 0.0, hi, InvalidRecallError)


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """A recall: the cue, the strategies, their parameters and the scoring weights (GUIDE section 2). Naming
    neither strategies nor a preset runs `DEFAULT_PRESET` (engine/recall/presets.py), on every entry point."""

    OP: ClassVar[str] = "recall"
    cue: str = wire(str | None, default="", examples=("Acme meeting",))
    strategies: tuple[Strategy, ...] = wire(
        list[str] | str | None, "similarity, temporal, causal, analogical, lexical; several are fused. None (and "
        "no preset): the default preset, recommended.",
        default=DEFAULT_PRESET.strategies,
    )
    top_k: int = wire(int | None, default=config.DEFAULT_TOP_K, examples=(config.DEFAULT_TOP_K,))
    scoring_weights: ScoringWeights = wire(WEIGHTS_SHAPE, "An object of weights, or R:T:I:F.", default=DEFAULT_WEIGHTS)
    entity_id: str | None = wire(str | None, "Temporal: whose timeline.", default=None)
    time_range: TimeRange | None = wire(str | list[str | None] | None, TIME_RANGE_HELP, default=None)
    ef_search: int = wire(int | None, "Similarity: HNSW search breadth.", default=config.DEFAULT_EF_SEARCH)
    seed_memory_id: str | None = wire(str | None, "Causal: the memory to walk from.", default=None)
    max_depth: int = wire(int | None, f"Causal: at most {config.MAX_DEPTH_CAP}.", default=config.DEFAULT_MAX_DEPTH)
    edge_types: frozenset[EdgeType] | None = wire(
        list[str] | str | None, "Causal: edge types to follow.", default=None
    )
    analogical_alpha: float = wire(
        float | None, "Analogical: 0 = structure only, 1 = embedding only.", default=config.DEFAULT_ANALOGICAL_ALPHA
    )
    preset: str | None = wire(
        str | None, "A named recipe (recommended, similarity, lexical).", default=DEFAULT_PRESET.name
    )
    fusion: FusionSettings = wire(
        dict[str, Any] | None,
        "Overrides of the fusion settings: weights, neighbour_weight, episode_weight, episode_decay, exact_search.",
        default=DEFAULT_PRESET.fusion,
    )

    @property
    def fused(self) -> bool:
        """Several strategies, or a preset: evidence is normalised and added (engine/recall/fusion.py)."""
        return len(self.strategies) > 1 or self.preset is not None or self.fusion != PLAIN_FUSION

    @property
    def needs_cue_embedding(self) -> bool:
        return (
            Strategy.SIMILARITY in self.strategies
            or Strategy.ANALOGICAL in self.strategies
            or (Strategy.CAUSAL in self.strategies and self.seed_memory_id is None)
        )

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, (f.name for f in fields(cls)))
        preset_name = values.get("preset")
        strategies = values.get("strategies")
        if preset_name in (None, ""):
            preset_name = DEFAULT_PRESET.name if strategies is None else None  # named strategies run as named
        elif not isinstance(preset_name, str) or preset_name not in PRESETS:
            raise InvalidRecallError(f"unknown preset {preset_name!r}; expected one of {', '.join(PRESETS)}")
        if strategies is None:
            strategies = list((PRESETS[preset_name] if preset_name else DEFAULT_PRESET).strategies)
        elif isinstance(strategies, str):
            strategies = [strategies]
        elif not isinstance(strategies, Iterable) or isinstance(strategies, Mapping):
            raise InvalidRecallError(f"strategies must be a list of strategy names, got {strategies!r}")
        chosen = tuple(dict.fromkeys(validation.strategy(s) for s in strategies))
        if not chosen:
            raise InvalidRecallError("at least one strategy is required")
        cue = validation.cue(values.get("cue"))
        alpha = _share("analogical_alpha", values.get("analogical_alpha", config.DEFAULT_ANALOGICAL_ALPHA), 1.0)
        request = cls(
            cue=cue,
            strategies=chosen,
            top_k=_int("top_k", values.get("top_k", config.DEFAULT_TOP_K), 1, config.MAX_TOP_K),
            scoring_weights=_weights(values.get("scoring_weights")),
            entity_id=validation.entity_id(values.get("entity_id")),
            time_range=validation.time_range(values.get("time_range")),
            ef_search=_int("ef_search", values.get("ef_search", config.DEFAULT_EF_SEARCH), 1, config.MAX_EF_SEARCH),
            seed_memory_id=_optional_memory_id(values.get("seed_memory_id"), "seed_memory_id"),
            max_depth=_int("max_depth", values.get("max_depth", config.DEFAULT_MAX_DEPTH), 1, config.MAX_DEPTH_CAP),
            edge_types=_edge_types(values.get("edge_types")),
            analogical_alpha=alpha,
            preset=preset_name,
            fusion=_fusion(values.get("fusion"), PRESETS[preset_name].fusion if preset_name else PLAIN_FUSION),
        )
        if Strategy.TEMPORAL in chosen and request.entity_id is None:
            raise InvalidRecallError("the temporal strategy needs an entity_id (whose timeline to read)")
        if (request.needs_cue_embedding or Strategy.LEXICAL in chosen) and not cue.strip():
            needs = [s.value for s in chosen if s != Strategy.TEMPORAL]
            raise InvalidRecallError(f"a non-empty cue is required for {', '.join(needs)} recall")
        return request


@dataclass(frozen=True, slots=True)
class PrimeRequest:
    """An entity's recent memories, ranked by relevance to an optional cue: context to prime an agent with."""

    OP: ClassVar[str] = "prime"
    entity_id: str = wire(str | None)
    cue: str = wire(str | None, default="")
    top_k: int = wire(int | None, default=config.DEFAULT_TOP_K)
    scoring_weights: ScoringWeights = wire(WEIGHTS_SHAPE, default=DEFAULT_WEIGHTS)

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, (f.name for f in fields(cls)))
        entity = validation.entity_id(values.get("entity_id"))
        if entity is None:
            raise InvalidRecallError("prime needs an entity_id")
        cue = validation.cue(values.get("cue") or "")
        return cls(
            entity_id=entity,
            cue=cue,
            top_k=_int("top_k", values.get("top_k", config.DEFAULT_TOP_K), 1, config.MAX_TOP_K),
            scoring_weights=_weights(values.get("scoring_weights")),
        )


@dataclass(frozen=True, slots=True)
class RescoreRequest:
    """Re-rank results already retrieved under new weights: no retrieval, no access counted."""

    OP: ClassVar[str] = "rescore"
    results: tuple[RecallResult, ...] = wire(
        list[dict[str, Any]], "Results of an earlier recall, as it returned them."
    )
    scoring_weights: ScoringWeights = wire(WEIGHTS_SHAPE, default=DEFAULT_WEIGHTS)
    top_k: int | None = wire(int | None, default=None)

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, ("results", "scoring_weights", "top_k"))
        results = values.get("results")
        if not isinstance(results, Sequence) or isinstance(results, str):
            raise ValidationError(f"results must be a list of recall results, got {type(results).__name__}")
        parsed = tuple(r if isinstance(r, RecallResult) else _result(r) for r in results)
        top_k = values.get("top_k")
        return cls(
            parsed,
            _weights(values.get("scoring_weights")),
            None if top_k is None else _int("top_k", top_k, 1, config.MAX_TOP_K),
        )


def _result(raw: object) -> RecallResult:
    if not isinstance(raw, Mapping):
        raise ValidationError(f"a recall result is an object, got {type(raw).__name__}")
    try:
        return RecallResult.from_dict(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValidationError(f"not a recall result: {exc}") from None


Request = (
    RememberRequest
    | RememberManyRequest
    | ReviseRequest
    | ForgetRequest
    | AddEdgesRequest
    | IngestRequest
    | GetRequest
    | ListRequest
    | StatsRequest
    | NeighbourhoodRequest
    | RecallRequest
    | PrimeRequest
    | RescoreRequest
    | SetPolicyRequest
    | GetPolicyRequest
    | SweepRequest
    | ReflectRequest
    | ReflectPrepareRequest
    | ReflectCommitRequest
    | InsightsRequest
    | ContradictionPrepareRequest
    | ContradictionCommitRequest
)

REQUESTS: dict[str, type[Any]] = {
    cls.OP: cls
    for cls in (
        RememberRequest,
        RememberManyRequest,
        ReviseRequest,
        ForgetRequest,
        AddEdgesRequest,
        IngestRequest,
        GetRequest,
        ListRequest,
        StatsRequest,
        NeighbourhoodRequest,
        RecallRequest,
        PrimeRequest,
        RescoreRequest,
        SetPolicyRequest,
        GetPolicyRequest,
        SweepRequest,
        *REVIEW_REQUESTS,
    )
}


def parse_request(op: str, raw: Mapping[str, Any]) -> Request:
    """The request of an operation by name (`recall`, `remember`, ...), parsed: what transports call."""
    try:
        cls = REQUESTS[op]
    except KeyError:
        raise ValidationError(f"unknown operation {op!r}; expected one of {', '.join(REQUESTS)}") from None
    request: Request = cls.parse(raw)
    return request


def build_request(cue: str | None = "", **params: Any) -> RecallRequest:
    """`RecallRequest.parse` with the cue first: the short form notebooks use."""
    return RecallRequest.parse({"cue": cue, **params})
