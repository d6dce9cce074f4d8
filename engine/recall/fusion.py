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
5. relevance = logistic(smoothed): a number in (0, 1) for the composite score; order is unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.models import Strategy, StrategyDetail
from engine.recall.lexical_query import terms
from engine.recall.presets import FusionSettings
from engine.recall.strategies import Hit, RecallInputs
from engine.recall.unnamed import name_words
from engine.store.records import NO_EPISODE, FusionRow

_SIGNALS_OF = {
    Strategy.SIMILARITY: ("similarity", "similarity_window", "similarity_unnamed"),
    Strategy.LEXICAL: ("lexical", "lexical_window"),
}
# Signals of the candidate rather than of one strategy's hit: shown in each of its strategies' details.
_SHARED_SIGNALS = ("entity_named",)


@dataclass(frozen=True, slots=True)
class Fused:
    id: str
    relevance: float
    details: tuple[StrategyDetail, ...]


def _signals(
    hit_lists: Mapping[Strategy, list[Hit]],
    cosine: Mapping[str, float],
    window_cosine: Mapping[str, float],
    unnamed_cosine: Mapping[str, float],
) -> dict[str, dict[str, float]]:
    signals: dict[str, dict[str, float]] = {}
    for strategy, hits in hit_lists.items():
        if strategy == Strategy.SIMILARITY:
            signals["similarity"] = dict(cosine) if cosine else {h.id: h.relevance for h in hits}
            if window_cosine:
                signals["similarity_window"] = dict(window_cosine)
            if unnamed_cosine:
                signals["similarity_unnamed"] = dict(unnamed_cosine)
        elif strategy == Strategy.LEXICAL:
            signals["lexical"] = {h.id: float(h.detail.fields.get("bm25", 0.0)) for h in hits}
            signals["lexical_window"] = {h.id: float(h.detail.fields.get("window_bm25", 0.0)) for h in hits}
        elif strategy in (Strategy.CAUSAL, Strategy.TEMPORAL) and cosine:
            signals[strategy.value] = {h.id: max(0.0, cosine.get(h.id, 0.0)) * h.relevance for h in hits}
        else:
            signals[strategy.value] = {h.id: h.relevance for h in hits}
    return signals


def entity_named(inp: RecallInputs, entities: Mapping[str, str | None]) -> dict[str, float]:
    """1 for a candidate whose entity (a conversation message's speaker, a document's subject) the cue
    names by any word of the entity's name, else 0: "What did Melanie read?" favours what Melanie said over
    what was said to her, while lexical BM25 barely weighs a name that is in half the memories."""
    words = set(terms(inp.request.cue))
    if not words:
        return {}
    hit = {e: bool(name_words(e) & words) for e in set(entities.values()) if e is not None}
    return {memory_id: 1.0 for memory_id, entity in entities.items() if entity is not None and hit[entity]}


def _padded(rows: Sequence[Sequence[int]], pad: int) -> np.ndarray:
    """Ragged index lists as one matrix, short rows filled with `pad` (at least one column)."""
    width = max(1, max((len(r) for r in rows), default=0))
    out = np.full((len(rows), width), pad, dtype=np.int64)
    for n, r in enumerate(rows):
        out[n, : len(r)] = r
    return out


