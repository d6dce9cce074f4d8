"""Fusion that adds evidence: per-query z-scores of each signal, weighted and summed, then smoothed.

1. The candidate pool is every memory some strategy found, plus the followed_by neighbours of those
   (a turn next to a strong match is a candidate even if no strategy found it on its own).
2. Signals: similarity is the exact cosine of the cue and each candidate's stored embedding; lexical
   brings two (BM25 of the memory's own text and of its context window; no match is 0); temporal,
   causal and analogical bring their relevance. Causal and temporal hits must earn their place through
   the cue: their relevance is multiplied by the cue's similarity to them (being near the seed is not
   relevance). A candidate a strategy did not return gets that signal's lowest observed value.
3. Each signal becomes a z-score over the pool (how unusual this candidate is *for this query*), so
   scales that differ by strategy become comparable; the fused score is the weighted sum. A memory
   found by several strategies collects from each: evidence adds instead of the maximum winning.
4. Smoothing: fused + neighbour_weight x the best same-episode neighbour's fused score
   + episode_weight x the best fused score in its episode (conversation session, document).
5. relevance = logistic(smoothed): a number in (0, 1) for the composite score; order is unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.models import Strategy, StrategyDetail
from engine.recall.presets import FusionSettings
from engine.recall.strategies import Hit, RecallInputs


@dataclass(frozen=True, slots=True)
class Fused:
    id: str
    relevance: float
    details: tuple[StrategyDetail, ...]


def _signals(
    inp: RecallInputs, hit_lists: Mapping[Strategy, list[Hit]], pool: Sequence[str]
) -> dict[str, dict[str, float]]:
    cosine: dict[str, float] = {}
    if inp.cue_embedding is not None:
        stored = inp.store.embeddings(pool)
        cosine = {i: float(np.dot(v, inp.cue_embedding)) for i, v in stored.items()}
    signals: dict[str, dict[str, float]] = {}
    for strategy, hits in hit_lists.items():
        if strategy == Strategy.SIMILARITY:
            signals["similarity"] = dict(cosine) if cosine else {h.id: h.relevance for h in hits}
        elif strategy == Strategy.LEXICAL:
            signals["lexical"] = {h.id: float(h.detail.fields.get("bm25", 0.0)) for h in hits}
            signals["lexical_window"] = {h.id: float(h.detail.fields.get("window_bm25", 0.0)) for h in hits}
        elif strategy in (Strategy.CAUSAL, Strategy.TEMPORAL) and cosine:
            signals[strategy.value] = {h.id: max(0.0, cosine.get(h.id, 0.0)) * h.relevance for h in hits}
        else:
            signals[strategy.value] = {h.id: h.relevance for h in hits}
    return signals


def _zscores(values: Mapping[str, float], pool: Sequence[str], missing: float) -> dict[str, float]:
    column = np.array([values.get(i, missing) for i in pool], dtype=np.float64)
    std = float(column.std())
    if std == 0.0:
        return dict.fromkeys(pool, 0.0)
    z = (column - float(column.mean())) / std
    return dict(zip(pool, z.tolist(), strict=True))


def fuse(
    inp: RecallInputs, hit_lists: Mapping[Strategy, list[Hit]], settings: FusionSettings, limit: int
) -> list[Fused]:
    """The best `limit` candidates with their fused relevance and every strategy's detail, best first."""
    found = list(dict.fromkeys(h.id for hits in hit_lists.values() for h in hits))
    adjacent = inp.store.followed_by_neighbours(found) if found else {}
    extra = {n for i in found for n in adjacent.get(i, ()) if n not in inp.excluded}
    pool = list(dict.fromkeys([*found, *sorted(extra)]))
    live = inp.store.episode_keys(pool)  # also drops anything forgotten meanwhile
    pool = [i for i in pool if i in live]
    if not pool:
        return []
    signals = _signals(inp, hit_lists, pool)
    fused = dict.fromkeys(pool, 0.0)
    normalised: dict[str, dict[str, float]] = {}
    for name, values in signals.items():
        lexical = name.startswith("lexical")
        missing = 0.0 if lexical or not values else min(values.values())
        normalised[name] = z = _zscores(values, pool, missing)
        weight = settings.weight(name)
        for i in pool:
            fused[i] += weight * z[i]
    smoothed = dict(fused)
    if settings.smooths:
        best_in_episode: dict[tuple[object, ...], float] = {}
        for i in pool:
            key = live[i]
            best_in_episode[key] = max(best_in_episode.get(key, -math.inf), fused[i])
        for i in pool:
            near = [fused[n] for n in adjacent.get(i, ()) if n in fused and live[n] == live[i]]
            if near:
                smoothed[i] += settings.neighbour_weight * max(near)
            if any(v != "null" for v in live[i]):
                smoothed[i] += settings.episode_weight * best_in_episode[live[i]]
    kept = sorted(pool, key=lambda i: (-smoothed[i], i))[:limit]
    chosen = set(kept)
    details: dict[str, list[StrategyDetail]] = {}
    for strategy, hits in hit_lists.items():
        names = ("lexical", "lexical_window") if strategy == Strategy.LEXICAL else (
            "similarity" if strategy == Strategy.SIMILARITY else strategy.value,
        )
        for h in hits:
            if h.id not in chosen:
                continue
            extra_fields = {f"z_{n}": round(normalised[n][h.id], 4) for n in names}
            extra_fields["fused"] = round(smoothed[h.id], 4)
            details.setdefault(h.id, []).append(
                StrategyDetail(h.detail.strategy, h.detail.relevance, {**h.detail.fields, **extra_fields})
            )
    label = next(iter(hit_lists), Strategy.SIMILARITY)
    return [
        Fused(i, _logistic(smoothed[i]), tuple(details.get(i, ())) or (_context_detail(label, i, smoothed),))
        for i in kept
    ]


def _context_detail(label: Strategy, memory_id: str, smoothed: Mapping[str, float]) -> StrategyDetail:
    """A candidate no strategy returned itself: it came in as a neighbour of one that was."""
    relevance = _logistic(smoothed[memory_id])
    fields = {"context_neighbour": True, "fused": round(smoothed[memory_id], 4)}
    return StrategyDetail(label, relevance, fields)


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))
