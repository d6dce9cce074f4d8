"""Fusion that adds evidence: per-query z-scores of each signal, weighted and summed, then smoothed.

1. The candidate pool is every memory some strategy found, plus the followed_by neighbours of those
   (a turn next to a strong match is a candidate even if no strategy found it on its own).
2. Signals: similarity brings two, the exact cosine of the cue and each candidate's stored embedding,
   and the cue's cosine with the candidate's window vector (the mean of its own and its same-episode
   neighbours' embeddings: a turn that only makes sense beside its neighbours), and, where weighted, a third:
   the cosine with the cue's embedding without the entity names in it (`similarity_unnamed`: what the cue
   asks about, not whom; engine/recall/unnamed.py). Lexical brings two
   (BM25 of the memory's own text and of its context window; no match is 0) and, where weighted,
   `entity_named` (the cue names the candidate's entity, e.g. a message's speaker); temporal, causal and
   analogical bring their relevance. Causal and temporal hits must earn their place through
   the cue: their relevance is multiplied by the cue's similarity to them (being near the seed is not
   relevance). A candidate a strategy did not return gets that signal's lowest observed value.
3. Each signal becomes a z-score over the pool (how unusual this candidate is *for this query*), so
   scales that differ by strategy become comparable; the fused score is the weighted sum. A memory
   found by several strategies collects from each: evidence adds instead of the maximum winning.
4. Smoothing: fused + neighbour_weight x the best same-episode neighbour's fused score
   + episode_weight x episode_decay^r x the best fused score in its episode (conversation session,
   document), r = the memory's rank in its episode by its own fused score (0 for the best): with a decay
   below 1 an episode lifts its best few rather than all its members alike.
5. relevance = the calibration of the smoothed score's z over the pool (engine/recall/calibration.py: the
   probability of relevance at even prior odds, fitted on LoCoMo's tuning half): a number in (0, 1) with the
   spread the composite score assumes; order is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import NamedTuple

import numpy as np

from engine.blas import one_thread
from engine.index.candidates import CandidateTable
from engine.index.sorted_rows import members_of
from engine.models import Strategy, StrategyDetail
from engine.recall.calibration import from_z, standardised
from engine.recall.lexical_query import terms
from engine.recall.presets import FusionSettings
from engine.recall.strategies import Hit, HitColumns, RecallInputs
from engine.recall.unnamed import name_words
from engine.store.rows import NO_EPISODE

_SIGNALS_OF = {
    Strategy.SIMILARITY: ("similarity", "similarity_window", "similarity_unnamed"),
    Strategy.LEXICAL: ("lexical", "lexical_window"),
}
# Signals of the candidate rather than of one strategy's hit: shown in each of its strategies' details.
_SHARED_SIGNALS = ("entity_named",)


def named_entities(cue: str, entities: Iterable[str | None]) -> set[str]:
    """Of `entities`, those the cue names by any word of the entity's name."""
    words = set(terms(cue))
    return {e for e in set(entities) if e is not None and not name_words(e).isdisjoint(words)} if words else set()


def entity_named(inp: RecallInputs, entities: Mapping[str, str | None]) -> dict[str, float]:
    """1 for a candidate whose entity (a conversation message's speaker, a document's subject) the cue
    names by any word of the entity's name, else 0: "What did Melanie read?" favours what Melanie said over
    what was said to her, while lexical BM25 barely weighs a name that is in half the memories."""
    named = named_entities(inp.request.cue, entities.values())
    return {memory_id: 1.0 for memory_id, entity in entities.items() if entity in named}


def _named_column(inp: RecallInputs, entities: Sequence[str | None]) -> np.ndarray:
    """`entity_named` as a column over the pool (`entities`: each candidate's entity, in pool order)."""
    named = named_entities(inp.request.cue, entities)
    return np.fromiter(map(named.__contains__, entities), dtype=np.float64, count=len(entities))


def _named_rows(inp: RecallInputs, table: CandidateTable, rows: np.ndarray) -> np.ndarray:
    """`_named_column` of the pool's rows in the candidate table: by the rows' entity codes
    (`CandidateTable.named_at`), no entity id read per candidate."""
    return table.named_at(rows, frozenset(terms(inp.request.cue)), name_words).astype(np.float64)


def _id_order(table: CandidateTable, rows: np.ndarray) -> np.ndarray:
    """Numbers that sort the rows as their ids sort: the table's (`CandidateTable.id_order`), else the ids
    themselves (UTF-8 bytes sort as code points do)."""
    order = table.id_order(rows)
    return order if order is not None else table.keys_at(rows)


