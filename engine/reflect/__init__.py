"""Reflection: group memories into topics and state, extractively, what each topic holds (no remote model)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from engine.reflect.clusters import MIN_CLUSTER_SIZE, Cluster, cluster
from engine.reflect.insights import InsightDraft, Source, draft

__all__ = ["MIN_CLUSTER_SIZE", "Cluster", "InsightDraft", "Source", "cluster", "draft", "reflect_drafts"]


def reflect_drafts(sources: Sequence[Source], embeddings: NDArray[np.float32]) -> list[InsightDraft]:
    """One insight draft per cluster of at least MIN_CLUSTER_SIZE memories, largest cluster first."""
    clusters, _ = cluster(embeddings)
    return [draft(c, sources, np.asarray(embeddings, dtype=np.float32)) for c in clusters]
