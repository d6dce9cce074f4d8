"""The neighbourhood query: the memories within a depth of a seed over stored edges, and the edges among them.

The one walk the REST route, the CLI and the workbench's causal-graph view all read (a causal recall walks
the same graph index but ranks what it reaches; this returns the subgraph, nearest first).
"""

from __future__ import annotations

from engine.api.requests import NeighbourhoodRequest
from engine.api.responses import NeighbourhoodResponse, NeighbourNode
from engine.errors import MemoryNotFoundError
from engine.index.derived import DerivedIndexes
from engine.index.edge_graph import Reached
from engine.store.interface import Storage


def neighbourhood(store: Storage, indexes: DerivedIndexes, request: NeighbourhoodRequest) -> NeighbourhoodResponse:
    """Breadth-first from the seed (revisions are walked through but not returned), whole levels until
    `max_nodes`; `truncated` when that cut the walk."""
    if not store.existing([request.memory_id]):
        raise MemoryNotFoundError(f"no memory with id {request.memory_id}")
    revisions = indexes.revision_ids()
    reached: list[Reached] = []
    truncated = False
    for level in indexes.graph.levels(request.memory_id, request.depth, request.edge_types):
        level = [r for r in level if r.id not in revisions or r.depth == 0]
        room = request.max_nodes - len(reached)
        if len(level) > room:
            level, truncated = level[:room], True
        reached.extend(level)
        if truncated:
            break
    memories = store.get_many([r.id for r in reached])
    nodes = tuple(
        NeighbourNode(memories[r.id], r.depth, r.path, None if r.edge_type is None else r.edge_type.value,
                      r.direction)
        for r in reached
        if r.id in memories
    )
    allowed = request.edge_types
    edges = tuple(
        e for e in store.edges_among([n.memory.id for n in nodes]) if allowed is None or e.type in allowed
    )
    return NeighbourhoodResponse(request.memory_id, nodes, edges, truncated)