def _cosines(
    inp: RecallInputs,
    pool: Sequence[str],
    outside: Sequence[str],
    adjacent: Mapping[str, set[str]],
    rows: Mapping[str, FusionRow],
    windows: bool,
    unnamed: bool = False,
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """The cue's cosine with each candidate's stored embedding and, when `windows`, with its window
    vector: the sum of its own and its same-episode followed_by neighbours' embeddings (`outside`: those
    neighbours not in the pool); when `unnamed`, the cosine of the cue without its entity names (the cue's
    own where it names none). All come from the record store at recall time (`rows`: episode key and
    embedding of the pool and its neighbours), so they follow every write and forget like the text windows."""
    cue = inp.cue_embedding
    if cue is None:
        return {}, {}, {}
    ids = [i for i in dict.fromkeys([*pool, *(outside if windows else ())]) if i in rows]
    if not ids:
        return {}, {}, {}
    row = {i: n for n, i in enumerate(ids)}
    matrix = inp.embeddings(ids, rows)  # from the candidate table in one step when it is in memory
    cos = matrix @ cue.astype(np.float32, copy=False)
    # The pool's members that have rows come first in `ids`, in pool order: their values are a prefix.
    mine = [i for i in pool if i in row]
    cosine = dict(zip(mine, cos[: len(mine)].tolist(), strict=True))
    unnamed_cosine: dict[str, float] = {}
    if unnamed:  # a cue that names no entity is its own unnamed form
        unnamed_cosine = cosine
        if inp.unnamed_embedding is not None:
            plain = matrix @ inp.unnamed_embedding.astype(np.float32, copy=False)
            unnamed_cosine = dict(zip(mine, plain[: len(mine)].tolist(), strict=True))
    if not windows:
        return cosine, {}, unnamed_cosine
    key = [r[0] for r in (rows[i] for i in ids)]  # each row's episode key, by row number
    members_of = _padded(
        [[m, *(k for n in adjacent.get(i, ()) if (k := row.get(n)) is not None and key[k] == key[m])]
         for m, i in enumerate(mine)],
        len(ids),
    )
    summed = np.vstack([matrix, np.zeros((1, matrix.shape[1]), dtype=matrix.dtype)])[members_of].sum(axis=1)
    norms = np.linalg.norm(summed, axis=1)
    dots = np.append(cos, 0.0)[members_of].sum(axis=1)
    window = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return cosine, dict(zip(mine, window.tolist(), strict=True)), unnamed_cosine


def _zscores(column: np.ndarray) -> np.ndarray:
    std = float(column.std())
    if std == 0.0:
        return np.zeros(len(column))
    return (column - float(column.mean())) / std


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
        """Each candidate's smoothed fused score (before the logistic) under `settings`, in pool order."""
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


def frame(
    inp: RecallInputs,
    hit_lists: Mapping[Strategy, list[Hit]],
    windows: bool = True,
    entities: bool = True,
    unnamed: bool = True,
    smoothing: bool = True,
) -> FusionFrame:
    """The pool (every hit plus its followed_by neighbours, minus anything forgotten) and its z-scores.
    `windows`: compute the window similarity signal; `entities`: the entity-named signal; `unnamed`: the
    unnamed-cue similarity (each is skipped when its weight is 0); `smoothing`: the same-episode neighbours
    and episodes of the pool (skipped by a fusion that does not smooth: the frame's scores do not read them)."""
    found = list(dict.fromkeys(h.id for hits in hit_lists.values() for h in hits))
    if not found:
        return EMPTY_FRAME
    adjacent = inp.followed_by(found)
    extra = sorted({n for i in found for n in adjacent.get(i, ()) if n not in inp.excluded} - set(found))
    windows = windows and Strategy.SIMILARITY in hit_lists
    if extra and (smoothing or windows):  # the added neighbours' own neighbours, for their windows and smoothing
        for i, linked in inp.followed_by(extra).items():
            adjacent.setdefault(i, set()).update(linked)
    pool = list(dict.fromkeys([*found, *extra]))
    outside: list[str] = []
    if windows and inp.cue_embedding is not None:  # the window vectors need the pool's neighbours too
        members = set(pool)
        outside = sorted({n for i in pool for n in adjacent.get(i, ()) if n not in members} - inp.excluded)
    # One read for every candidate: episode key and embedding (also drops anything forgotten meanwhile).
    rows = inp.rows([*pool, *outside])
    pool = [i for i in pool if i in rows]
    if not pool:
        return EMPTY_FRAME
    unnamed = unnamed and Strategy.SIMILARITY in hit_lists
    cosine, window_cosine, unnamed_cosine = _cosines(inp, pool, outside, adjacent, rows, windows, unnamed)
    signals = _signals(hit_lists, cosine, window_cosine, unnamed_cosine)
    if entities and Strategy.LEXICAL in hit_lists:
        signals["entity_named"] = entity_named(inp, {i: rows[i].entity_id for i in pool})
    names = tuple(signals)
    columns = []
    for name in names:
        values = signals[name]
        absent_is_zero = name.startswith("lexical") or name == "entity_named"
        missing = 0.0 if absent_is_zero or not values else min(values.values())
        columns.append(np.array([values.get(i, missing) for i in pool], dtype=np.float64))
    raw = np.column_stack(columns) if columns else np.zeros((len(pool), 0))
    z = np.column_stack([_zscores(c) for c in columns]) if columns else raw
    if smoothing:
        live = {i: rows[i][0] for i in pool}
        row = {i: n for n, i in enumerate(pool)}
        neighbours = _padded(
            [[row[n] for n in sorted(adjacent.get(i, ())) if n in row and live[n] == live[i]] for i in pool], -1
        )
        episodes = {k: g for g, k in enumerate(dict.fromkeys(live[i] for i in pool))}
        group = np.array([episodes[live[i]] for i in pool], dtype=np.int64)
        grouped = np.array([live[i] != NO_EPISODE for i in pool], dtype=bool)
    else:
        neighbours = np.full((len(pool), 1), -1, dtype=np.int64)
        group, grouped = np.zeros(len(pool), dtype=np.int64), np.zeros(len(pool), dtype=bool)
    by_id = np.argsort(np.argsort(np.array(pool)))
    return FusionFrame(tuple(pool), names, raw, z, neighbours, group, grouped, by_id)


def fuse(
    inp: RecallInputs, hit_lists: Mapping[Strategy, list[Hit]], settings: FusionSettings, limit: int
) -> list[Fused]:
    """The best `limit` candidates with their fused relevance and every strategy's detail, best first."""
    table = frame(inp, hit_lists, windows=settings.weight("similarity_window") > 0,
                  entities=settings.weight("entity_named") > 0, unnamed=settings.weight("similarity_unnamed") > 0,
                  smoothing=settings.smooths)
    if not table.pool:
        return []
    smoothed = table.scores(settings)
    kept = table.top(smoothed, limit)
    row = {table.pool[n]: n for n in kept}
    details: dict[str, list[StrategyDetail]] = {}
    for strategy, hits in hit_lists.items():
        own = _SIGNALS_OF.get(strategy, (strategy.value,))
        names = [s for s in (*own, *_SHARED_SIGNALS) if s in table.signals]
        for h in hits:
            n = row.get(h.id)
            if n is None:
                continue
            extra_fields: dict[str, object] = {f"z_{s}": round(float(table.z[n, table.signals.index(s)]), 4)
                                               for s in names}
            if strategy == Strategy.SIMILARITY and "similarity_window" in names:
                window = table.raw[n, table.signals.index("similarity_window")]
                extra_fields["window_similarity"] = round(float(window), 4)
            if strategy == Strategy.SIMILARITY and "similarity_unnamed" in names:
                plain = table.raw[n, table.signals.index("similarity_unnamed")]
                extra_fields["unnamed_similarity"] = round(float(plain), 4)
            extra_fields["fused"] = round(float(smoothed[n]), 4)
            details.setdefault(h.id, []).append(
                StrategyDetail(h.detail.strategy, h.detail.relevance, {**h.detail.fields, **extra_fields})
            )
    label = next(iter(hit_lists), Strategy.SIMILARITY)
    return [
        Fused(
            table.pool[n],
            _logistic(float(smoothed[n])),
            tuple(details.get(table.pool[n], ())) or (_context_detail(label, float(smoothed[n])),),
        )
        for n in kept
    ]


def _context_detail(label: Strategy, smoothed: float) -> StrategyDetail:
    """A candidate no strategy returned itself: it came in as a neighbour of one that was."""
    fields = {"context_neighbour": True, "fused": round(smoothed, 4)}
    return StrategyDetail(label, _logistic(smoothed), fields)


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))