_NO_PAIRS = np.zeros(0, dtype=np.int64)


def _codes(keys: Sequence[str]) -> tuple[np.ndarray, dict[str, int]]:
    """Each key as a number (keys numbered in order of first appearance), and the numbering."""
    number = {k: n for n, k in enumerate(dict.fromkeys(keys))}
    return np.fromiter(map(number.__getitem__, keys), dtype=np.int64, count=len(keys)), number


def _ranks(ids: Sequence[str]) -> np.ndarray:
    """Each id's rank in sorted order (ids are unique; numpy's unicode order is Python's code point order)."""
    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.argsort(np.array(ids), kind="stable")] = np.arange(len(ids))
    return rank


def _same_episode_pairs(pool: Sequence[str], links: Mapping[str, Collection[str]], at: Mapping[str, int],
                        codes: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(candidate, neighbour) positions of every pool member's followed_by neighbours that were read (`at`) and
    share its episode (`codes`), sorted by candidate, then by the neighbour's id (`rank`)."""
    lists = list(map(links.get, pool, repeat(())))
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    total = int(counts.sum())
    if not total:
        return _NO_PAIRS, _NO_PAIRS
    near = np.fromiter(map(at.get, chain.from_iterable(lists), repeat(-1)), dtype=np.int64, count=total)
    src = np.repeat(np.arange(len(pool), dtype=np.int64), counts)
    keep = near >= 0
    src, near = src[keep], near[keep]
    keep = codes[src] == codes[near]
    src, near = src[keep], near[keep]
    order = np.lexsort((rank[near], src))
    return src[order], near[order]


def _padded_pairs(pairs: tuple[np.ndarray, np.ndarray], size: int, pad: int, own: bool) -> np.ndarray:
    """Each candidate's neighbours (`pairs` sorted by candidate) as one row of a matrix, short rows filled with
    `pad` (at least one column); `own`: each row starts with the candidate itself."""
    src, near = pairs
    counts = np.bincount(src, minlength=size)
    lead = 1 if own else 0
    out = np.full((size, max(1, lead + int(counts.max(initial=0)))), pad, dtype=np.int64)
    if own:
        out[:, 0] = np.arange(size)
    if len(src):
        starts = np.cumsum(counts) - counts
        out[src, lead + np.arange(len(src)) - starts[src]] = near
    return out


def _zscores(raw: np.ndarray) -> np.ndarray:
    """Each column's per-query z-scores (a constant column: all 0). On a column-major matrix each column's
    mean and deviation are summed exactly as a single column's would be."""
    mean, std = raw.mean(axis=0), raw.std(axis=0)
    return np.divide(raw - mean, std, out=np.zeros_like(raw), where=std != 0.0)


@dataclass(frozen=True, slots=True)
class FusionFrame:
    """One query's evidence before weighting: the candidate pool, each signal's per-query z-scores, the
    same-episode neighbours and episode of each candidate. `scores` turns it into fused scores for any
    settings, so a grid of fusion settings is scored without searching again (benchmarks/locomo_grid.py).

    raw: (pool x signals) the signals' own values (a candidate a strategy missed: its fill value);
    z: their per-query z-scores; neighbours: (pool x width) row indexes of same-episode followed_by neighbours
    in the pool, -1 where none; group: an episode number per row; grouped: the row names an episode."""

    pool: tuple[str, ...]
    signals: tuple[str, ...]
    raw: np.ndarray
    z: np.ndarray
    neighbours: np.ndarray
    group: np.ndarray
    grouped: np.ndarray
    by_id: np.ndarray  # each row's rank by memory id: the tie-break

    def column(self, signal: str) -> np.ndarray | None:
        return self.z[:, self.signals.index(signal)] if signal in self.signals else None

    def scores(self, settings: FusionSettings) -> np.ndarray:
        """Each candidate's smoothed fused score (before calibration) under `settings`, in pool order."""
        if not self.pool:
            return np.zeros(0)
        fused = self.z @ np.array([settings.weight(s) for s in self.signals], dtype=np.float64)
        if not settings.smooths:
            return fused
        near = np.append(fused, -np.inf)[self.neighbours].max(axis=1)
        smoothed = fused + settings.neighbour_weight * np.where(np.isfinite(near), near, 0.0)
        best = np.full(int(self.group.max()) + 1, -np.inf)
        np.maximum.at(best, self.group, fused)
        share = np.full(len(fused), settings.episode_weight)
        if settings.episode_decay != 1.0:
            share *= settings.episode_decay ** self._rank_in_episode(fused)
        return smoothed + np.where(self.grouped, share * best[self.group], 0.0)

    def _rank_in_episode(self, fused: np.ndarray) -> np.ndarray:
        """Each row's rank within its episode by `fused`, best first (0), ties by memory id."""
        order = np.lexsort((self.by_id, -fused, self.group))
        groups = self.group[order]
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        first = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
        rank = np.empty(len(fused), dtype=np.float64)
        rank[order] = np.arange(len(order)) - first
        return rank

    def ranked(self, settings: FusionSettings, limit: int) -> list[int]:
        """Row indexes of the best `limit` candidates under `settings`, best first (ties: by memory id)."""
        return self.top(self.scores(settings), limit)

    def top(self, scores: np.ndarray, limit: int) -> list[int]:
        """Row indexes of the `limit` highest of `scores` (from `scores`), best first (ties: by memory id)."""
        if not self.pool:
            return []
        return np.lexsort((self.by_id, -scores))[:limit].tolist()


EMPTY_FRAME = FusionFrame((), (), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 1), dtype=np.int64),
                          np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64))


