"""Recall lab: a weight change re-ranks the retrieved candidates as the formula says, with no new retrieval."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from engine import WEIGHT_PRESETS, MemoryEngine, RecallResult, ScoringWeights
from engine.recall.presets import DEFAULT_PRESET
from engine.recall.scoring import composite
from tests.workbench.conftest import MakeApp, Store, open_engine
from tests.workbench.helpers import NO_PRESET, plain, recall, table

WEIGHT_KEYS = ("lab_w_relevance", "lab_w_recency", "lab_w_importance", "lab_w_reinforcement")


def table_ids(at: AppTest) -> list[str]:
    return list(table(at, "lab_table")["id"])


def url_values(at: AppTest, name: str) -> list[str]:
    """A query parameter's values as the page wrote them (one value or several)."""
    value = at.query_params.get(name, [])
    return list(value) if isinstance(value, list | tuple) else [value]


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
    assert before == expected_order(results, WEIGHT_PRESETS["default"])

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
    assert set(counts.values()) == {0}  # exploring (the default) counts nothing

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
    assert tuple(at.slider(key=k).value for k in WEIGHT_KEYS) == WEIGHT_PRESETS["recency-biased"].as_tuple()
    assert preset_shown(at) == "recency-biased"
    at.button(key="lab_preset_pure_relevance").click().run()
    assert tuple(at.slider(key=k).value for k in WEIGHT_KEYS) == (1.0, 0.0, 0.0, 0.0)
    results: list[RecallResult] = at.session_state["lab_results"]
    assert table_ids(at) == expected_order(results, WEIGHT_PRESETS["pure relevance"])
    at.button(key="lab_preset_default").click().run()
    assert tuple(at.slider(key=k).value for k in WEIGHT_KEYS) == WEIGHT_PRESETS["default"].as_tuple()


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
    assert set(table(at, "lab_one_details")["strategy"]) == {"similarity", "causal", "temporal", "analogical"}


def test_the_lab_explores_without_counting_unless_asked(make_app: MakeApp, scratch_store: Store) -> None:
    path, _ = scratch_store
    engine = open_engine(path)
    at = recall(make_app(path), "why did the launch fail")
    first = table(at, "lab_table")[["id", "score"]].values.tolist()
    assert any("Explored, not counted" in c.value for c in at.caption)
    at = at.button(key="lab_run").click().run()
    assert table(at, "lab_table")[["id", "score"]].values.tolist() == first  # same cue, same scores and order
    assert {m.access_count for m in engine.get_many([i for i, _ in first]).values()} == {0}
    at.toggle(key="lab_count").set_value(True)
    at = at.button(key="lab_run").click().run()
    assert any("Counted as a real recall" in c.value for c in at.caption)
    assert {m.access_count for m in engine.get_many([i for i, _ in first]).values()} == {1}


def test_temporal_follows_the_entity_the_cue_names(make_app: MakeApp, scratch_store: Store) -> None:
    path, _ = scratch_store
    at = recall(make_app(path), "what happened in the atlas launch", ["temporal"])
    assert not at.exception and not at.error
    assert set(table(at, "lab_table")["entity"]) == {"atlas-launch"}
    assert any("named in the cue" in plain(c.value) for c in at.sidebar.caption)


def test_all_four_strategies_without_an_entity_leave_temporal_out_and_say_so(
    make_app: MakeApp, scratch_store: Store
) -> None:
    path, _ = scratch_store
    at = recall(make_app(path), "a deal that was lost", ["similarity", "temporal", "causal", "analogical"])
    assert not at.exception and not at.error
    assert any("leaves it out" in plain(c.value) for c in at.sidebar.caption)
    assert len(table(at, "lab_table")) > 0


def test_temporal_alone_without_any_entity_says_what_to_do(make_app: MakeApp, scratch_store: Store) -> None:
    path, _ = scratch_store
    at = recall(make_app(path), "anything", ["temporal"])
    assert not at.exception and not at.error
    assert any("pick the entity" in plain(i.value) for i in at.info)


def test_weights_survive_a_page_switch(lab: tuple[AppTest, MemoryEngine]) -> None:
    at, _ = lab
    set_weights(at, 0.1, 0.2, 0.3, 0.4)
    at.switch_page("screens/timeline.py").run()
    at.switch_page("screens/recall_lab.py").run()
    assert tuple(at.slider(key=k).value for k in WEIGHT_KEYS) == (0.1, 0.2, 0.3, 0.4)
    assert len(table_ids(at)) == 12


