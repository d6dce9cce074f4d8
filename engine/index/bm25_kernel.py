"""Exact BM25 top-k over a segment's posting lists, compiled (numba): the large store's lexical search.

Scoring every posting with numpy costs a pass per step (the term frequencies as floats, the contribution, a
scatter into a score array as wide as the store, then finding the non-zero scores and partitioning them):
on a million memories a cue's terms hold about 600,000 postings and the search cost 10-13 ms. Bounding the
work with champion lists (the approach this replaced) was exact only when it could certify it (79% of the
searches at 1M) and still read tens of thousands of postings. One compiled loop does the same arithmetic
in one pass and selects the best `limit` rows in a second, a few nanoseconds a posting, without the GIL.

The arithmetic is the numpy path's, operation for operation (`engine/index/postings.py`
`_score_every_posting`: idf x tf x (k1 + 1) / (tf + norm), added term by term in the same order, no fused
multiply-add), so the scores are the same floats and the ranked lists equal (tests/engine/test_bm25_kernel.py).
numba compiles the kernel on first use and caches the machine code on disk (`cache=True`), so only a store's
first large search after an install pays the compilation; stores whose searches stay under
`config.LEXICAL_COMPILED_MIN_POSTINGS` postings never import this module, nor numba (a cold `hebbs recall`
stays fast).
"""

from __future__ import annotations

import numpy as np
from numba import njit


def best_rows(rows: np.ndarray, counts: np.ndarray, lengths: np.ndarray, starts: np.ndarray, ends: np.ndarray,
              weights: np.ndarray, k1: float, b: float, mean_length: float, stale: np.ndarray, rank: np.ndarray,
              limit: int, scratch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, scores) of the best `limit` rows holding any of the terms, by score descending then `rank`
    ascending (unordered in the answer): term n's postings are `rows[starts[n]:ends[n]]` with their `counts`,
    weighed `weights[n]` (its idf); rows marked in `stale` do not count (an empty `stale`: no row is stale, and
    none is looked up: a read per posting of a 1M-row array cost a tenth of the search). `lengths`: each row's
    length (read only when b != 0). `scratch`: float64 zeros, one per row; it is all zeros again when this
    returns."""
    if not len(starts) or limit <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    found: tuple[np.ndarray, np.ndarray] = _best_rows(
        np.asarray(rows), np.asarray(counts), np.asarray(lengths), starts, ends, weights, float(k1), float(b),
        float(mean_length), stale, rank, int(limit), scratch,
    )
    return found


@njit(cache=True, nogil=True)
def _before(score, rank, other_score, other_rank):
    """Whether (score, rank) ranks before the other: a higher score, or the same and a lower rank."""
    return score > other_score or (score == other_score and rank < other_rank)


@njit(cache=True, nogil=True)
def _best_rows(rows, counts, lengths, starts, ends, weights, k1, b, mean_length, stale, rank, limit, acc):
    check = len(stale) > 0
    for t in range(len(starts)):
        weight = weights[t]
        for p in range(starts[t], ends[t]):
            row = rows[p]
            if check and stale[row]:
                continue
            tf = np.float64(counts[p])
            norm = k1 if b == 0.0 else k1 * (1.0 - b + b * lengths[row] / mean_length)
            acc[row] += weight * tf * (k1 + 1.0) / (tf + norm)
    # The best `limit` in a heap whose root is the worst of them; each row's score is read once and cleared.
    # Once the heap is full, a row already taken (its score cleared to 0) or stale (never added to) is turned away
    # only after it beats the root, which with positive weights it never does: a test for 0 first mispredicted
    # for every row held by more than one term (on a 1M store's window table, 1.2 of the search's 3.8 ms).
    best = np.empty(limit, dtype=np.int64)
    scores = np.empty(limit, dtype=np.float64)
    size = 0
    for t in range(len(starts)):
        for p in range(starts[t], ends[t]):
            row = rows[p]
            score = acc[row]
            acc[row] = 0.0
            if size < limit:
                if score == 0.0:
                    continue  # stale, or taken from an earlier term's list
                at = size
                size += 1
                while at > 0:  # sift up past better parents
                    up = (at - 1) // 2
                    if not _before(scores[up], rank[best[up]], score, rank[row]):
                        break
                    best[at], scores[at] = best[up], scores[up]
                    at = up
                best[at], scores[at] = row, score
            # `_before` written out: its arguments would read both ranks (scattered reads) for every row, and
            # almost every row loses on the score alone
            elif (score > scores[0] or (score == scores[0] and rank[row] < rank[best[0]])) and score != 0.0:
                at = 0
                while True:  # sift down past worse children
                    child = 2 * at + 1
                    if child >= size:
                        break
                    if child + 1 < size and _before(scores[child], rank[best[child]], scores[child + 1],
                                                    rank[best[child + 1]]):
                        child += 1
                    if not _before(score, rank[row], scores[child], rank[best[child]]):
                        break
                    best[at], scores[at] = best[child], scores[child]
                    at = child
                best[at], scores[at] = row, score
    return best[:size], scores[:size]