def _links(inp: RecallInputs, ids: Sequence[str]) -> dict[str, Collection[str]]:
    """Every followed_by neighbour of each of `ids` (both directions): the candidate table's own tuples when it
    is in memory (no sets built per recall), else one read of the store."""
    table = inp.table()
    if table is not None:
        return dict(table.neighbours(ids))
    read = inp.followed_by(ids)  # also partial entries of the ids' neighbours: not kept
    return {i: linked for i in ids if (linked := read.get(i))}


class _Read(NamedTuple):
    """What `frame` reads of the pool: its ids (hits first, then their neighbours in id order) and the window's
    outside neighbours (after the pool: `size` rows are the pool's), each row's episode numbered in order of first
    appearance (`no_episode`: the number of "no episode", or -1; from the candidate table only when the pairs are
    asked for, as nothing else reads them), the entity-named column (`named`: only when that signal is weighed,
    else None), the embeddings (when the cue
    was embedded), the same-episode neighbour pairs (`_same_episode_pairs`) and each row's rank by id."""

    pool: list[str]
    size: int
    codes: np.ndarray
    no_episode: int
    named: np.ndarray | None
    matrix: Callable[[], np.ndarray | None]  # (gathered meanwhile: asked for once the columns that need none are made)
    near: tuple[np.ndarray, np.ndarray]
    rank: np.ndarray


