"""Request bodies as the OpenAPI schema shows them (field names as in GUIDE section 3).

The types are deliberately as wide as what `engine.api` accepts (weights as an object or `R:T:I:F`,
a time range as text or a pair): the engine's `parse` is the one validation, so a REST client gets the
same error message as the CLI and the Python API. Unknown fields are passed on and refused there.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from engine import config

TimeRangeField = str | list[str | None] | None
TIME_RANGE_HELP = "START:END dates or START..END date-times (either end may be empty), or [start, end]."


class Body(BaseModel):
    model_config = ConfigDict(extra="allow")

    def fields(self) -> dict[str, Any]:
        """What the client sent (defaults left to the engine), unknown fields included."""
        return self.model_dump(exclude_unset=True)


class Weights(Body):
    """The four weights of the composite score; any left out keep their default."""

    w_relevance: float | None = Field(None, examples=[config.DEFAULT_WEIGHTS["w_relevance"]])
    w_recency: float | None = Field(None, examples=[config.DEFAULT_WEIGHTS["w_recency"]])
    w_importance: float | None = Field(None, examples=[config.DEFAULT_WEIGHTS["w_importance"]])
    w_reinforcement: float | None = Field(None, examples=[config.DEFAULT_WEIGHTS["w_reinforcement"]])


class EdgeBody(Body):
    target: str
    type: str = Field(description="caused_by, followed_by, related_to, entity_relation, proposition_of, ...")
    confidence: float | None = None


class MemoryBody(Body):
    """One memory to remember, or `items` (a list of them) to remember a batch atomically."""

    content: str | None = Field(None, description=f"Non-empty text, at most {config.MAX_CONTENT_BYTES} bytes.")
    importance: float | None = Field(None, description="0.0-1.0 (default 0.5).")
    context: dict[str, Any] | str | None = Field(None, description="A JSON object (or its text).")
    entity_id: str | None = None
    kind: str | None = Field(None, description="episode, document, proposition, insight.")
    created_at: str | None = Field(None, description="ISO 8601, for importing history.")
    edges: list[EdgeBody | str] | None = Field(None, description="Edges from the new memory: TARGET:TYPE[:CONF].")
    items: list[dict[str, Any]] | None = Field(None, description="A batch of memories (instead of one).")


class ReviseBody(Body):
    content: str | None = None
    importance: float | None = None
    context: dict[str, Any] | str | None = None
    entity_id: str | None = None


class ForgetBody(Body):
    memory_ids: list[str] | None = None
    ids: list[str] | None = Field(None, description="The official SDK's name for memory_ids.")
    entity_id: str | None = Field(None, description="Forget every memory of this entity.")


class EdgesBody(Body):
    edges: list[EdgeBody | str]


class RecallBody(Body):
    cue: str | None = Field(None, examples=["Acme meeting"])
    strategies: list[str] | str | None = Field(
        None, description="similarity (default), temporal, causal, analogical, lexical; several are fused."
    )
    preset: str | None = Field(None, description="A named recipe (recommended, similarity, lexical).")
    fusion: dict[str, Any] | None = Field(
        None,
        description="Overrides of the fusion settings: weights, neighbour_weight, episode_weight, episode_decay, "
        "exact_search.",
    )
    strategy: str | None = Field(None, description="One strategy (the official REST client's field).")
    top_k: int | None = Field(None, examples=[config.DEFAULT_TOP_K])
    scoring_weights: Weights | str | None = Field(None, description="An object of weights, or R:T:I:F.")
    entity_id: str | None = Field(None, description="Temporal: whose timeline.")
    time_range: TimeRangeField = Field(None, description=TIME_RANGE_HELP)
    ef_search: int | None = Field(None, description="Similarity: HNSW search breadth.")
    seed_memory_id: str | None = Field(None, description="Causal: the memory to walk from.")
    max_depth: int | None = Field(None, description=f"Causal: at most {config.MAX_DEPTH_CAP}.")
    edge_types: list[str] | str | None = Field(None, description="Causal: edge types to follow.")
    analogical_alpha: float | None = Field(None, description="Analogical: 0 = structure only, 1 = embedding only.")


class PrimeBody(Body):
    entity_id: str | None = None
    cue: str | None = None
    similarity_cue: str | None = Field(None, description="The official SDK's name for cue.")
    top_k: int | None = None
    max_memories: int | None = Field(None, description="The official SDK's name for top_k.")
    scoring_weights: Weights | str | None = None


class RescoreBody(Body):
    results: list[dict[str, Any]] = Field(description="Results of an earlier recall, as it returned them.")
    scoring_weights: Weights | str | None = None
    top_k: int | None = None


class IndexBody(Body):
    paths: list[str] | str = Field(description="Files or folders on the server's file system.")
    extractor: str | None = Field(None, description="offline (default) or llm.")
    file_seconds: float | None = Field(None, description="Skip a file whose analysis takes longer (0: no limit).")
