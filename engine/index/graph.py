"""The typed, weighted edge graph (networkx MultiDiGraph keyed by edge type), rebuilt from the store."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Collection, Iterable
from dataclasses import dataclass

import networkx as nx

from engine.models import Edge, EdgeType


@dataclass(frozen=True, slots=True)
class Reached:
    """A memory reached by a walk: how deep, along which path, over which edge (and which way)."""

    id: str
    depth: int
    path: tuple[str, ...]
    edge_type: EdgeType | None
    direction: str | None  # "out": followed source -> target; "in": walked an edge backwards
    confidence: float


class GraphIndex:
    def __init__(self, edges: Iterable[Edge] = ()) -> None:
        self._lock = threading.RLock()
        self.graph = nx.MultiDiGraph()
        for e in edges:
            self.add(e)

    def add(self, edge: Edge) -> None:
        with self._lock:
            self.graph.add_edge(edge.source, edge.target, key=edge.type, confidence=edge.confidence, **edge.attrs)

    def remove_nodes(self, ids: Iterable[str]) -> None:
        with self._lock:
            self.graph.remove_nodes_from(list(ids))

    def edge_count(self) -> int:
        return int(self.graph.number_of_edges())

    def walk(self, seed: str, max_depth: int, edge_types: Collection[EdgeType] | None = None) -> list[Reached]:
        """Breadth-first over edges in both directions, each memory at its shortest depth from the seed."""
        with self._lock:
            reached = [Reached(seed, 0, (seed,), None, None, 1.0)]
            if seed not in self.graph:
                return reached
            seen = {seed}
            queue = deque(reached)
            while queue:
                node = queue.popleft()
                if node.depth >= max_depth:
                    continue
                steps = [(t, k, d, "out") for _, t, k, d in self.graph.out_edges(node.id, keys=True, data=True)] + [
                    (s, k, d, "in") for s, _, k, d in self.graph.in_edges(node.id, keys=True, data=True)
                ]
                for other, key, data, direction in sorted(steps, key=lambda s: (s[0], s[1])):
                    if other in seen or (edge_types is not None and key not in edge_types):
                        continue
                    seen.add(other)
                    nxt = Reached(
                        other,
                        node.depth + 1,
                        (*node.path, other),
                        EdgeType(key),
                        direction,
                        node.confidence * float(data.get("confidence", 1.0)),
                    )
                    reached.append(nxt)
                    queue.append(nxt)
            return reached
