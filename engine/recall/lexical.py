"""The lexical strategy: BM25 full-text match over memories and their context windows (SQLite FTS5).

A memory's lexical evidence has two parts: how well its own text matches (`bm25`) and how well its
window, the memory with its neighbours in the same episode, matches (`window_bm25`). Alone, the strategy
ranks by their sum mapped into [0, 1) (`bm25 / (bm25 + half)`); in a fused recall each part is normalised
per query as its own signal (see `engine.recall.fusion`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from itertools import repeat
from typing import Any

import numpy as np

from engine.models import RecallResult, Strategy, StrategyDetail
from engine.recall.lexical_query import match_expression, terms
from engine.recall.strategies import HitColumns, RecallInputs
from engine.store.interface import Storage

_MARKED = re.compile(r"\[([^\]]+)\]")
# How many full-text matches each lexical table contributes to a recall's candidate pool (at least top_k).
LEXICAL_POOL = 100
# Single-strategy lexical relevance: bm25 / (bm25 + this), so relevance stays in [0, 1).
LEXICAL_RELEVANCE_HALF = 10.0


def lexical_signals(inp: RecallInputs, pool: int) -> tuple[dict[str, float], dict[str, float]]:
    """(memory BM25 by id, window BM25 by id) for the cue's best `pool` matches each."""
    words = terms(inp.request.cue)
    if not words:
        return {}, {}
    own = {i: score for i, score in inp.lexical_search("memory_text", words, pool) if i not in inp.excluded}
    window = {i: score for i, score in inp.lexical_search("window_text", words, pool) if i not in inp.excluded}
    return own, window


def lexical(inp: RecallInputs) -> HitColumns:
    """Each match's relevance from its two BM25 scores, best first (ties: by id), as columns: a fused recall reads
    the scores of a pool of 200 as arrays (`fusion._field_column`) and makes the hits of the few it keeps."""
    req = inp.request
    own, window = lexical_signals(inp, max(LEXICAL_POOL, req.top_k))
    ids = list(dict.fromkeys([*own, *window]))
    own_scores = np.fromiter(map(own.get, ids, repeat(0.0)), dtype=np.float64, count=len(ids))
    window_scores = np.fromiter(map(window.get, ids, repeat(0.0)), dtype=np.float64, count=len(ids))
    total = own_scores + window_scores
    relevance = total / (total + LEXICAL_RELEVANCE_HALF)  # the doubles the former per-hit arithmetic made
    order = sorted(range(len(ids)), key=lambda n: (-relevance[n], ids[n]))
    bm25 = [round(v, 4) for v in own_scores[order].tolist()]
    window_bm25 = [round(v, 4) for v in window_scores[order].tolist()]

    def fields(at: list[int]) -> list[dict[str, Any]]:
        return [{"bm25": bm25[n], "window_bm25": window_bm25[n]} for n in at]

    return HitColumns(Strategy.LEXICAL, [ids[n] for n in order], relevance[order], fields,
                      {"bm25": bm25, "window_bm25": window_bm25})


def with_matched_terms(results: Sequence[RecallResult], store: Storage, cue: str) -> list[RecallResult]:
    """The returned memories' lexical details gain `matched_terms`, the words of each that matched the cue
    (marked for the returned few only: highlighting every candidate cost more than ranking them; of those, only
    the ones with a lexical detail: in a fused recall about two in five have none)."""
    match = match_expression(cue)
    lexical_ids = {r.memory.id for r in results if any(d.strategy == Strategy.LEXICAL for d in r.strategy_details)}
    if match is None or not lexical_ids:
        return list(results)
    marked = store.lexical_marks(match, {r.memory.id: r.memory.content for r in results if r.memory.id in lexical_ids})
    out = []
    for r in results:
        if r.memory.id not in lexical_ids:
            out.append(r)  # no lexical detail to add the words to
            continue
        words = sorted({w.lower() for w in _MARKED.findall(marked.get(r.memory.id, ""))})
        details = tuple(
            StrategyDetail(d.strategy, d.relevance, {**d.fields, "matched_terms": words})
            if d.strategy == Strategy.LEXICAL else d
            for d in r.strategy_details
        )
        out.append(dataclasses.replace(r, strategy_details=details))
    return out
