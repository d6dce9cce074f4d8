"""Importance of indexed propositions, from the corpus itself: what it restates and what it dates.

An event that several documents report (same entity, same day, similar wording) matters more than a
passing detail, and a statement that carries its own date is an event rather than background. So each
group of restatements (from different documents) gets one canonical proposition (the explicitly dated
one first, then the first indexed) whose importance grows with the number of documents that report it;
the other restatements are demoted so a timeline shows the event once. Recomputed over every ingested
proposition after each run.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from engine.writer import Writer

_DAY_US = 24 * 3600 * 1_000_000
SAME_EVENT_SIMILARITY = 0.65  # cosine between statements of one entity on one day
BASE = 0.5
DATED_BONUS = 0.1
PER_EXTRA_DOCUMENT = 0.1
CEILING = 0.9
RESTATEMENT = 0.4


@dataclass(frozen=True, slots=True)
class _Statement:
    id: str
    source: str
    dated: bool
    vector: np.ndarray


def compute(statements_by_day: dict[tuple[str, int], list[_Statement]]) -> dict[str, float]:
    """Importance per proposition id (pure: the grouping in, the numbers out)."""
    importance: dict[str, float] = {}
    for statements in statements_by_day.values():
        clusters: list[list[_Statement]] = []
        for s in sorted(statements, key=lambda s: (not s.dated, s.id)):
            home = next((c for c in clusters if _restates(s, c)), None)
            if home is None:
                clusters.append([s])
            else:
                home.append(s)
        for head, *rest in clusters:
            documents = len({s.source for s in (head, *rest)})
            score = BASE + PER_EXTRA_DOCUMENT * (documents - 1) + (DATED_BONUS if head.dated else 0.0)
            importance[head.id] = round(min(CEILING, score), 4)
            for s in rest:
                importance[s.id] = RESTATEMENT
    return importance


def _restates(s: _Statement, cluster: list[_Statement]) -> bool:
    """Another document's statement of the cluster's event (a document does not restate itself)."""
    return all(m.source != s.source for m in cluster) and float(np.dot(cluster[0].vector, s.vector)) >= (
        SAME_EVENT_SIMILARITY
    )


def update(writer: Writer) -> int:
    """Recompute and store the importance of every ingested proposition; returns how many changed."""
    groups: dict[tuple[str, int], list[_Statement]] = defaultdict(list)
    current: dict[str, float] = {}
    for memory_id, entity_id, created_at, ctx, vector, importance in writer.store.ingested_propositions():
        if "source" not in ctx:
            continue  # remembered by hand: its importance is the user's
        current[memory_id] = importance
        statement = _Statement(memory_id, ctx["source"], ctx.get("time_source") == "text", vector)
        groups[(entity_id, created_at // _DAY_US)].append(statement)
    changed = [(i, value) for i, value in compute(groups).items() if current.get(i) != value]
    if changed:
        writer.set_importances(changed)
    return len(changed)