def _missing_from(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`np.setdiff1d(values, rows)` (the distinct values not in `rows`, sorted) by a binary search in the few
    sorted rows instead of sorting both arrays together: a third of its time on a fused recall's pool."""
    return np.unique(values[~members_of(np.sort(rows), values)])


def _gather_ids(inp: RecallInputs, found: list[str], outside_too: bool, links_too: bool, pairs_too: bool,
                embed: bool, named: bool = True) -> _Read | None:
    """`_Read` from the store (no candidate table): ids, links and rows as the store answers them."""
    excluded = inp.excluded
    links = _links(inp, found)
    known = set(found)
    extra = sorted(set(chain.from_iterable(links.values())) - known - excluded)  # (links: of found ids only)
    if extra and links_too:  # the added neighbours' own neighbours, for their windows and smoothing
        links.update(_links(inp, extra))
    pool = [*found, *extra]
    outside: list[str] = []
    if outside_too:  # the window vectors need the pool's neighbours too
        known.update(extra)
        outside = sorted(set(chain.from_iterable(links.values())) - known - excluded)
    read = inp.rows([*pool, *outside])  # drops anything forgotten meanwhile
    kept = [i for i in pool if i in read]
    if not kept:
        return None
    ids = kept + [i for i in outside if i in read]
    rows = [read[i] for i in ids]
    embeddings = inp.embeddings(ids, read) if embed else None
    codes, number = _codes([r.episode for r in rows])
    rank = _ranks(ids)
    near = (_NO_PAIRS, _NO_PAIRS)
    if pairs_too:
        near = _same_episode_pairs(kept, links, dict(zip(ids, range(len(ids)), strict=True)), codes, rank)
    named_column = _named_column(inp, [r.entity_id for r in rows[: len(kept)]]) if named else None
    return _Read(kept, len(kept), codes, number.get(NO_EPISODE, -1), named_column, lambda: embeddings, near, rank)


def _gather_rows(inp: RecallInputs, found: list[str], outside_too: bool, links_too: bool, pairs_too: bool,
                 embed: bool, named: bool = True) -> _Read | None:
    """`_Read` from the candidate table, by row number: the hits' ids are looked up once, their neighbours and
    the window's members are rows from the table's links (`CandidateTable.link_rows`), and only the ids of the
    neighbours that join the pool are decoded; the same values as `_gather_ids` (tests/engine/test_fusion_arrays.py)."""
    table = inp.table()
    assert table is not None
    rows = table.rows_of(found)
    src, linked = table.link_rows(found, rows)
    extra_rows = _missing_from(linked, rows)  # (a hit forgotten meanwhile still brings the links held by its id)
    if rows.min(initial=0) < 0:  # forgotten meanwhile: not in the pool
        exists = rows >= 0
        keep = exists[src]
        src, linked = (np.cumsum(exists) - 1)[src[keep]], linked[keep]
        found = [i for i, e in zip(found, exists.tolist(), strict=True) if e]
        rows = rows[exists]
    if not found:
        return None
    excluded = table.excluded_rows(inp.excluded)
    if len(excluded):
        extra_rows = np.setdiff1d(extra_rows, excluded, assume_unique=True)
    extra_keys = table.keys_at(extra_rows)
    by_key = np.argsort(extra_keys, kind="stable")  # in id order (UTF-8 bytes sort as code points do)
    extra_rows, extra_keys = extra_rows[by_key], extra_keys[by_key]
    pool = [*found, *(k.decode() for k in extra_keys.tolist())]
    pool_rows = np.concatenate([rows, extra_rows])
    size = len(pool)
    if len(extra_rows) and links_too:
        more_src, more = table.link_rows(pool[len(found):], extra_rows)
        src, linked = np.concatenate([src, more_src + len(found)]), np.concatenate([linked, more])
    every = pool_rows
    if outside_too:
        outside = _missing_from(linked, pool_rows)
        if len(excluded):
            outside = np.setdiff1d(outside, excluded, assume_unique=True)
        every = np.concatenate([pool_rows, outside[np.argsort(_id_order(table, outside), kind="stable")]])
    matrix = inp.gather_meanwhile(table.embeddings_at, every) if embed else lambda: None
    rank = np.empty(len(every), dtype=np.int64)
    rank[np.argsort(_id_order(table, every), kind="stable")] = np.arange(len(every))
    near = (_NO_PAIRS, _NO_PAIRS)
    named_column = _named_rows(inp, table, pool_rows) if named else None
    if not pairs_too:  # no smoothing and no windows (a plain fusion): nothing reads the episodes
        return _Read(pool, size, _NO_PAIRS, -1, named_column, matrix, near, rank)
    episodes = table.episode_codes_at(every)
    kinds, first, inverse = np.unique(episodes, return_index=True, return_inverse=True)
    number = np.empty(len(kinds), dtype=np.int64)
    number[np.argsort(first, kind="stable")] = np.arange(len(kinds))  # in order of first appearance
    codes = number[inverse.reshape(-1)]
    no_episode = next((int(number[n]) for n, c in enumerate(kinds.tolist()) if table.episode_key(c) == NO_EPISODE),
                      -1)
    if len(src):
        order = np.argsort(every, kind="stable")
        at = np.minimum(np.searchsorted(every, linked, sorter=order), len(every) - 1)
        position = order[at]
        keep = (every[position] == linked) & (codes[src] == codes[position])
        src, position = src[keep], position[keep]
        ordered = np.lexsort((rank[position], src))
        near = (src[ordered], position[ordered])
    return _Read(pool, size, codes, no_episode, named_column, matrix, near, rank)


def _column(values: Mapping[str, float], row: Mapping[str, int], size: int, absent_is_zero: bool) -> np.ndarray:
    """One signal as a column over the pool: a candidate the signal has no value for gets 0 (`absent_is_zero`)
    or the signal's lowest value (over every id it scored, the pool's or not)."""
    missing = 0.0 if absent_is_zero or not values else min(values.values())
    column = np.full(size, missing, dtype=np.float64)
    at = [(n, v) for i, v in values.items() if (n := row.get(i)) is not None]
    if at:
        rows_, vals = zip(*at, strict=True)
        column[list(rows_)] = vals
    return column


def _ids_of(hits: Sequence[Hit]) -> list[str]:
    """The hits' ids, in order (a `HitColumns` holds them as a list: no hit is made)."""
    return hits.ids if isinstance(hits, HitColumns) else [h.id for h in hits]


def _field_column(hits: Sequence[Hit], name: str, row: Mapping[str, int], size: int) -> np.ndarray:
    """A detail field of the hits (0 where absent) as a column over the pool (0 for the pool's others): read from
    the columns a `HitColumns` holds (its ids are distinct) without making its hits."""
    if not isinstance(hits, HitColumns) or name not in hits.columns:
        return _column({h.id: float(h.detail.fields.get(name, 0.0)) for h in hits}, row, size, True)
    at = np.fromiter(map(row.get, hits.ids, repeat(-1)), dtype=np.int64, count=len(hits.ids))
    inside = at >= 0
    column = np.zeros(size, dtype=np.float64)
    column[at[inside]] = np.array(hits.columns[name], dtype=np.float64)[inside]
    return column


def _relevance_column(hits: Sequence[Hit], row: Mapping[str, int], size: int, cosine: np.ndarray | None
                      ) -> np.ndarray:
    """A strategy's relevance as a column over the pool (`_column`, absent: the lowest value), each hit's times its
    cosine with the cue (never below 0; 0 for a hit no longer in the pool) when `cosine` is given: the values of the
    former dict per hit, computed as one array (a strategy that returned an id twice or a relevance that is not a
    number still goes through the dict, whose rules decide those)."""
    if not hits:
        return np.zeros(size, dtype=np.float64)
    ids = _ids_of(hits)
    if isinstance(hits, HitColumns):
        values = np.array(hits.relevance, dtype=np.float64)
    else:
        values = np.fromiter([h.relevance for h in hits], dtype=np.float64, count=len(hits))
    at = np.fromiter(map(row.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))
    inside = at >= 0
    if cosine is not None:
        own = np.where(inside, cosine[at], 0.0)
        values = np.where(own > 0.0, own, 0.0) * values  # max(0.0, cosine), as Python's max gave it
    if np.isnan(values).any() or len(set(ids)) != len(ids):
        if cosine is None:
            return _column({h.id: h.relevance for h in hits}, row, size, False)
        cosines = cosine.tolist()
        return _column({h.id: max(0.0, cosines[p] if (p := row.get(h.id)) is not None else 0.0) * h.relevance
                        for h in hits}, row, size, False)
    column = np.full(size, values.min(), dtype=np.float64)
    column[at[inside]] = values[inside]
    return column


def frame(
    inp: RecallInputs,
    hit_lists: Mapping[Strategy, Sequence[Hit]],
    windows: bool = True,
    entities: bool = True,
    unnamed: bool = True,
    smoothing: bool = True,
) -> FusionFrame:
    """The pool (every hit plus its followed_by neighbours, minus anything forgotten) and its z-scores.
    `windows`: compute the window similarity signal; `entities`: the entity-named signal; `unnamed`: the
    unnamed-cue similarity (each is skipped when its weight is 0); `smoothing`: the same-episode neighbours
    and episodes of the pool (skipped by a fusion that does not smooth: the frame's scores do not read them).
    Each signal is one float64 column over the pool; the work per candidate in Python is a few dict reads."""
    found = list(dict.fromkeys(chain.from_iterable(map(_ids_of, hit_lists.values()))))
    if not found:
        return EMPTY_FRAME
    windows = windows and Strategy.SIMILARITY in hit_lists
    cue = inp.cue_embedding
    table = inp.table()
    gather = _gather_rows if table is not None else _gather_ids
    named = entities and Strategy.LEXICAL in hit_lists
    read = gather(inp, found, windows and cue is not None, smoothing or windows,
                  smoothing or (windows and cue is not None), cue is not None, named)
    if read is None:
        return EMPTY_FRAME
    pool, size, codes, no_episode, named_column, gathered, near, rank = read
    at = dict(zip(pool, range(size), strict=True))  # every hit that exists is a pool member
    # The columns that need no embedding first, while the pool's embeddings are gathered.
    lexical = hit_lists.get(Strategy.LEXICAL)
    lexical_columns = ([_field_column(lexical, "bm25", at, size), _field_column(lexical, "window_bm25", at, size)]
                       if lexical is not None else [])
    windows = windows and cue is not None
    plan = _window_plan(near, size, len(rank)) if windows else None
    if smoothing:
        inside = near[1] < size
        neighbours = _padded_pairs((near[0][inside], near[1][inside]), size, -1, own=False)
        group = codes[:size]  # numbered in order of first appearance in the pool (the pool comes first)
        grouped = group != no_episode
    else:
        neighbours = np.full((size, 1), -1, dtype=np.int64)
        group, grouped = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=bool)
    by_id = np.argsort(np.argsort(rank[:size]))  # the ids' order within the pool
    matrix = gathered()
    unnamed = unnamed and Strategy.SIMILARITY in hit_lists
    cosine: np.ndarray | None = None
    window: np.ndarray | None = None
    plain: np.ndarray | None = None
    if cue is not None and matrix is not None:
        with one_thread():  # small products: waking BLAS threads cost more than the arithmetic (engine/blas.py)
            cos = matrix @ cue.astype(np.float32, copy=False)
            cosine = cos[:size].astype(np.float64)
            if unnamed:  # a cue that names no entity is its own unnamed form
                plain = cosine
                if inp.unnamed_embedding is not None:
                    plain = (matrix @ inp.unnamed_embedding.astype(np.float32, copy=False))[:size].astype(np.float64)
            if plan is not None:
                window = _window_cosines(matrix, cos, plan, size)
    names: list[str] = []
    columns: list[np.ndarray] = []
    for strategy, hits in hit_lists.items():
        if strategy == Strategy.SIMILARITY:
            names.append("similarity")
            if cosine is not None:
                columns.append(cosine)
            else:
                columns.append(_column({h.id: h.relevance for h in hits}, at, size, False))
            if window is not None:
                names.append("similarity_window")
                columns.append(window)
            if plain is not None:
                names.append("similarity_unnamed")
                columns.append(plain)
        elif strategy == Strategy.LEXICAL:
            names += ["lexical", "lexical_window"]
            columns += lexical_columns
        else:
            names.append(strategy.value)
            # causal and temporal hits earn their place through the cue: its cosine times their relevance
            earned = strategy in (Strategy.CAUSAL, Strategy.TEMPORAL) and cosine is not None
            columns.append(_relevance_column(hits, at, size, cosine if earned else None))
    if named_column is not None:
        names.append("entity_named")
        columns.append(named_column)
    raw = np.empty((size, len(columns)), dtype=np.float64, order="F")  # column-major: each signal contiguous
    for n, column in enumerate(columns):
        raw[:, n] = column
    z = np.ascontiguousarray(_zscores(raw))  # row-major, as the weighted sum has always read it
    return FusionFrame(tuple(pool), tuple(names), raw, z, neighbours, group, grouped, by_id)


