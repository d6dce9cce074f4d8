"""The typed, weighted edge graph as adjacency dicts in both directions, rebuilt from the store."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass

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
    """Adjacency in both directions, keyed (other end, edge type), built in one pass on open.

    Plain dicts, not a networkx graph: building a MultiDiGraph cost seconds per 100,000 edges on every
    open, and the bounded walk needs only adjacency. Notebooks that want networkx build one from
    `MemoryEngine.edges_of` or a neighbourhood.
    """

    def __init__(self, edges: Iterable[Edge] = ()) -> None:
        self._lock = threading.RLock()
        self._out: defaultdict[str, dict[tuple[str, EdgeType], Edge]] = defaultdict(dict)
        self._in: defaultdict[str, dict[tuple[str, EdgeType], Edge]] = defaultdict(dict)
        out, inn = self._out, self._in
        for e in edges:
            out[e.source][(e.target, e.type)] = e
            inn[e.target][(e.source, e.type)] = e

    def add(self, edge: Edge) -> None:
        with self._lock:
            self._out[edge.source][(edge.target, edge.type)] = edge
            self._in[edge.target][(edge.source, edge.type)] = edge

    def remove_nodes(self, ids: Iterable[str]) -> None:
        with self._lock:
            doomed = list(ids)
            for node in doomed:
                for target, type_ in self._out.pop(node, {}):
                    self._in.get(target, {}).pop((node, type_), None)
                for source, type_ in self._in.pop(node, {}):
                    self._out.get(source, {}).pop((node, type_), None)

    def __contains__(self, node: object) -> bool:
        """Does any edge touch this memory?"""
        if not isinstance(node, str):
            return False
        with self._lock:
            return bool(self._out.get(node)) or bool(self._in.get(node))

    def levels(
        self, seed: str, max_depth: int, edge_types: Collection[EdgeType] | None = None
    ) -> Iterator[list[Reached]]:
        """Breadth-first over edges in both directions, each memory at its shortest depth from the seed, one
        depth level at a time (depth 0 is the seed).

        A caller that needs only the nearest levels stops early, so a depth-5 walk through a dense graph
        costs what the levels it reads cost. Each level is computed under the lock.
        """
        level = [Reached(seed, 0, (seed,), None, None, 1.0)]
        yield level
        with self._lock:
            if seed not in self._out and seed not in self._in:
                return
        seen = {seed}
        empty: dict[tuple[str, EdgeType], Edge] = {}
        for _ in range(max_depth):
            with self._lock:
                nxt_level = []
                for node in level:
                    steps = [(t, k, e, "out") for (t, k), e in self._out.get(node.id, empty).items()] + [
                        (s, k, e, "in") for (s, k), e in self._in.get(node.id, empty).items()
                    ]
                    for other, key, edge, direction in sorted(steps, key=lambda s: (s[0], s[1])):
                        if other in seen or (edge_types is not None and key not in edge_types):
                            continue
                        seen.add(other)
                        nxt_level.append(
                            Reached(
                                other,
                                node.depth + 1,
                                (*node.path, other),
                                EdgeType(key),
                                direction,
                                node.confidence * float(edge.confidence),
                            )
                        )
            if not nxt_level:
                return
            yield nxt_level
            level = nxt_level
