"""Recall lab: run a recall, then tune the four weights and watch the ranking move (no new retrieval)."""

from __future__ import annotations

from datetime import date
from typing import Any

import streamlit as st

from engine import PRESETS, MemoryEngine, RecallResult, ScoringWeights, build_request, config
from engine.models import EdgeType, Strategy
from engine.recall.presets import PRESETS as RECALL_PRESETS
from engine.recall.scoring import WEIGHT_NAMES
from workbench import views
from workbench.session import RECALLING, attempt, current_engine, require_memories, show_table

WEIGHT_LABELS = {
    "w_relevance": "relevance",
    "w_recency": "recency",
    "w_importance": "importance",
    "w_reinforcement": "reinforcement",
}
CUSTOM = "custom"
NO_ENTITY = "(choose an entity)"


def _init_weights() -> None:
    """Slider state survives page switches through a plain (non-widget) copy."""
    saved = st.session_state.get("lab_weights", PRESETS["default"].to_dict())
    for name in WEIGHT_NAMES:
        st.session_state.setdefault(f"lab_{name}", float(saved[name]))


def _apply_preset(preset: str) -> None:
    for name, value in PRESETS[preset].to_dict().items():
        st.session_state[f"lab_{name}"] = value


def preset_key(preset: str) -> str:
    return "lab_preset_" + preset.replace(" ", "_").replace("-", "_")


def preset_of(weights: ScoringWeights) -> str:
    """The name of the preset these weights match, or "custom"."""
    return next((name for name, w in PRESETS.items() if w.as_tuple() == weights.as_tuple()), CUSTOM)


def weight_controls() -> ScoringWeights:
    """Preset buttons and the four weight sliders; returns the chosen weights.

    Presets are buttons (they only set the sliders), so a fast series of slider moves never races
    with a second stateful widget.
    """
    _init_weights()
    st.sidebar.subheader("Weights")
    with st.sidebar.container(horizontal=True, gap="small"):
        for preset in PRESETS:
            st.button(preset, key=preset_key(preset), on_click=_apply_preset, args=(preset,), width="content",
                      help=" / ".join(f"{v:g}" for v in PRESETS[preset].as_tuple()))
    for name in WEIGHT_NAMES:
        st.sidebar.slider(WEIGHT_LABELS[name], 0.0, 1.0, step=0.05, key=f"lab_{name}")
    values = {name: float(st.session_state[f"lab_{name}"]) for name in WEIGHT_NAMES}
    st.session_state["lab_weights"] = values
    weights = ScoringWeights.from_mapping(values)
    st.sidebar.caption(f"Preset: **{preset_of(weights)}** (default 0.5 / 0.2 / 0.2 / 0.1)")
    return weights


NO_PRESET = "none (the strategies above)"


def retrieval_controls(engine: MemoryEngine) -> dict[str, Any]:
    """Cue, strategies and each chosen strategy's parameters, as `build_request` keyword arguments."""
    sb = st.sidebar
    cue = sb.text_input("Cue", key="lab_cue", placeholder="e.g. why did the launch fail?")
    strategies = sb.multiselect(
        "Strategies", [s.value for s in Strategy], default=[Strategy.SIMILARITY.value], key="lab_strategies"
    )
    preset = sb.selectbox("Recall preset", [NO_PRESET, *RECALL_PRESETS], key="lab_preset",
                          help="A named recipe of strategies and fusion (it replaces the strategies above); "
                          "`recommended` is what `hebbs recall` runs by default.")
    top_k = sb.number_input("top_k", 1, config.MAX_TOP_K, config.DEFAULT_TOP_K, key="lab_top_k")
    params: dict[str, Any] = {"cue": cue, "strategies": strategies, "top_k": int(top_k)}
    if preset != NO_PRESET:
        params.update(preset=preset, strategies=None)
        strategies = list(RECALL_PRESETS[preset].strategies)
    if Strategy.SIMILARITY.value in strategies or Strategy.ANALOGICAL.value in strategies:
        params["ef_search"] = int(
            sb.number_input("ef_search", 1, config.MAX_EF_SEARCH, config.DEFAULT_EF_SEARCH, key="lab_ef_search")
        )
    if Strategy.TEMPORAL.value in strategies:
        entities = attempt(engine.entities, action="Could not list entities") or []
        entity = sb.selectbox("Entity", [NO_ENTITY, *entities], key="lab_entity")
        params["entity_id"] = None if entity == NO_ENTITY else entity
        start = sb.date_input("From", value=None, key="lab_start")
        end = sb.date_input("To", value=None, key="lab_end")
        if start is not None or end is not None:
            params["time_range"] = (_iso(start), _iso(end))
    if Strategy.CAUSAL.value in strategies:
        params["seed_memory_id"] = sb.text_input(
            "Seed memory id", key="lab_seed", help="Leave empty to start from the memory nearest to the cue."
        ).strip() or None
        params["max_depth"] = sb.slider("Max depth", 1, config.MAX_DEPTH_CAP, config.DEFAULT_MAX_DEPTH,
                                        key="lab_max_depth")
        types = sb.multiselect("Edge types", [t.value for t in EdgeType], key="lab_edge_types",
                               placeholder="all edge types")
        params["edge_types"] = types or None
    if Strategy.ANALOGICAL.value in strategies:
        params["analogical_alpha"] = sb.slider(
            "Alpha (0 = structure only, 1 = embedding only)", 0.0, 1.0, config.DEFAULT_ANALOGICAL_ALPHA,
            step=0.05, key="lab_alpha",
        )
    return params


