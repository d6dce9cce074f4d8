"""What the Insights page and the recall lab show of reflection and contradiction review (no Streamlit here)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import pandas as pd

from engine import MemoryEngine, RecallResult
from engine.api import parse_request
from engine.api.reviews import Insight
from engine.models import EdgeType
from workbench.views import snippet, when

SOURCE_COLUMNS = ["content", "created", "entity", "kind", "id"]


def run(engine: MemoryEngine, op: str, **fields: Any) -> Any:
    """One review operation by name (engine/api/reviews.py), through the engine's requests."""
    return engine.handle(parse_request(op, {k: v for k, v in fields.items() if v is not None}))


def sources_frame(engine: MemoryEngine, insight: Insight) -> pd.DataFrame:
    """The memories an insight cites, oldest first (a forgotten source is simply no longer listed)."""
    found = sorted(engine.get_many(list(insight.source_ids)).values(), key=lambda m: (m.created_at, m.id))
    return pd.DataFrame([{"content": snippet(m.content, 300), "created": when(m.created_at),
                          "entity": m.entity_id or "", "kind": m.kind.value, "id": m.id} for m in found],
                        columns=SOURCE_COLUMNS)


def contradiction_marks(engine: MemoryEngine, results: Sequence[RecallResult]) -> dict[str, list[int]]:
    """For each shown result that contradicts another shown result (a confirmed `contradicts` edge), the
    ranks of the other side(s) in `results`."""
    rank_of = {r.memory.id: n for n, r in enumerate(results, start=1)}
    marks: dict[str, set[int]] = defaultdict(set)
    for r in results:
        for edge in engine.edges_of(r.memory.id):
            if edge.type == EdgeType.CONTRADICTS and edge.source == r.memory.id and edge.target in rank_of:
                marks[r.memory.id].add(rank_of[edge.target])
    return {memory_id: sorted(ranks) for memory_id, ranks in marks.items()}


def contradiction_column(results: Sequence[RecallResult], marks: dict[str, list[int]]) -> list[str]:
    return [("⚠ contradicts #" + ", #".join(map(str, marks[r.memory.id]))) if r.memory.id in marks else ""
            for r in results]