class _WindowPlan(NamedTuple):
    """Which rows `_window_cosines` adds, made from the pairs alone (before the embeddings are there): for each
    place in a member's neighbour list, the members that have a neighbour there and those neighbours' rows; and
    each member's window rows padded (its own first; the pad is the row past the matrix)."""

    steps: list[tuple[np.ndarray, np.ndarray]]
    members: np.ndarray


def _window_plan(near: tuple[np.ndarray, np.ndarray], size: int, rows: int) -> _WindowPlan:
    src, other = near
    steps = []
    if len(src):
        counts = np.bincount(src, minlength=size)
        place = np.arange(len(src)) - (np.cumsum(counts) - counts)[src]  # the neighbour's place in its member's list
        order = np.argsort(place, kind="stable")
        low = 0
        for high in np.cumsum(np.bincount(place)).tolist():
            step = order[low:high]  # one place: each member at most once
            steps.append((src[step], other[step]))
            low = high
    return _WindowPlan(steps, _padded_pairs(near, size, rows, own=True))


def _window_cosines(matrix: np.ndarray, cos: np.ndarray, plan: _WindowPlan, size: int) -> np.ndarray:
    """The cue's cosine with each pool member's window vector (its own embedding, the first `size` rows of `matrix`,
    plus its same-episode neighbours' rows, `_window_plan`: sorted by member, then by the neighbour's id): the sum
    of the members' cosines over the summed vector's norm. The members are added in that order, one neighbour per
    member at a time (float32, the sums of the former padded loop bit for bit), and only members that have a
    neighbour in that place are touched: a long episode costs its own members, not the whole pool."""
    summed = matrix[:size].copy()
    for members, neighbours in plan.steps:
        summed[members] += matrix[neighbours]
    norms = np.linalg.norm(summed, axis=1)
    dots = np.append(cos, 0.0)[plan.members].sum(axis=1)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


