"""Transport-free responses: what each operation returns, with `to_dict()` / `from_dict()`.

`to_dict()` is the JSON every interface prints or sends (field names, envelopes and ISO 8601 UTC times
are the CLI's contract), and `from_dict()` reads it back, so a client of any transport gets the same
objects the Python API returns. Single memories travel as `Memory.to_dict()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from engine.models import Edge, Memory, RecallResult
from engine.policy import Policy


@dataclass(frozen=True, slots=True)
class RecallResponse:
    results: tuple[RecallResult, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"results": [r.to_dict() for r in self.results]}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        return cls(tuple(RecallResult.from_dict(r) for r in raw["results"]))


@dataclass(frozen=True, slots=True)
class MemoriesResponse:
    """Memories written by a batch remember."""

    memories: tuple[Memory, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"memories": [m.to_dict() for m in self.memories]}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        return cls(tuple(Memory.from_dict(m) for m in raw["memories"]))


@dataclass(frozen=True, slots=True)
class ListResponse:
    """One page of a filtered listing; `total` counts every match, not just this page."""

    memories: tuple[Memory, ...]
    total: int
    limit: int
    offset: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "memories": [m.to_dict() for m in self.memories],
            "total": self.total,
            "limit": self.limit,
            "offset": self.offset,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        return cls(tuple(Memory.from_dict(m) for m in raw["memories"]), raw["total"], raw["limit"], raw["offset"])


@dataclass(frozen=True, slots=True)
class ForgetResponse:
    """Every memory forgotten (the named ones, their revisions, and what was derived from a forgotten
    document: its propositions); `cascade_count` counts the derived ones. With `dry_run`, what would have been
    forgotten, and nothing was. `tombstone_count`: tombstones left (forgets by criteria and sweeps)."""

    forgotten: tuple[str, ...]
    cascade_count: int = 0
    dry_run: bool = False
    tombstone_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"forgotten": list(self.forgotten), "cascade_count": self.cascade_count, "dry_run": self.dry_run,
                "tombstone_count": self.tombstone_count}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        return cls(tuple(raw["forgotten"]), int(raw.get("cascade_count", 0)), bool(raw.get("dry_run", False)),
                   int(raw.get("tombstone_count", 0)))


@dataclass(frozen=True, slots=True)
class PolicyResponse:
    """A tenant's policy (engine/policy.py) after a set_policy, or as read."""

    tenant_id: str
    policy: Policy

    def to_dict(self) -> dict[str, Any]:
        return {"tenant_id": self.tenant_id, "applied": True, **self.policy.to_dict()}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        return cls(raw["tenant_id"], Policy.from_dict(dict(raw)))


@dataclass(frozen=True, slots=True)
class EdgesResponse:
    edges: tuple[Edge, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"edges": [e.to_dict() for e in self.edges]}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        return cls(tuple(Edge.from_dict(e) for e in raw["edges"]))


@dataclass(frozen=True, slots=True)
class StatsResponse:
    """Counts from each store; `vector_index` is read from the vector index itself so a mismatch shows (None
    when the request left it out)."""

    memories: int
    vector_index: int | None
    edges: int
    entities: int
    structures_pending: int = 0  # memories whose relational structure is still to be extracted

    def to_dict(self) -> dict[str, int | None]:
        return {"memories": self.memories, "vector_index": self.vector_index, "edges": self.edges,
                "entities": self.entities, "structures_pending": self.structures_pending}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        return cls(raw["memories"], raw.get("vector_index"), raw["edges"], raw["entities"],
                   int(raw.get("structures_pending", 0)))


@dataclass(frozen=True, slots=True)
class NeighbourNode:
    """A memory reached from the seed: how deep, along which path of ids, over which edge and which way
    ("out": followed source -> target; "in": walked an edge backwards, e.g. from an effect to its cause)."""

    memory: Memory
    depth: int
    path: tuple[str, ...]
    edge_type: str | None
    direction: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"memory": self.memory.to_dict(), "depth": self.depth, "path": list(self.path),
                "edge_type": self.edge_type, "direction": self.direction}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        return cls(Memory.from_dict(raw["memory"]), int(raw["depth"]), tuple(raw["path"]), raw["edge_type"],
                   raw["direction"])


@dataclass(frozen=True, slots=True)
class NeighbourhoodResponse:
    """The memories within `depth` edges of a seed (nearest first) and the stored edges among them;
    `truncated` when `max_nodes` cut the walk."""

    seed: str
    nodes: tuple[NeighbourNode, ...]
    edges: tuple[Edge, ...]
    truncated: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [e.to_dict() for e in self.edges],
            "truncated": self.truncated,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        return cls(raw["seed"], tuple(NeighbourNode.from_dict(n) for n in raw["nodes"]),
                   tuple(Edge.from_dict(e) for e in raw["edges"]), bool(raw["truncated"]))