def test_inputs_survive_a_page_switch_and_go_into_the_url(lab: tuple[AppTest, MemoryEngine]) -> None:
    at, _ = lab
    at.selectbox(key="lab_preset").set_value(NO_PRESET).run()
    at.multiselect(key="lab_strategies").set_value(["similarity", "analogical"]).run()
    at.slider(key="lab_alpha").set_value(0.3).run()
    assert url_values(at, "strategy") == ["similarity", "analogical"]
    assert url_values(at, "alpha") == ["0.3"]
    assert url_values(at, "cue") == ["the launch failed because testing was skipped"]
    at.switch_page("screens/timeline.py").run()
    at.switch_page("screens/recall_lab.py").run()
    assert at.text_input(key="lab_cue").value == "the launch failed because testing was skipped"
    assert at.multiselect(key="lab_strategies").value == ["similarity", "analogical"]
    assert at.slider(key="lab_alpha").value == 0.3
    # the strategies changed after the recall: its results are still shown, marked stale
    assert any("inputs changed" in w.value for w in at.warning)


def test_a_link_restores_the_view(make_app: MakeApp, scratch_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = scratch_store
    monkeypatch.setenv("HEBBS_DATA_DIR", str(path))
    from tests.workbench.conftest import APP, APP_TIMEOUT

    at = AppTest.from_file(str(APP), default_timeout=APP_TIMEOUT)
    at.query_params.update({"cue": "checkout crashed", "strategy": ["similarity", "bogus"], "importance": "0.6",
                            "top_k": "5"})
    at.run()
    assert not at.exception and not at.error
    assert at.text_input(key="lab_cue").value == "checkout crashed"
    assert at.multiselect(key="lab_strategies").value == ["similarity"]  # an unknown value is ignored
    assert at.selectbox(key="lab_preset").value == NO_PRESET  # a link naming strategies runs them
    assert at.slider(key="lab_w_importance").value == 0.6
    assert at.number_input(key="lab_top_k").value == 5
    # and the results: re-run once, without counting, and not marked stale
    ids = list(table(at, "lab_table")["id"])
    assert len(ids) == 5 and not at.warning
    assert {m.access_count for m in open_engine(path).get_many(ids).values()} == {0}


def test_enter_in_the_cue_runs_the_recall(make_app: MakeApp, scratch_store: Store) -> None:
    path, _ = scratch_store
    at = make_app(path)
    at.text_input(key="lab_cue").set_value("Helix thermostats overheating").run()  # no button click
    assert not at.exception and not at.error
    assert len(table_ids(at)) == 10
    assert "Helix" in table(at, "lab_table")["content"].iloc[0]


def test_all_zero_weights_warn(lab: tuple[AppTest, MemoryEngine]) -> None:
    at, _ = lab
    set_weights(at, 0.0, 0.0, 0.0, 0.0)
    assert any("All weights are 0" in w.value for w in at.warning)


def test_temporal_results_are_in_time_order_with_a_date(make_app: MakeApp, scratch_store: Store) -> None:
    path, _ = scratch_store
    at = recall(make_app(path), "", ["temporal"], lab_entity="atlas-launch")
    assert not at.exception and not at.error
    frame = table(at, "lab_table")
    assert len(frame) == 6
    assert list(frame["created"]) == sorted(frame["created"])
    at.radio(key="lab_order").set_value("score").run()
    frame = table(at, "lab_table")
    assert list(frame["score"]) == sorted(frame["score"], reverse=True)


def test_a_short_id_is_a_seed(make_app: MakeApp, scratch_store: Store) -> None:
    path, ids = scratch_store
    at = recall(make_app(path), "what happened next", ["causal"], lab_seed=ids["atlas_crash"][-8:].lower(),
                lab_max_depth=1)
    assert not at.exception and not at.error, [e.value for e in at.error]
    details = table(at, "lab_details")
    assert set(details["seed_id"]) == {ids["atlas_crash"]}


def test_a_historical_as_of_gives_recency_back(lab: tuple[AppTest, MemoryEngine]) -> None:
    at, _ = lab
    assert any("Recency is 0 for all results" in i.value for i in at.info)
    from datetime import date

    at.date_input(key="lab_as_of").set_value(date(2026, 2, 20)).run()
    assert not any("Recency is 0 for all results" in i.value for i in at.info)
    assert table(at, "lab_table")["recency"].max() > 0


def test_the_recommended_preset_and_the_lexical_strategy(make_app: MakeApp, scratch_store: Store) -> None:
    path, _ = scratch_store
    at = recall(make_app(path), "launch testing skipped")  # the lab starts from the one default preset
    assert not at.exception and not at.error
    assert at.selectbox(key="lab_preset").value == DEFAULT_PRESET.name
    assert at.session_state["lab_strategies_ran"] == [s.value for s in DEFAULT_PRESET.strategies]
    assert at.session_state["lab_strategies_ran"] == ["similarity", "lexical"]
    details = {d.strategy.value for r in at.session_state["lab_results"] for d in r.strategy_details}
    assert "lexical" in details
    at = recall(make_app(path), "launch testing skipped", ["lexical"])
    assert not at.exception and not at.error
    results: list[RecallResult] = at.session_state["lab_results"]
    assert results and all(d.strategy.value == "lexical" for r in results for d in r.strategy_details)
