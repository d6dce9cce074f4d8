"""Bounded BM25 top-k over champion lists: the work of a search does not grow with the store.

Scoring every posting of every cue term (`LexicalPostings.search`'s exact path) reads each term's whole list:
on a million memories a cue term in 10% of them is 100,000 postings, plus a score array as wide as the store.
With BM25's `b = 0` (the default, engine/config.py) a term's contribution to a row depends on its occurrences
alone, so each term's postings can be ranked once by impact: occurrences descending, then memory id ascending
(the ranking's own tie-break). A term's *champion list* is the first `r` of that order (the classic "champion
lists" of Manning, Raghavan & Schuetze, section 7.1.3). A search

1. takes as candidates the union of the cue terms' champion lists (the rarest terms whole, while they fit in
   half the budget; a term in at most `r` rows gives them all) and every row changed since the segment (held
   in memory, few);
2. scores each candidate exactly (its occurrences of every term, found by binary search in the terms' full,
   row-sorted lists): the same floats, summed in the same order, as the exact path;
3. certifies the answer: a row in no champion list has, for every term it holds, at most the occurrences of
   that term's last champion (the *boundary*), and if just as many, a later id. So no such row scores above
   U, the sum of the boundaries' contributions, and one scoring exactly U has an id after every boundary's.
   When the `limit`-th candidate beats that (score above U, or equal to U with an id no later than the
   latest boundary's), the answer is exactly the exact path's.
4. Otherwise it widens each cut list past every posting with its boundary's occurrences (so the bound drops
   to the next lower count's contribution; fourfold when the boundary is at the list's lowest count) and
   tries again, scoring only the rows each round adds; a widening past `budget` postings is cut to share what
   is left of it, and when too little is left the search answers from the candidates it read, marked not
   exact (their scores are still true).

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
    if not lists:
        return Candidates(EMPTY, np.zeros(0, dtype=np.float64), True)
    widths = _first_widths(lists, first, budget)
    read = [0] * len(lists)  # champions already taken per term: a wider round adds only the ones after them
    rows, scores = EMPTY, np.zeros(0, dtype=np.float64)
    while True:
        parts = [] if rows.size else [t.held_rows for t in lists]
        bound, latest, truncated = 0.0, -1, False
        for n, (t, width) in enumerate(zip(lists, widths, strict=True)):
            if len(t.rows) > width:
                truncated = True
                order = t.impact_order()
                champions = t.rows[order[read[n] : width]]
                last = int(order[width - 1])
                bound += float(contribution(t.weight, t.counts[last : last + 1], k1)[0])
                latest = max(latest, int(rank[t.rows[last]]))
            elif read[n] < len(t.rows):
                champions = t.rows  # whole now (the rows taken before are dropped below)
            else:
                champions = EMPTY
            read[n] = min(width, len(t.rows))
            parts.append(champions[~stale[champions]] if len(stale) else champions)
        fresh = np.unique(np.concatenate(parts).astype(np.int64, copy=False))
        if rows.size:  # only rows not scored in an earlier round are scored now
            fresh = fresh[~members_of(rows, fresh)]
            merged = np.concatenate([rows, fresh])
            order = np.argsort(merged, kind="stable")
            rows, scores = merged[order], np.concatenate([scores, _scores(lists, fresh, k1, stale)])[order]
        else:
            rows, scores = fresh, _scores(lists, fresh, k1, stale)
        if not truncated or _certified(rows, scores, limit, bound, latest, rank, stale):
            return Candidates(rows, scores, True)
        wider = [_wider(t, width, first) for t, width in zip(lists, widths, strict=True)]
        if _read(lists, wider) > budget:  # the rest of the budget, shared by the cut lists in proportion
            whole = sum(len(t.rows) for t, width in zip(lists, widths, strict=True) if len(t.rows) <= width)
            factor = min(4.0, (budget - whole) / max(1, _read(lists, widths) - whole))
            if factor < 1.25:
                return Candidates(rows, scores, False)
            wider = [width if len(t.rows) <= width else int(width * factor)
                     for t, width in zip(lists, widths, strict=True)]
        widths = wider


def members_of(sorted_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Whether each of `rows` is in `sorted_rows` (ascending)."""
    return _find(sorted_rows, rows)[1]


def _find(sorted_rows: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each of `rows`' position in `sorted_rows` (ascending) and whether it is there."""
    if not len(sorted_rows):
        return np.zeros(len(rows), dtype=np.int64), np.zeros(len(rows), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_rows, rows), len(sorted_rows) - 1)
    return at, sorted_rows[at] == rows


def _read(lists: Sequence[TermList], widths: Sequence[int]) -> int:
    """Segment postings the champion lists of these widths hold."""
    return sum(min(len(t.rows), width) for t, width in zip(lists, widths, strict=True))


def _first_widths(lists: Sequence[TermList], first: int, budget: int) -> list[int]:
    """The first round's champion counts: the rarest terms whole while they fit in half the budget (a row
    holding one of them is then a candidate whatever its other terms), `first` for the others."""
    widths = [first] * len(lists)
    whole = 0
    for n in sorted(range(len(lists)), key=lambda n: len(lists[n].rows)):
        size = len(lists[n].rows)
        if whole + size > budget // 2:
            break
        widths[n] = max(first, size)
        whole += size
    return widths


def _wider(t: TermList, width: int, first: int) -> int:
    """A term's next champion count: past every posting with its boundary's occurrences (the bound then drops
    to the next lower count's contribution), or four times as many when the boundary is at its lowest count."""
    if len(t.rows) <= width:
        return width
    order = t.impact_order()
    counts = t.counts[order]  # descending
    end = int(np.searchsorted(-counts, -counts[width - 1], side="right"))
    if end < len(order):
        return end + first
    return width * 4 if len(order) == len(t.rows) else len(t.rows)  # (the order's known part ends in that count)


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
            at, hit = _find(found_rows, rows)
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
