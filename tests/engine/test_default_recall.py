"""One default recall: a request that names neither strategies nor a preset runs `DEFAULT_PRESET` (the CLI,
REST and gRPC send exactly that: tests/test_cli.py, tests/test_contract.py and the transport contract)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import MemoryEngine, build_request
from engine.api.requests import RecallRequest
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.models import Strategy
from engine.recall.presets import DEFAULT_PRESET, PLAIN_FUSION, RECOMMENDED


def test_a_request_without_strategies_or_preset_is_the_default_preset() -> None:
    assert DEFAULT_PRESET is RECOMMENDED
    bare = RecallRequest.parse({"cue": "where did Priya hike"})
    named = RecallRequest.parse({"cue": "where did Priya hike", "preset": DEFAULT_PRESET.name})
    assert bare == named == RecallRequest(cue="where did Priya hike")
    assert bare.strategies == DEFAULT_PRESET.strategies and bare.fusion == DEFAULT_PRESET.fusion and bare.fused
    assert RecallRequest.parse({"cue": "x", "strategies": None, "preset": ""}) == RecallRequest(cue="x")


def test_named_strategies_run_as_named() -> None:
    plain = RecallRequest.parse({"cue": "x", "strategies": ["similarity"]})
    assert plain.strategies == (Strategy.SIMILARITY,) and plain.preset is None and plain.fusion == PLAIN_FUSION
    assert not plain.fused


def test_engine_recall_without_strategies_ranks_as_the_default_preset(engine: MemoryEngine) -> None:
    engine.remember_many([{"content": c} for c in (
        "Priya went hiking in the Dolomites last summer",
        "Tomas adopted a grey rescue cat",
        "Aiko started learning the cello",
        "Lena baked sourdough bread on Sunday",
    )])
    by_default = engine.retrieve(build_request("where did Priya go hiking"))
    by_name = engine.retrieve(build_request("where did Priya go hiking", preset=DEFAULT_PRESET.name))
    assert [(r.memory.id, r.score) for r in by_default] == [(r.memory.id, r.score) for r in by_name]
    counted = engine.recall("where did Priya go hiking", top_k=1)
    assert counted[0].memory.content.startswith("Priya went hiking")
    assert {d.strategy for d in counted[0].strategy_details} == set(DEFAULT_PRESET.strategies)


class _WaitsForTextSearch:
    """The real model, but a cue's embedding waits (up to 30 s) until a BM25 search has begun: it returns at
    once if the lexical searches run while the cue is embedded, and only after the timeout if they wait for it."""

    def __init__(self, inner: Embedder, searched: threading.Event) -> None:
        self.inner, self.name, self.searched = inner, inner.name, searched
        self.waited: list[bool] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.waited.append(self.searched.wait(timeout=30))
        return self.inner.encode(texts)


def test_the_default_recalls_text_search_runs_while_the_cue_is_embedded(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = MemoryEngine(data_dir, embedder=embedder, clock=clock)
    try:
        engine.remember_many([{"content": "Priya went hiking in the Dolomites"}, {"content": "Tomas adopted a cat"}])
        plain = engine.retrieve(build_request("where did Priya go hiking"))
        searched = threading.Event()
        postings = engine._indexes.lexical_postings()  # noqa: SLF001 - the search whose timing is under test
        assert postings is not None
        search = postings.search

        def search_and_tell(*args: Any) -> list[tuple[str, float]]:
            searched.set()
            return search(*args)

        monkeypatch.setattr(postings, "search", search_and_tell)
        slow = _WaitsForTextSearch(embedder, searched)
        monkeypatch.setattr(engine._writer, "embedder", slow)  # noqa: SLF001
        overlapped = engine.retrieve(build_request("where did Priya go hiking"))
        assert slow.waited == [True]
        assert [(r.memory.id, r.score) for r in overlapped] == [(r.memory.id, r.score) for r in plain]
    finally:
        engine.close()
