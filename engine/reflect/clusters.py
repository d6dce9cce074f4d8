"""Topics in a set of memories: k-means on their embeddings, k chosen by the silhouette.

The rule, stated once: the embeddings are unit vectors, so k-means on them is k-means on cosine distance;
k runs from 2 to min(MAX_CLUSTERS, n // MIN_CLUSTER_SIZE) and the k with the highest mean silhouette wins
(computed on at most SILHOUETTE_SAMPLE points). If no k reaches MIN_SILHOUETTE the memories hold no
separable topics and form one group. Groups smaller than MIN_CLUSTER_SIZE yield no insight.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

MIN_CLUSTER_SIZE = 3
MAX_CLUSTERS = 20
MIN_SILHOUETTE = 0.05
SILHOUETTE_SAMPLE = 2_000
SEED = 7  # the clustering is deterministic: the same memories give the same groups


@dataclass(frozen=True)
class Cluster:
    """One topic: the positions of its members in the input, their centroid and how tightly they sit."""

    members: tuple[int, ...]
    centroid: NDArray[np.float32]
    cohesion: float  # mean cosine of the members to their centroid's direction, in [-1, 1]


def cluster(embeddings: NDArray[np.float32]) -> tuple[list[Cluster], int]:
    """The clusters of at least MIN_CLUSTER_SIZE members, largest first, and the k that was chosen."""
    n = len(embeddings)
    if n < MIN_CLUSTER_SIZE:
        return [], 0
    vectors = unit(np.asarray(embeddings, dtype=np.float32))
    labels, k = _best_labels(vectors)
    out: list[Cluster] = []
    for label in range(k):
        members = np.flatnonzero(labels == label)
        if len(members) < MIN_CLUSTER_SIZE:
            continue
        centroid = vectors[members].mean(axis=0)
        direction = unit(centroid[None, :])[0]
        cohesion = float(np.mean(vectors[members] @ direction))
        out.append(Cluster(tuple(int(i) for i in members), centroid.astype(np.float32), cohesion))
    out.sort(key=lambda c: (-len(c.members), c.members[0]))
    return out, k


def _best_labels(vectors: NDArray[np.float32]) -> tuple[NDArray[np.int_], int]:
    from threadpoolctl import threadpool_limits

    # One thread: on a few thousand points k-means' OpenMP threads spend their time waiting for each other
    # (878 memories, k 2..20: 6.4 s with the default threads, 0.85 s with one, on 2 cores), and far more on a
    # busy machine.
    with threadpool_limits(limits=1):
        return _search_k(vectors)


def _search_k(vectors: NDArray[np.float32]) -> tuple[NDArray[np.int_], int]:
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    n = len(vectors)
    distinct = len(np.unique(vectors.round(6), axis=0))
    best: tuple[float, NDArray[np.int_], int] | None = None
    for k in range(2, min(MAX_CLUSTERS, n // MIN_CLUSTER_SIZE, distinct) + 1):
        labels = KMeans(n_clusters=k, n_init=4, random_state=SEED).fit_predict(vectors)
        if len(set(labels.tolist())) < 2:
            continue
        score = float(silhouette_score(vectors, labels, metric="cosine",
                                       sample_size=min(n, SILHOUETTE_SAMPLE), random_state=SEED))
        if best is None or score > best[0]:
            best = (score, labels, k)
    if best is None or best[0] < MIN_SILHOUETTE:
        return np.zeros(n, dtype=np.int_), 1
    return best[1], best[2]


def unit(x: NDArray[np.float32]) -> NDArray[np.float32]:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms == 0, 1.0, norms)).astype(np.float32)
