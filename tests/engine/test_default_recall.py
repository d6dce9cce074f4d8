"""One default recall: a request that names neither strategies nor a preset runs `DEFAULT_PRESET` (the CLI,
REST and gRPC send exactly that: tests/test_cli.py, tests/test_contract.py and the transport contract)."""

from __future__ import annotations

from engine import MemoryEngine, build_request
from engine.api.requests import RecallRequest
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
