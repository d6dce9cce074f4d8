"""Bounded BM25 top-k over champion lists: the work of a search does not grow with the store.

Scoring every posting of every cue term (`LexicalPostings.search`'s exact path) reads each term's whole list:
on a million memories a cue term in 10% of them is 100,000 postings, plus a score array as wide as the store.
With BM25's `b = 0` (the default, engine/config.py) a term's contribution to a row depends on its occurrences
alone, so each term's postings can be ranked once by impact: occurrences descending, then memory id ascending
(the ranking's own tie-break). A term's *champion list* is the first `r` of that order (the classic "champion
lists" of Manning, Raghavan & Schuetze, section 7.1.3). A search

1. takes as candidates the union of the cue terms' champion lists (a term in at most `r` rows gives them all)
   and every row changed since the segment (held in memory, few);
2. scores each candidate exactly (its occurrences of every term, found by binary search in the terms' full,
   row-sorted lists): the same floats, summed in the same order, as the exact path;
3. certifies the answer: a row in no champion list has, for every term it holds, at most the occurrences of
   that term's last champion (the *boundary*), and if just as many, a later id. So no such row scores above
   U, the sum of the boundaries' contributions, and one scoring exactly U has an id after every boundary's.
   When the `limit`-th candidate beats that (score above U, or equal to U with an id no later than the
   latest boundary's), the answer is exactly the exact path's.
4. Otherwise it widens every champion list fourfold and tries again, until the candidates would exceed
   `budget` postings; then it answers from the widest candidates it read, marked not exact.

Small stores never truncate a list (every list is shorter than `r`), so their answers are always exact;
the bound, and how often a large store's answers are exact, are measured in docs/scaling.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

EMPTY = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class TermList:
    """One cue term's postings in one table: the segment's (row-sorted, stale rows included), the rows changed
    since (row-sorted), the term's weight (idf), and its segment postings' impact order (computed on demand)."""

    rows: np.ndarray
    counts: np.ndarray
    held_rows: np.ndarray
    held_counts: np.ndarray
    weight: float
    impact_order: Callable[[], np.ndarray]  # positions into rows/counts, best impact first


@dataclass(frozen=True, slots=True)
class Candidates:
    """The scored candidates of a bounded search (row numbers ascending) and whether they are certified to
    hold the exact top `limit`."""

    rows: np.ndarray
    scores: np.ndarray
    exact: bool


def contribution(weight: float, counts: np.ndarray, k1: float) -> np.ndarray:
    """BM25 with b = 0: idf * tf * (k1 + 1) / (tf + k1), as the exact path computes it."""
    tf = counts.astype(np.float64)
    return weight * tf * (k1 + 1.0) / (tf + k1)


def bounded_search(lists: Sequence[TermList], limit: int, k1: float, rank: np.ndarray, stale: np.ndarray,
                   first: int, budget: int) -> Candidates:
    """The candidates of a search for `limit` rows over `lists` (in the exact path's term order). `rank`: each
    segment row's memory id rank (ids' byte order); `stale`: the segment rows changed since (their segment
    postings no longer count); `first`: champions per term in the first round; `budget`: most postings read."""
    width = first
    while True:
        truncated = [t for t in lists if len(t.rows) > width]
        parts = [t.held_rows for t in lists]
        bound, latest = 0.0, -1
        for t in lists:
            if len(t.rows) > width:
                order = t.impact_order()[:width]
                champions = t.rows[order]
                last = int(order[-1])
                bound += float(contribution(t.weight, t.counts[last : last + 1], k1)[0])
                latest = max(latest, int(rank[t.rows[last]]))
            else:
                champions = t.rows
            parts.append(champions[~stale[champions]] if len(stale) else champions)
        rows = np.unique(np.concatenate(parts).astype(np.int64, copy=False)) if parts else EMPTY
        scores = _scores(lists, rows, k1, stale)
        if not truncated or _certified(rows, scores, limit, bound, latest, rank, stale):
            return Candidates(rows, scores, True)
        wider = width * 4
        if sum(min(len(t.rows), wider) for t in lists) > budget:
            return Candidates(rows, scores, False)
        width = wider


def _scores(lists: Sequence[TermList], rows: np.ndarray, k1: float, stale: np.ndarray) -> np.ndarray:
    """Each candidate row's exact BM25, summed term by term in the lists' order (as the exact path adds)."""
    scores = np.zeros(len(rows), dtype=np.float64)
    live = rows < len(stale)
    if len(stale):
        live[live] = ~stale[rows[live]]
    for t in lists:
        for found_rows, found_counts, usable in ((t.rows, t.counts, live), (t.held_rows, t.held_counts, None)):
            if not len(found_rows):
                continue
            at = np.minimum(np.searchsorted(found_rows, rows), len(found_rows) - 1)
            hit = found_rows[at] == rows
            if usable is not None:
                hit &= usable
            if hit.any():
                scores[hit] += contribution(t.weight, found_counts[at[hit]], k1)
    return scores


def _certified(rows: np.ndarray, scores: np.ndarray, limit: int, bound: float, latest: int, rank: np.ndarray,
               stale: np.ndarray) -> bool:
    """Whether the `limit`-th best candidate beats every row outside the champion lists (module docstring)."""
    if len(rows) < limit:
        return False
    cut = float(np.partition(scores, len(scores) - limit)[len(scores) - limit])
    if cut > bound:
        return True
    if cut < bound:
        return False
    # Ties at the bound: the limit-th candidate in the ranking's order must have an id no later than the latest
    # boundary's; rows changed since the segment have no rank there, so a tie among them is not certified.
    tied = rows[scores == cut]
    above = int(np.count_nonzero(scores > cut))
    if np.any(tied >= len(stale)) or (len(stale) and np.any(stale[tied[tied < len(stale)]])):
        return False
    ranks = np.sort(rank[tied])
    return int(ranks[limit - above - 1]) <= latest
