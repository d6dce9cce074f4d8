"""Request bodies as the OpenAPI schema shows them (field names as in GUIDE section 3).

The fields are documented with their JSON types but validated by nobody here: each is passed to the
engine exactly as the client sent it (`Raw[...]`), so the engine's `parse` is the one validation and a
REST client gets the same error as the CLI and the Python API. Pydantic's lax coercion would otherwise
turn `"importance": true` into 1.0, `"0.5"` into 0.5 and `"top_k": true` into 1. Unknown fields are
passed on and refused there too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, WithJsonSchema

from engine import config

TIME_RANGE_HELP = "START:END dates or START..END date-times (either end may be empty), or [start, end]."


if TYPE_CHECKING:
    from typing import Union as Raw  # noqa: UP007 (for a type checker `Raw[T]` is T)
else:

    class Raw:
        """`Raw[T]`: documented as the JSON schema of T, accepted as any JSON value and passed on unchanged."""

        def __class_getitem__(cls, shown: Any) -> Any:
            return Annotated[Any, WithJsonSchema(TypeAdapter(shown).json_schema())]


_WEIGHTS_SCHEMA = {
    "anyOf": [
        {"type": "object", "description": "The four weights of the composite score; any left out keep their "
         "default.", "properties": {name: {"type": "number", "example": value}
                                    for name, value in config.DEFAULT_WEIGHTS.items()}},
        {"type": "string", "description": "R:T:I:F"},
        {"type": "null"},
    ]
}
_EDGE_SCHEMA = {
    "type": "object",
    "properties": {
        "target": {"type": "string"},
        "type": {"type": "string", "description": "caused_by, followed_by, related_to, entity_relation, "
                 "proposition_of, ..."},
        "confidence": {"type": "number"},
    },
    "required": ["target", "type"],
}
_EDGES_SCHEMA = {"type": "array", "items": {"anyOf": [_EDGE_SCHEMA, {"type": "string"}]}}
TimeRangeField = Raw[str | list[str | None] | None]
WeightsField = Annotated[Any, WithJsonSchema(_WEIGHTS_SCHEMA)]
EdgesField = Annotated[Any, WithJsonSchema(_EDGES_SCHEMA)]


class Body(BaseModel):
    model_config = ConfigDict(extra="allow")

    def fields(self) -> dict[str, Any]:
        """What the client sent (defaults left to the engine), unknown fields included."""
        return self.model_dump(exclude_unset=True)


class MemoryBody(Body):
    """One memory to remember, or `items` (a list of them) to remember a batch atomically."""

    content: Raw[str | None] = Field(None, description=f"Non-empty text, at most {config.MAX_CONTENT_BYTES} bytes.")
    importance: Raw[float | None] = Field(None, description="0.0-1.0 (default 0.5).")
    context: Raw[dict[str, Any] | str | None] = Field(None, description="A JSON object (or its text).")
    entity_id: Raw[str | None] = None
    kind: Raw[str | None] = Field(None, description="episode, document, proposition, insight.")
    created_at: Raw[str | None] = Field(None, description="ISO 8601, for importing history.")
    edges: EdgesField = Field(None, description="Edges from the new memory: TARGET:TYPE[:CONF].")
    items: Raw[list[dict[str, Any]] | None] = Field(None, description="A batch of memories (instead of one).")


class ReviseBody(Body):
    content: Raw[str | None] = None
    importance: Raw[float | None] = None
    context: Raw[dict[str, Any] | str | None] = None
    entity_id: Raw[str | None] = None


class ForgetBody(Body):
    memory_ids: Raw[list[str] | None] = None
    ids: Raw[list[str] | None] = Field(None, description="The official SDK's name for memory_ids.")
    entity_id: Raw[str | None] = Field(None, description="Forget every memory of this entity.")


class EdgesBody(Body):
    edges: EdgesField


class RecallBody(Body):
    cue: Raw[str | None] = Field(None, examples=["Acme meeting"])
    strategies: Raw[list[str] | str | None] = Field(
        None, description="similarity, temporal, causal, analogical, lexical; several are fused. None: the "
        "default preset (recommended)."
    )
    preset: Raw[str | None] = Field(None, description="A named recipe (recommended, similarity, lexical).")
    fusion: Raw[dict[str, Any] | None] = Field(
        None,
        description="Overrides of the fusion settings: weights, neighbour_weight, episode_weight, episode_decay, "
        "exact_search.",
    )
    strategy: Raw[str | None] = Field(None, description="One strategy (the official REST client's field).")
    top_k: Raw[int | None] = Field(None, examples=[config.DEFAULT_TOP_K])
    scoring_weights: WeightsField = Field(None, description="An object of weights, or R:T:I:F.")
    entity_id: Raw[str | None] = Field(None, description="Temporal: whose timeline.")
    time_range: TimeRangeField = Field(None, description=TIME_RANGE_HELP)
    ef_search: Raw[int | None] = Field(None, description="Similarity: HNSW search breadth.")
    seed_memory_id: Raw[str | None] = Field(None, description="Causal: the memory to walk from.")
    max_depth: Raw[int | None] = Field(None, description=f"Causal: at most {config.MAX_DEPTH_CAP}.")
    edge_types: Raw[list[str] | str | None] = Field(None, description="Causal: edge types to follow.")
    analogical_alpha: Raw[float | None] = Field(None, description="Analogical: 0 = structure only, 1 = embedding only.")


class PrimeBody(Body):
    entity_id: Raw[str | None] = None
    cue: Raw[str | None] = None
    similarity_cue: Raw[str | None] = Field(None, description="The official SDK's name for cue.")
    top_k: Raw[int | None] = None
    max_memories: Raw[int | None] = Field(None, description="The official SDK's name for top_k.")
    scoring_weights: WeightsField = None


class RescoreBody(Body):
    results: Raw[list[dict[str, Any]]] = Field(description="Results of an earlier recall, as it returned them.")
    scoring_weights: WeightsField = None
    top_k: Raw[int | None] = None


class IndexBody(Body):
    paths: Raw[list[str] | str] = Field(description="Files or folders on the server's file system.")
    extractor: Raw[str | None] = Field(None, description="offline (default) or llm.")
    file_seconds: Raw[float | None] = Field(None, description="Skip a file whose analysis takes longer (0: no limit).")
