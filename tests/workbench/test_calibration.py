"""Calibration page: a cue's fused pool on the calibration curve, ranked under the sidebar's weights."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from engine.recall import calibration
from tests.workbench.conftest import MakeApp, Store
from tests.workbench.helpers import table

CUE = "why did the Atlas launch crash"


def show(at: AppTest, cue: str, **weights: float) -> AppTest:
    at.text_input(key="cal_cue").set_value(cue)
    for name, value in weights.items():
        at.slider(key=f"cal_{name}").set_value(value)
    return at.run()


def test_the_pool_sits_on_the_curve_and_the_weights_rank_it(make_app: MakeApp, seeded_store: Store) -> None:
    path, _ = seeded_store
    at = show(make_app(path, "calibration"), CUE)
    assert not at.exception and not at.error
    ranking = table(at, "cal_ranking")
    assert len(ranking) == 10
    # the shown relevance is the calibration of the shown evidence, and falls with it
    for part, z in zip(ranking["relevance part"], ranking["fused_z"], strict=True):
        assert abs(part - 0.5 * float(calibration.from_z(z))) < 2e-3
    assert "Atlas" in ranking.iloc[0]["content"]
    effects = table(at, "cal_effects")
    assert list(effects["weight"]) == ["w_relevance", "w_recency", "w_importance", "w_reinforcement"]
    assert effects.set_index("weight").loc["w_relevance", "top_k changed without it"] > 0

    # relevance alone: the ranking is the relevance order, and no other weight changes the top_k
    alone = show(at, CUE, w_relevance=1.0, w_recency=0.0, w_importance=0.0, w_reinforcement=0.0)
    ranking = table(alone, "cal_ranking")
    assert list(ranking["relevance_rank"]) == list(range(1, 11))
    effects = table(alone, "cal_effects").set_index("weight")
    assert effects.loc["w_recency", "top_k changed without it"] == 0

    # importance alone: the most important memories lead, whatever the cue
    heavy = table(show(at, CUE, w_relevance=0.0, w_importance=1.0), "cal_ranking")
    assert list(heavy["importance part"]) == sorted(heavy["importance part"], reverse=True)


def test_no_cue_asks_for_one(make_app: MakeApp, seeded_store: Store) -> None:
    path, _ = seeded_store
    at = make_app(path, "calibration")
    assert not at.exception
    assert "Type a cue" in at.info[0].value