def _iso(day: date | None) -> str | None:
    return None if day is None else day.isoformat()


def run_recall(engine: MemoryEngine, params: dict[str, Any], weights: ScoringWeights) -> None:
    """One counted recall; its candidates are kept for re-ranking."""
    request = attempt(build_request, **params, scoring_weights=weights, action="Invalid recall")
    if request is None:
        return
    with st.spinner(RECALLING):
        results = attempt(engine.recall, request, action="Recall failed")
    if results is not None:
        st.session_state["lab_results"] = results
        st.session_state.pop("lab_details", None)
        st.session_state["lab_cue_ran"] = request.cue
        st.session_state["lab_strategies_ran"] = [s.value for s in request.strategies]


def show_results(results: list[RecallResult], weights: ScoringWeights) -> None:
    """Re-rank the kept candidates under `weights` (pure) and show table, bars and strategy details."""
    ranked = MemoryEngine.rescore(results, weights)
    baseline = MemoryEngine.rescore(results, PRESETS["default"])
    moves = views.rank_moves(baseline, ranked)
    ids = [r.memory.id for r in ranked]
    st.session_state["lab_ranked_ids"] = ids

    ran = ", ".join(st.session_state.get("lab_strategies_ran", []))
    st.caption(
        f"{len(ranked)} candidates from “{views.md_escape(st.session_state.get('lab_cue_ran', ''))}” ({ran}), "
        f"ranked by {weights.w_relevance:.2f}·relevance + {weights.w_recency:.2f}·recency + "
        f"{weights.w_importance:.2f}·importance + {weights.w_reinforcement:.2f}·reinforcement. "
        "Arrows: places moved from the ranking under the default weights."
    )
    show_table(views.results_frame(ranked, moves), "lab_table",
               column_config={"content": st.column_config.TextColumn(width="large")})
    st.subheader("Score breakdown")
    st.plotly_chart(views.contributions_figure(ranked, weights), key="lab_bars", width="stretch")
    st.subheader("Strategy details")
    details = st.session_state.get("lab_details")
    if details is None:
        details = st.session_state["lab_details"] = views.details_table(results)
    show_table(views.details_in_rank_order(details, ids), "lab_details")
    show_one(ranked, moves, details, weights)


def show_one(ranked: list[RecallResult], moves: dict[str, int], details: Any, weights: ScoringWeights) -> None:
    """One result in full: its content, its score signal by signal, and what each strategy saw."""
    st.subheader("One result")
    by_id = {r.memory.id: (rank, r) for rank, r in enumerate(ranked, start=1)}
    if st.session_state.get("lab_focus") not in by_id:
        st.session_state["lab_focus"] = ranked[0].memory.id
    labels = {i: f"#{rank} {views.arrow(moves.get(i, 0))} · {views.snippet(r.memory.content, 90)}"
              for i, (rank, r) in by_id.items()}
    focus = st.selectbox("Result", list(by_id), key="lab_focus", format_func=labels.__getitem__)
    rank, result = by_id[focus]
    st.text(result.memory.content)
    left, right = st.columns([2, 3])
    with left:
        show_table(views.breakdown_frame(result, weights), "lab_breakdown")
    with right:
        show_table(details[details["id"] == focus].drop(columns=["id"]), "lab_focus_details")
    entity = views.md_escape(result.memory.entity_id or "—")
    st.caption(f"#{rank} · score {result.score:.4f} · id {result.memory.id} · entity {entity} · "
               f"kind {result.memory.kind.value}")


def main() -> None:
    st.title("Recall lab")
    engine = current_engine()
    require_memories(engine)
    params = retrieval_controls(engine)
    run = st.sidebar.button("Recall", type="primary", key="lab_run", width="stretch")
    weights = weight_controls()
    if run:
        run_recall(engine, params, weights)
    results: list[RecallResult] | None = st.session_state.get("lab_results")
    if not results:
        if "lab_results" in st.session_state:
            st.info("The recall found nothing: try another cue, more strategies or a larger top_k.",
                    icon=":material/search:")
        else:
            st.info("Type a cue in the sidebar and press **Recall**. Then move the weight sliders: the "
                    "results re-rank at once, without a new retrieval.", icon=":material/lightbulb:")
        return
    show_results(results, weights)


main()
