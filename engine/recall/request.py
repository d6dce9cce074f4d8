"""A recall request, validated as a whole before anything runs."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from engine import config, validation
from engine.errors import InvalidRecallError
from engine.models import EdgeType, Strategy
from engine.recall.scoring import DEFAULT_WEIGHTS, ScoringWeights

REQUEST_FIELDS = (
    "cue",
    "strategies",
    "top_k",
    "scoring_weights",
    "entity_id",
    "time_range",
    "ef_search",
    "seed_memory_id",
    "max_depth",
    "edge_types",
    "analogical_alpha",
)


@dataclass(frozen=True, slots=True)
class RecallRequest:
    cue: str = ""
    strategies: tuple[Strategy, ...] = (Strategy.SIMILARITY,)
    top_k: int = config.DEFAULT_TOP_K
    scoring_weights: ScoringWeights = DEFAULT_WEIGHTS
    entity_id: str | None = None
    time_range: tuple[datetime | None, datetime | None] | None = None
    ef_search: int = config.DEFAULT_EF_SEARCH
    seed_memory_id: str | None = None
    max_depth: int = config.DEFAULT_MAX_DEPTH
    edge_types: frozenset[EdgeType] | None = None
    analogical_alpha: float = config.DEFAULT_ANALOGICAL_ALPHA

    @property
    def needs_cue_embedding(self) -> bool:
        return (
            Strategy.SIMILARITY in self.strategies
            or Strategy.ANALOGICAL in self.strategies
            or (Strategy.CAUSAL in self.strategies and self.seed_memory_id is None)
        )


def _int(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise InvalidRecallError(f"{name} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise InvalidRecallError(f"{name} must be between {lo} and {hi}, got {value}")
    return value


def build_request(
    cue: str | None = "",
    *,
    strategies: Iterable[Strategy | str] | Strategy | str | None = None,
    top_k: int = config.DEFAULT_TOP_K,
    scoring_weights: ScoringWeights | Mapping[str, object] | str | None = None,
    entity_id: str | None = None,
    time_range: object = None,
    ef_search: int = config.DEFAULT_EF_SEARCH,
    seed_memory_id: str | None = None,
    max_depth: int = config.DEFAULT_MAX_DEPTH,
    edge_types: Iterable[EdgeType | str] | str | None = None,
    analogical_alpha: float = config.DEFAULT_ANALOGICAL_ALPHA,
) -> RecallRequest:
    """Validate loose inputs (from the CLI, HTTP or a notebook) into a RecallRequest."""
    if strategies is None:
        strategies = [Strategy.SIMILARITY]
    elif isinstance(strategies, str):
        strategies = [strategies]
    chosen = tuple(dict.fromkeys(validation.strategy(s) for s in strategies))
    if not chosen:
        raise InvalidRecallError("at least one strategy is required")
    if cue is None:
        cue = ""
    if not isinstance(cue, str):
        raise InvalidRecallError(f"cue must be text, got {type(cue).__name__}")

    if scoring_weights is None:
        weights = DEFAULT_WEIGHTS
    elif isinstance(scoring_weights, ScoringWeights):
        weights = scoring_weights
    elif isinstance(scoring_weights, str):
        weights = ScoringWeights.parse(scoring_weights)
    else:
        weights = ScoringWeights.from_mapping(scoring_weights)

    if isinstance(edge_types, str):
        edge_types = [t for t in edge_types.split(",") if t.strip()]
    types = (
        None
        if edge_types is None
        else frozenset(validation.edge_type(t.strip() if isinstance(t, str) else t) for t in edge_types)
    )
    if types is not None and not types:
        raise InvalidRecallError("edge_types must name at least one edge type")

    if (
        isinstance(analogical_alpha, bool)
        or not isinstance(analogical_alpha, int | float)
        or (math.isnan(analogical_alpha) or not 0.0 <= analogical_alpha <= 1.0)
    ):
        raise InvalidRecallError(f"analogical_alpha must be a number in [0, 1], got {analogical_alpha!r}")

    if isinstance(max_depth, int) and not isinstance(max_depth, bool) and max_depth < 1:
        raise InvalidRecallError(f"max_depth must be at least 1, got {max_depth}")

    request = RecallRequest(
        cue=cue,
        strategies=chosen,
        top_k=_int("top_k", top_k, 1, config.MAX_TOP_K),
        scoring_weights=weights,
        entity_id=validation.entity_id(entity_id),
        time_range=validation.time_range(time_range),
        ef_search=_int("ef_search", ef_search, 1, config.MAX_EF_SEARCH),
        seed_memory_id=seed_memory_id or None,
        max_depth=_int("max_depth", max_depth, 1, config.MAX_DEPTH_CAP),
        edge_types=types,
        analogical_alpha=float(analogical_alpha),
    )
    if Strategy.TEMPORAL in chosen and request.entity_id is None:
        raise InvalidRecallError("the temporal strategy needs an entity_id (whose timeline to read)")
    if request.needs_cue_embedding and not cue.strip():
        needs = [s.value for s in chosen if s != Strategy.TEMPORAL]
        raise InvalidRecallError(f"a non-empty cue is required for {', '.join(needs)} recall")
    return request
