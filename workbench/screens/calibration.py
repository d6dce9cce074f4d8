"""Calibration: how a cue's fused evidence becomes relevance, and what each weight does to the ranking.

The default recall (the `recommended` preset) adds several signals' evidence; engine/recall/calibration.py
maps it to a relevance in [0, 1] (docs/calibration.md). This page shows one cue's candidate pool on that curve
and ranks it under the weights in the sidebar. Read-only: nothing here counts as a recall.
"""

from __future__ import annotations

import streamlit as st

from engine import ScoringWeights, config
from engine.recall import calibration_fit
from engine.recall.presets import DEFAULT_PRESET
from engine.recall.scoring import DEFAULT_WEIGHTS, WEIGHT_NAMES
from workbench import calibration_view, explain, urlstate, views
from workbench.session import attempt, current_engine, require_memories, show_table

FIELDS = [
    urlstate.Field("cal_cue", "cue"),
    urlstate.Field("cal_top_k", "top_k", "int"),
    *(urlstate.Field(f"cal_{name}", name.removeprefix("w_"), "float") for name in WEIGHT_NAMES),
]
DEFAULTS = {"cal_cue": "", "cal_top_k": config.DEFAULT_TOP_K,
            **{f"cal_{name}": float(v) for name, v in DEFAULT_WEIGHTS.to_dict().items()}}


def main() -> None:
    st.title("Calibration")
    engine = current_engine()
    require_memories(engine)
    urlstate.restore("calibration", FIELDS)
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    sb = st.sidebar
    cue = sb.text_input("Cue", key="cal_cue", placeholder="e.g. why did the launch fail?").strip()
    top_k = int(sb.number_input("top_k", 1, calibration_view.POOL_SHOWN, key="cal_top_k"))
    sb.subheader("Weights", help=explain.COMPOSITE)
    for name in WEIGHT_NAMES:
        sb.slider(name.removeprefix("w_"), 0.0, 1.0, step=0.05, key=f"cal_{name}", help=explain.WEIGHT_HELP[name])
    weights = ScoringWeights.from_mapping({n: float(st.session_state[f"cal_{n}"]) for n in WEIGHT_NAMES})
    urlstate.publish(FIELDS, DEFAULTS)
    st.caption(f"The default recall (`{DEFAULT_PRESET.name}`) fuses its signals' evidence; relevance = "
               f"logistic({calibration_fit.SLOPE:g} × z {calibration_fit.INTERCEPT:+g}), z = the fused score in "
               "standard deviations over the cue's pool (fitted on LoCoMo's tuning half; docs/calibration.md).")
    if not cue:
        st.info("Type a cue in the sidebar to see its candidate pool on the calibration curve.",
                icon=":material/lightbulb:")
        return
    pool = attempt(calibration_view.pool_frame, engine, cue, action="Could not read the pool")
    if pool is None:
        return
    if pool.empty:
        st.info("No candidates for this cue.", icon=":material/search:")
        return
    order = calibration_view.ranked(pool, weights)
    in_top = {i: r < top_k for r, i in enumerate(order["id"])}
    st.subheader("Fused evidence → calibrated relevance")
    st.plotly_chart(calibration_view.curve_figure(pool, in_top), key="cal_curve", width="stretch")
    st.subheader("What each weight does to the top_k")
    show_table(calibration_view.weight_effects(pool, weights, top_k), "cal_effects")
    st.subheader(f"Top {top_k} under these weights")
    shown = order.head(top_k)[["rank", "relevance_rank", "score", "relevance part", "recency part", "importance part",
                                "reinforcement part", "fused_z", "content"]].round(3)
    show_table(shown.assign(content=[views.snippet(c, 70) for c in shown["content"]]), "cal_ranking")


main()