@dataclass(frozen=True, slots=True)
class Fusion:
    """A fused recall's best candidates, best first, with their calibrated relevance. The strategies' details
    are built on demand (`details`): the composite score keeps a few of the candidates, and only theirs are read."""

    ids: tuple[str, ...]
    relevance: tuple[float, ...]
    _table: FusionFrame
    _smoothed: np.ndarray
    _z: np.ndarray  # every pool member's smoothed score in standard deviations over the pool
    _relevance: np.ndarray  # and its calibrated relevance
    _row: Mapping[str, int]  # each kept id's row in the frame
    _hit_lists: Mapping[Strategy, Sequence[Hit]]

    def details(self, ids: Collection[str]) -> dict[str, tuple[StrategyDetail, ...]]:
        """Each strategy's detail of each of `ids` (kept ids), with the signals' z-scores, the fused score and its
        z over the pool (`fused_z`, what the calibrated relevance is a function of)."""
        table, smoothed, row, relevance, zs = self._table, self._smoothed, self._row, self._relevance, self._z
        wanted = {i for i in ids if i in row}
        out: dict[str, list[StrategyDetail]] = {}
        for strategy, hits in self._hit_lists.items():
            own = _SIGNALS_OF.get(strategy, (strategy.value,))
            names = [s for s in (*own, *_SHARED_SIGNALS) if s in table.signals]
            if isinstance(hits, HitColumns):  # only the wanted hits are made
                chosen = hits.at([n for n, i in enumerate(hits.ids) if i in wanted])
            else:
                chosen = [h for h in hits if h.id in wanted]
            for h in chosen:
                n = row[h.id]
                extra_fields: dict[str, object] = {f"z_{s}": round(float(table.z[n, table.signals.index(s)]), 4)
                                                   for s in names}
                if strategy == Strategy.SIMILARITY and "similarity_window" in names:
                    window = table.raw[n, table.signals.index("similarity_window")]
                    extra_fields["window_similarity"] = round(float(window), 4)
                if strategy == Strategy.SIMILARITY and "similarity_unnamed" in names:
                    plain = table.raw[n, table.signals.index("similarity_unnamed")]
                    extra_fields["unnamed_similarity"] = round(float(plain), 4)
                extra_fields["fused"] = round(float(smoothed[n]), 4)
                extra_fields["fused_z"] = round(float(zs[n]), 4)
                out.setdefault(h.id, []).append(
                    StrategyDetail(h.detail.strategy, h.detail.relevance, {**h.detail.fields, **extra_fields})
                )
        label = next(iter(self._hit_lists), Strategy.SIMILARITY)
        return {i: tuple(out.get(i, ())) or (_context_detail(label, row[i], smoothed, zs, relevance),) for i in wanted}


