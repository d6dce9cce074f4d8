"""Recall lab: a weight change re-ranks the retrieved candidates as the formula says, with no new retrieval."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from engine import PRESETS, MemoryEngine, RecallResult, ScoringWeights
from engine.recall.scoring import composite
from tests.workbench.conftest import MakeApp, Store, open_engine
from tests.workbench.helpers import plain, recall, table

WEIGHT_KEYS = ("lab_w_relevance", "lab_w_recency", "lab_w_importance", "lab_w_reinforcement")


def table_ids(at: AppTest) -> list[str]:
    return list(table(at, "lab_table")["id"])


def set_weights(at: AppTest, *values: float) -> AppTest:
    for key, value in zip(WEIGHT_KEYS, values, strict=True):
        at.slider(key=key).set_value(value)
    return at.run()


def preset_shown(at: AppTest) -> str:
    """The preset named under the sliders ("custom" when the weights match none)."""
    caption = next(c.value for c in at.sidebar.caption if c.value.startswith("Preset:"))
    return caption.split("**")[1]


def expected_order(results: list[RecallResult], weights: ScoringWeights) -> list[str]:
    """The composite formula applied by hand to the signals the lab shows."""
    scored = [(composite(r.signals, weights), r.signals.relevance, r.memory.id) for r in results]
    return [memory_id for _, _, memory_id in sorted(scored, key=lambda s: (-s[0], -s[1], s[2]))]


@pytest.fixture
def lab(make_app: MakeApp, scratch_store: Store) -> tuple[AppTest, MemoryEngine]:
    path, _ = scratch_store
    at = recall(make_app(path), "the launch failed because testing was skipped", lab_top_k=12)
    assert not at.exception and not at.error
    return at, open_engine(path)


def test_recall_shows_ranked_results_with_contribution_bars(lab: tuple[AppTest, MemoryEngine]) -> None:
    at, _ = lab
    frame = table(at, "lab_table")
    assert len(frame) == 12
    assert list(frame["rank"]) == list(range(1, 13))
    assert list(frame["score"]) == sorted(frame["score"], reverse=True)
    assert set(frame["move"]) == {"="}  # default weights: nobody moved
    assert at.get_by_key("lab_bars") is not None  # the stacked contribution bars


def test_a_weight_change_reorders_as_the_formula_predicts(lab: tuple[AppTest, MemoryEngine]) -> None:
    at, _ = lab
    results: list[RecallResult] = at.session_state["lab_results"]
    before = table_ids(at)
    assert before == expected_order(results, PRESETS["default"])

    set_weights(at, 0.0, 0.0, 1.0, 0.0)  # importance only
    after = table_ids(at)
    assert after == expected_order(results, ScoringWeights(0.0, 0.0, 1.0, 0.0))
    assert after != before
    assert preset_shown(at) == "custom"

    frame = table(at, "lab_table")
    for rank, (memory_id, move) in enumerate(zip(frame["id"], frame["move"], strict=True), start=1):
        moved = before.index(memory_id) + 1 - rank
        assert move == ("=" if moved == 0 else f"▲ {moved}" if moved > 0 else f"▼ {-moved}")
    scores = {r.memory.id: composite(r.signals, ScoringWeights(0.0, 0.0, 1.0, 0.0)) for r in results}
    assert list(frame["score"]) == [round(scores[i], 4) for i in frame["id"]]


def test_moving_a_slider_neither_retrieves_nor_counts_a_recall(
    lab: tuple[AppTest, MemoryEngine], monkeypatch: pytest.MonkeyPatch
) -> None:
    at, engine = lab
    ids = table_ids(at)
    counts = {i: m.access_count for i, m in engine.get_many(ids).items()}
    assert set(counts.values()) == {1}  # the recall itself counted once

    calls: list[str] = []

    def counting(name: str) -> Callable[..., object]:
        original = getattr(engine, name)

        def wrapper(*args: object, **kwargs: object) -> object:
            calls.append(name)
            return original(*args, **kwargs)

        return wrapper

    for name in ("retrieve", "recall"):
        monkeypatch.setattr(engine, name, counting(name))
    set_weights(at, 1.0, 0.0, 0.0, 0.0)
    set_weights(at, 0.2, 0.5, 0.3, 0.0)
    assert calls == []
    assert {i: m.access_count for i, m in engine.get_many(ids).items()} == counts


def test_presets_set_the_sliders(lab: tuple[AppTest, MemoryEngine]) -> None:
    at, _ = lab
    at.button(key="lab_preset_recency_biased").click().run()
    assert tuple(at.slider(key=k).value for k in WEIGHT_KEYS) == PRESETS["recency-biased"].as_tuple()
    assert preset_shown(at) == "recency-biased"
    at.button(key="lab_preset_pure_relevance").click().run()
    assert tuple(at.slider(key=k).value for k in WEIGHT_KEYS) == (1.0, 0.0, 0.0, 0.0)
    results: list[RecallResult] = at.session_state["lab_results"]
    assert table_ids(at) == expected_order(results, PRESETS["pure relevance"])
    at.button(key="lab_preset_default").click().run()
    assert tuple(at.slider(key=k).value for k in WEIGHT_KEYS) == PRESETS["default"].as_tuple()


def test_strategy_details_appear_for_each_strategy(
    make_app: MakeApp, scratch_store: Store
) -> None:
    path, ids = scratch_store
    at = make_app(path)
    at = recall(at, "why did the Atlas launch fail", ["similarity", "causal", "temporal", "analogical"],
                lab_entity="atlas-launch", lab_seed=ids["atlas_crash"], lab_max_depth=2, lab_top_k=30)
    assert not at.exception and not at.error, [e.value for e in at.error]
    details = table(at, "lab_details")
    assert set(details["strategy"]) == {"similarity", "causal", "temporal", "analogical"}
    ranks = dict(zip(table_ids(at), range(1, 100), strict=False))
    assert list(details["#"]) == sorted(details["#"])  # in the current ranking's order
    assert all(ranks[i] == n for i, n in zip(details["id"], details["#"], strict=True))
    causal = details[(details["id"] == ids["atlas_refunds"]) & (details["strategy"] == "causal")].iloc[0]
    assert causal["seed_id"] == ids["atlas_crash"]
    assert causal["path"] == f"{ids['atlas_crash']} → {ids['atlas_refunds']}"
    assert causal["edge_type"] == "caused_by"
    temporal = details[(details["id"] == ids["atlas_refunds"]) & (details["strategy"] == "temporal")].iloc[0]
    assert temporal["timestamp"].startswith("2026-02-12")

    # one result in full: its content, its score signal by signal, and its details
    at.selectbox(key="lab_focus").set_value(ids["atlas_refunds"]).run()
    assert any(t.value.startswith("Customers filed hundreds") for t in at.text)
    breakdown = table(at, "lab_breakdown")
    assert list(breakdown["signal"]) == ["relevance", "recency", "importance", "reinforcement"]
    result = next(r for r in at.session_state["lab_results"] if r.memory.id == ids["atlas_refunds"])
    assert breakdown["contribution"].sum() == pytest.approx(result.score, abs=1e-3)
    assert set(table(at, "lab_focus_details")["strategy"]) == {"similarity", "causal", "temporal", "analogical"}


def test_the_temporal_strategy_without_an_entity_is_a_readable_error(
    make_app: MakeApp, scratch_store: Store
) -> None:
    path, _ = scratch_store
    at = recall(make_app(path), "anything", ["temporal"])
    assert not at.exception
    assert "temporal strategy needs an entity_id" in plain(at.error[0].value)


def test_weights_survive_a_page_switch(lab: tuple[AppTest, MemoryEngine]) -> None:
    at, _ = lab
    set_weights(at, 0.1, 0.2, 0.3, 0.4)
    at.switch_page("pages/timeline.py").run()
    at.switch_page("pages/recall_lab.py").run()
    assert tuple(at.slider(key=k).value for k in WEIGHT_KEYS) == (0.1, 0.2, 0.3, 0.4)
    assert len(table_ids(at)) == 12


def test_the_recommended_preset_and_the_lexical_strategy(make_app: MakeApp, scratch_store: Store) -> None:
    path, _ = scratch_store
    at = recall(make_app(path), "launch testing skipped", lab_preset="recommended")
    assert not at.exception and not at.error
    assert at.session_state["lab_strategies_ran"] == ["similarity", "lexical"]
    details = {d.strategy.value for r in at.session_state["lab_results"] for d in r.strategy_details}
    assert "lexical" in details
    at = recall(make_app(path), "launch testing skipped", ["lexical"])
    assert not at.exception and not at.error
    results: list[RecallResult] = at.session_state["lab_results"]
    assert results and all(d.strategy.value == "lexical" for r in results for d in r.strategy_details)
