"""The lexical strategy: BM25 full-text match over memories and their context windows (SQLite FTS5).

A memory's lexical evidence has two parts: how well its own text matches (`bm25`) and how well its
window, the memory with its neighbours in the same episode, matches (`window_bm25`). Alone, the strategy
ranks by their sum mapped into [0, 1) (`bm25 / (bm25 + half)`); in a fused recall each part is normalised
per query as its own signal (see `engine.recall.fusion`).
"""

from __future__ import annotations

import re

from engine import config
from engine.models import Strategy, StrategyDetail
from engine.recall.lexical_query import match_expression
from engine.recall.strategies import Hit, RecallInputs

_MARKED = re.compile(r"\[([^\]]+)\]")


def lexical_signals(inp: RecallInputs, pool: int) -> tuple[dict[str, float], dict[str, float], dict[str, list[str]]]:
    """(memory BM25 by id, window BM25 by id, matched words by id) for the cue's best `pool` matches each."""
    match = match_expression(inp.request.cue)
    if match is None:
        return {}, {}, {}
    own: dict[str, float] = {}
    matched: dict[str, list[str]] = {}
    for memory_id, score, marked in inp.store.lexical_search("memory_text", match, pool):
        if memory_id in inp.excluded:
            continue
        own[memory_id] = score
        matched[memory_id] = sorted({w.lower() for w in _MARKED.findall(marked)})
    window = {
        memory_id: score
        for memory_id, score, _ in inp.store.lexical_search("window_text", match, pool)
        if memory_id not in inp.excluded
    }
    return own, window, matched


def lexical(inp: RecallInputs) -> list[Hit]:
    req = inp.request
    own, window, matched = lexical_signals(inp, max(config.LEXICAL_POOL, req.top_k))
    hits = []
    for memory_id in dict.fromkeys([*own, *window]):
        total = own.get(memory_id, 0.0) + window.get(memory_id, 0.0)
        relevance = total / (total + config.LEXICAL_RELEVANCE_HALF)
        fields = {
            "bm25": round(own.get(memory_id, 0.0), 4),
            "window_bm25": round(window.get(memory_id, 0.0), 4),
            "matched_terms": matched.get(memory_id, []),
        }
        hits.append(Hit(memory_id, relevance, StrategyDetail(Strategy.LEXICAL, relevance, fields)))
    hits.sort(key=lambda h: (-h.relevance, h.id))
    return hits