def fused(
    inp: RecallInputs, hit_lists: Mapping[Strategy, Sequence[Hit]], settings: FusionSettings, limit: int
) -> Fusion:
    """The best `limit` candidates with their fused relevance, best first (details on demand)."""
    table = frame(inp, hit_lists, windows=settings.weight("similarity_window") > 0,
                  entities=settings.weight("entity_named") > 0, unnamed=settings.weight("similarity_unnamed") > 0,
                  smoothing=settings.smooths)
    if not table.pool:
        return Fusion((), (), table, np.zeros(0), np.zeros(0), np.zeros(0), {}, hit_lists)
    smoothed = table.scores(settings)
    z = standardised(smoothed)
    relevance = from_z(z)
    kept = table.top(smoothed, limit)
    ids = tuple(table.pool[n] for n in kept)
    return Fusion(ids, tuple(relevance[kept].tolist()), table, smoothed, z, relevance,
                  dict(zip(ids, kept, strict=True)), hit_lists)


def _context_detail(
    label: Strategy, n: int, smoothed: np.ndarray, z: np.ndarray, relevance: np.ndarray
) -> StrategyDetail:
    """A candidate no strategy returned itself: it came in as a neighbour of one that was."""
    fields = {"context_neighbour": True, "fused": round(float(smoothed[n]), 4), "fused_z": round(float(z[n]), 4)}
    return StrategyDetail(label, float(relevance[n]), fields)
