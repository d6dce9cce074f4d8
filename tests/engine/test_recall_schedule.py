"""Where a default recall's work runs (engine/recall/recaller.py): its two BM25 searches in turn on one pool thread
while the cue is embedded, so the model keeps a core; similarity and then lexical on the calling thread; a search
that fails fails the recall with its own error."""

from __future__ import annotations

import threading
import time

import pytest

from engine import MemoryEngine
from engine.errors import StoreError
from engine.index.postings import LexicalPostings
from engine.models import Strategy
from engine.recall import recaller as recaller_module

TEXTS = ["the bicycle brakes failed on the hill", "Maya repaired the bicycle chain", "coffee at the new cafe",
         "the cafe roasts its own beans", "a bicycle race through town"]


def _spy_strategy(monkeypatch: pytest.MonkeyPatch, strategy: Strategy, seen: dict[Strategy, str]) -> None:
    run = recaller_module.STRATEGIES[strategy]

    def spied(inp):  # type: ignore[no-untyped-def]
        seen[strategy] = threading.current_thread().name
        return run(inp)

    monkeypatch.setitem(recaller_module.STRATEGIES, strategy, spied)


def test_the_searches_run_in_turn_on_one_pool_thread_and_the_strategies_here(
        engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    engine.remember_many([{"content": t} for t in TEXTS])
    searches: list[tuple[str, str, float, float]] = []
    search = LexicalPostings.search

    def spied(self: LexicalPostings, table: str, *args: object) -> list[tuple[str, float]]:
        start = time.perf_counter()
        try:
            return search(self, table, *args)  # type: ignore[arg-type]
        finally:
            searches.append((table, threading.current_thread().name, start, time.perf_counter()))

    monkeypatch.setattr(LexicalPostings, "search", spied)
    seen: dict[Strategy, str] = {}
    for strategy in (Strategy.SIMILARITY, Strategy.LEXICAL):
        _spy_strategy(monkeypatch, strategy, seen)
    found = engine.recall("who repaired the bicycle?")
    assert found and "repaired" in found[0].memory.content
    here = threading.current_thread().name
    assert sorted(t for t, *_ in searches) == ["memory_text", "window_text"]
    (_, first, _, first_end), (_, second, second_start, _) = sorted(searches, key=lambda s: s[2])
    assert first == second != here and first.startswith("hebbs-recall")  # one pool thread ...
    assert first_end <= second_start  # ... in turn
    assert seen == {Strategy.SIMILARITY: here, Strategy.LEXICAL: here}


def test_a_search_that_fails_fails_the_recall_with_its_error(engine: MemoryEngine,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    engine.remember_many([{"content": t} for t in TEXTS])
    search = LexicalPostings.search

    def failing(self: LexicalPostings, table: str, *args: object) -> list[tuple[str, float]]:
        if table == "window_text":
            raise OSError("the segment went away")
        return search(self, table, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(LexicalPostings, "search", failing)
    with pytest.raises(StoreError, match="the segment went away"):  # as any disk failure: one clear error
        engine.recall("who repaired the bicycle?")
    monkeypatch.setattr(LexicalPostings, "search", search)
    assert engine.recall("who repaired the bicycle?")  # the next recall is unaffected
