"""Recall lab: run a recall, then tune the four weights and watch the ranking move (no new retrieval).

Every input lives in the session and in the URL (a view is a link); results that no longer match the
inputs are marked stale until the next recall.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

import pandas as pd
import streamlit as st

from engine import WEIGHT_PRESETS, MemoryEngine, RecallResult, ScoringWeights, build_request, config
from engine.models import EdgeType, Strategy
from engine.recall.presets import DEFAULT_PRESET
from engine.recall.presets import PRESETS as RECALL_PRESETS
from engine.recall.scoring import WEIGHT_NAMES
from workbench import components, explain, review_view, urlstate, views
from workbench.session import attempt, current_engine, recalling, require_memories, show_table

WEIGHT_LABELS = {
    "w_relevance": "relevance",
    "w_recency": "recency",
    "w_importance": "importance",
    "w_reinforcement": "reinforcement",
}
CUSTOM = "custom"
NO_ENTITY = "(the entities named in the cue)"
NEAREST = ""  # seed: the memory nearest to the cue
ORDER_TIME = "time"
ORDER_SCORE = "score"
CHART_ROWS = 25  # the score chart shows at most this many results, so it stays a readable height
STRATEGY_NAMES = [s.value for s in Strategy]
NO_PRESET = "none (the strategies above)"
PRESET_NAMES = [NO_PRESET, *RECALL_PRESETS]
EDGE_TYPE_NAMES = [t.value for t in EdgeType]

FIELDS = [
    urlstate.Field("lab_cue", "cue"),
    urlstate.Field("lab_strategies", "strategy", "list", choices=lambda: STRATEGY_NAMES),
    urlstate.Field("lab_preset", "preset", choices=lambda: PRESET_NAMES),
    urlstate.Field("lab_top_k", "top_k", "int"),
    urlstate.Field("lab_ef_search", "ef_search", "int"),
    urlstate.Field("lab_entity", "entity"),
    urlstate.Field("lab_start", "from", "date"),
    urlstate.Field("lab_end", "to", "date"),
    urlstate.Field("lab_seed", "seed"),
    urlstate.Field("lab_max_depth", "max_depth", "int"),
    urlstate.Field("lab_edge_types", "edge_type", "list", choices=lambda: EDGE_TYPE_NAMES),
    urlstate.Field("lab_alpha", "alpha", "float"),
    urlstate.Field("lab_order", "order", choices=lambda: [ORDER_TIME, ORDER_SCORE]),
    urlstate.Field("lab_as_of", "as_of", "date"),
    *(urlstate.Field(f"lab_{name}", name.removeprefix("w_"), "float") for name in WEIGHT_NAMES),
]
DEFAULTS: dict[str, Any] = {
    "lab_cue": "",
    "lab_strategies": [Strategy.SIMILARITY.value],
    "lab_preset": DEFAULT_PRESET.name,
    "lab_top_k": config.DEFAULT_TOP_K,
    "lab_ef_search": config.DEFAULT_EF_SEARCH,
    "lab_entity": NO_ENTITY,
    "lab_seed": NEAREST,
    "lab_max_depth": config.DEFAULT_MAX_DEPTH,
    "lab_edge_types": [],
    "lab_alpha": config.DEFAULT_ANALOGICAL_ALPHA,
    "lab_order": ORDER_TIME,
    **{f"lab_{name}": float(value) for name, value in WEIGHT_PRESETS["default"].to_dict().items()},
}


def _init() -> None:
    """Restore inputs (this session's copy, else the URL), then fill the rest with defaults."""
    urlstate.restore("lab", FIELDS)
    if "lab_preset" not in st.session_state and st.query_params.get_all("strategy"):
        st.session_state["lab_preset"] = NO_PRESET  # a link naming strategies runs them, as a request does
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


def _apply_preset(preset: str) -> None:
    for name, value in WEIGHT_PRESETS[preset].to_dict().items():
        st.session_state[f"lab_{name}"] = value


def preset_key(preset: str) -> str:
    return "lab_preset_" + preset.replace(" ", "_").replace("-", "_")


def preset_of(weights: ScoringWeights) -> str:
    """The name of the preset these weights match, or "custom"."""
    return next((name for name, w in WEIGHT_PRESETS.items() if w.as_tuple() == weights.as_tuple()), CUSTOM)


def weight_controls() -> ScoringWeights:
    """Preset buttons and the four weight sliders (with their formulas as help); returns the weights.

    Presets are buttons (they only set the sliders), so a fast series of slider moves never races
    with a second stateful widget.
    """
    st.sidebar.subheader("Weights", help=explain.COMPOSITE)
    with st.sidebar.container(horizontal=True, gap="small"):
        for preset in WEIGHT_PRESETS:
            st.button(preset, key=preset_key(preset), on_click=_apply_preset, args=(preset,), width="content",
                      help=" / ".join(f"{v:g}" for v in WEIGHT_PRESETS[preset].as_tuple()))
    for name in WEIGHT_NAMES:
        st.sidebar.slider(WEIGHT_LABELS[name], 0.0, 1.0, step=0.05, key=f"lab_{name}", help=explain.WEIGHT_HELP[name])
    values = {name: float(st.session_state[f"lab_{name}"]) for name in WEIGHT_NAMES}
    weights = ScoringWeights.from_mapping(values)
    st.sidebar.caption(f"Preset: **{preset_of(weights)}** (default 0.5 / 0.2 / 0.2 / 0.1)")
    st.sidebar.caption(explain.normalised_text(weights))
    st.sidebar.date_input("Recency as of", key="lab_as_of", value=None, format="YYYY-MM-DD",
                          help="The \"now\" recency is measured from (empty: the current time). Move it close to "
                               "historical data to see recency at work; re-ranks only, like the sliders.")
    return weights


def _request_run() -> None:
    st.session_state["lab_run_requested"] = True


def cue_bar() -> tuple[str, bool, bool]:
    """The cue, the Recall button and the count switch, above the results (on a phone too, where the sidebar
    is folded away): returns the cue, whether Recall was pressed and whether the recall is counted."""
    with st.container(horizontal=True, vertical_alignment="bottom", key="lab_cue_bar"):
        cue = st.text_input("Cue", key="lab_cue", placeholder="e.g. why did the launch fail?",
                            on_change=_request_run, help="Press Enter to run the recall.", width=520)
        clicked = st.button("Recall", type="primary", key="lab_run", width="content")
        count = st.toggle("Count as a real recall", key="lab_count",
                          help="Off (the default): explore without changing what you measure; nothing is "
                               "written. On: this recall counts like an agent's: each result's access count goes "
                               "up by one, which raises its reinforcement signal in later recalls.")
    return cue, clicked, count


def retrieval_controls(engine: MemoryEngine, cue: str) -> dict[str, Any]:
    """Strategies and each chosen strategy's parameters, as `build_request` keyword arguments (plus
    `needs_entity` when the temporal strategy alone has no entity to follow)."""
    sb = st.sidebar
    preset = st.session_state.get("lab_preset", NO_PRESET)
    overridden = preset in RECALL_PRESETS
    strategies = sb.multiselect("Strategies", STRATEGY_NAMES, key="lab_strategies", disabled=overridden,
                                help="Several strategies run together; a memory found by more than one appears "
                                     "once, with each strategy's details.")
    if overridden:
        sb.caption(f"The preset **{preset}** replaces these strategies: it runs "
                   f"{', '.join(s.value for s in RECALL_PRESETS[preset].strategies)}.")
    preset = sb.selectbox("Recall preset", PRESET_NAMES, key="lab_preset",
                          help="A named recipe of strategies and fusion (it replaces the strategies above); "
                          f"`{DEFAULT_PRESET.name}` is the default everywhere (engine, APIs, CLI, here).")
    top_k = sb.number_input("top_k", 1, config.MAX_TOP_K, key="lab_top_k")
    params: dict[str, Any] = {"cue": cue, "strategies": strategies, "top_k": int(top_k)}
    if preset != NO_PRESET:
        params.update(preset=preset, strategies=None)
        strategies = list(RECALL_PRESETS[preset].strategies)
    if Strategy.SIMILARITY.value in strategies or Strategy.ANALOGICAL.value in strategies:
        params["ef_search"] = int(sb.number_input("ef_search", 1, config.MAX_EF_SEARCH, key="lab_ef_search",
                                                  help="HNSW search breadth: higher finds more at some cost."))
    if Strategy.TEMPORAL.value in strategies:
        temporal_controls(engine, cue, params)
    if Strategy.CAUSAL.value in strategies:
        params["seed_memory_id"] = seed_control(engine)
        params["max_depth"] = sb.slider("Max depth", 1, config.MAX_DEPTH_CAP, key="lab_max_depth")
        types = sb.multiselect("Edge types", EDGE_TYPE_NAMES, key="lab_edge_types", placeholder="all edge types")
        params["edge_types"] = types or None
    if Strategy.ANALOGICAL.value in strategies:
        params["analogical_alpha"] = sb.slider(
            "Alpha (0 = structure only, 1 = embedding only)", 0.0, 1.0, step=0.05, key="lab_alpha",
            help="Analogical relevance = alpha x embedding similarity + (1 - alpha) x structural similarity.",
        )
    return params


def temporal_controls(engine: MemoryEngine, cue: str, params: dict[str, Any]) -> None:
    """The temporal strategy's entity (picked, else the first entity the cue names) and time range; says
    before the recall what it will do when there is none."""
    sb = st.sidebar
    entities = attempt(engine.entities, action="Could not list entities") or []
    wanted = st.session_state.get("lab_entity")
    if wanted not in [NO_ENTITY, *entities]:  # e.g. a link's alias or prefix: resolve it as the engine does
        resolved = attempt(engine.resolve_entity, str(wanted), action="Entity") if wanted else None
        st.session_state["lab_entity"] = resolved if resolved in entities else NO_ENTITY
    entity = sb.selectbox("Entity", [NO_ENTITY, *entities], key="lab_entity",
                          help="The timeline the temporal strategy reads. Left on the first choice, it follows "
                               "the first entity the cue names.")
    if entity != NO_ENTITY:
        params["entity_id"] = entity
    else:
        named = entities_named_in(engine, cue)
        others = [s for s in params["strategies"] or [] if s != Strategy.TEMPORAL.value]
        if named:
            params["entity_id"] = named[0]
            sb.caption(f"Temporal follows **{views.md_escape(named[0])}**, named in the cue.")
        elif others and params.get("preset") is None:
            params["strategies"] = others
            sb.caption("Temporal needs an entity and the cue names none: this recall leaves it out "
                       f"(it runs {', '.join(others)}). Pick an entity to include it.")
        else:
            params["needs_entity"] = True
            sb.caption("Temporal needs an entity: pick one here, or name one in the cue.")
    start = sb.date_input("From", value=None, key="lab_start")
    end = sb.date_input("To", value=None, key="lab_end")
    if start is not None or end is not None:
        params["time_range"] = (_iso(start), _iso(end))


def entities_named_in(engine: MemoryEngine, cue: str) -> list[str]:
    """The entities the cue names, read once per cue (not again on every slider move)."""
    kept = st.session_state.get("lab_named")
    if not isinstance(kept, tuple) or kept[0] != cue:
        named = (attempt(engine.entities_named_in, cue, action="Could not read the cue") or []) if cue.strip() else []
        kept = st.session_state["lab_named"] = (cue, named)
    return list(kept[1])


def _pick_seed() -> None:
    picked = st.session_state.get("lab_seed_pick")
    if picked:
        st.session_state["lab_seed"] = components.short_id(picked)


def seed_control(engine: MemoryEngine) -> str | None:
    """The causal seed: typed as an id or short id, or picked from a search / this page's results."""
    sb = st.sidebar
    typed = sb.text_input("Seed memory (id or short id)", key="lab_seed",
                          help="Empty: start from the memory nearest to the cue. A unique start or end of an id "
                               "is enough (e.g. the 8 characters shown in tables).").strip()
    query = sb.text_input("Find a seed", key="lab_seed_search", placeholder="search memories…").strip()
    results: list[RecallResult] = st.session_state.get("lab_results") or []
    ids = components.search_memories(engine, query) if query else [r.memory.id for r in results]
    labels = components.labels_for(engine, ids, 50)
    if labels:
        sb.selectbox("Pick a seed", [None, *labels], key="lab_seed_pick", on_change=_pick_seed,
                     format_func=lambda i: "(choose…)" if i is None else labels[i])
    if not typed:
        return None
    return components.resolve_id(engine, typed) or typed


def _iso(day: date | None) -> str | None:
    return None if day is None else day.isoformat()


def _signature(params: dict[str, Any]) -> str:
    """What a recall depends on (weights and as-of only re-rank, so they are not part of it)."""
    return repr(sorted((k, v if not isinstance(v, list) else tuple(v)) for k, v in params.items()))


def run_recall(engine: MemoryEngine, params: dict[str, Any], weights: ScoringWeights, count: bool) -> None:
    """One recall, counted (access counts +1) only when asked: exploring must not change what it measures.
    Its candidates are kept for re-ranking."""
    if params.get("needs_entity"):
        st.info("Temporal recall reads one entity's timeline: pick the entity in the sidebar, or name it in the "
                "cue.", icon=":material/person_search:")
        return
    request = attempt(build_request, **params, scoring_weights=weights, action="Invalid recall")
    if request is None:
        return
    with st.spinner(recalling()):
        results = attempt(engine.recall if count else engine.retrieve, request, action="Recall failed")
    if results is not None:
        st.session_state["lab_results"] = results
        for stale in ("lab_details", "lab_sources"):
            st.session_state.pop(stale, None)
        st.session_state["lab_cue_ran"] = request.cue
        st.session_state["lab_strategies_ran"] = [s.value for s in request.strategies]
        st.session_state["lab_signature"] = _signature(params)
        st.session_state["lab_counted"] = count


def as_of_time() -> datetime:
    """The "now" recency is measured from: the end of the chosen day, else the current time."""
    day = st.session_state.get("lab_as_of")
    if isinstance(day, date):
        return datetime.combine(day, time(23, 59, 59), tzinfo=UTC)
    return datetime.now(UTC)


def temporal_only() -> bool:
    return st.session_state.get("lab_strategies_ran") == [Strategy.TEMPORAL.value]


def show_results(engine: MemoryEngine, results: list[RecallResult], weights: ScoringWeights) -> None:
    """Re-rank the kept candidates under `weights` and the as-of time (pure), then show them."""
    now = as_of_time()
    ranked = explain.rescore_at(results, weights, now)
    baseline = explain.rescore_at(results, WEIGHT_PRESETS["default"], now)
    moves = views.rank_moves(baseline, ranked)
    st.session_state["lab_ranked_ids"] = [r.memory.id for r in ranked]

    ran = ", ".join(st.session_state.get("lab_strategies_ran", []))
    if st.session_state.get("lab_counted"):
        st.caption(":material/counter_1: **Counted as a real recall**: each result's access count went up by one "
                   "(its reinforcement rises in later recalls).")
    else:
        st.caption(":material/visibility: **Explored, not counted**: access counts are unchanged, so the same cue "
                   "gives the same scores. Switch on “Count as a real recall” to count one.")
    st.caption(
        f"{len(ranked)} candidates from “{views.md_escape(st.session_state.get('lab_cue_ran', ''))}” ({ran}), "
        f"ranked by {weights.w_relevance:.2f}·relevance + {weights.w_recency:.2f}·recency + "
        f"{weights.w_importance:.2f}·importance + {weights.w_reinforcement:.2f}·reinforcement. "
        "Arrows: places moved from the ranking under the default weights."
    )
    if explain.normalised(weights) is None:
        st.warning(explain.normalised_text(weights), icon=":material/warning:")
    if banner := explain.recency_banner(ranked, now):
        st.info(banner, icon=":material/schedule:")
    with st.expander("How the score is computed"):
        st.markdown(f"`{explain.COMPOSITE}`")
        st.markdown("\n".join(f"- **{name}**: {text}" for name, text in explain.SIGNAL_HELP.items()))
        st.markdown(explain.MERGE_NOTE)

    shown = ranked
    if temporal_only():
        order = st.radio("Order", [ORDER_TIME, ORDER_SCORE], key="lab_order", horizontal=True,
                         help="Temporal recall: in time order (oldest first) or by composite score.")
        if order == ORDER_TIME:
            shown = sorted(ranked, key=lambda r: (r.memory.created_at, r.memory.id))
    found = st.session_state.get("lab_sources")
    if found is None:
        found = st.session_state["lab_sources"] = attempt(
            views.sources, engine, [r.memory for r in results], action="Could not read the sources") or {}
    frame = views.results_frame(shown, moves, found)
    marks = attempt(review_view.contradiction_marks, engine, shown, action="Could not read contradictions") or {}
    if marks:
        frame.insert(frame.columns.get_loc("found by") + 1, "contradicts",
                     review_view.contradiction_column(shown, marks))
        pairs = sorted({tuple(sorted((rank, other))) for rank, r in enumerate(shown, start=1)
                        for other in marks.get(r.memory.id, [])})
        with st.container(key="lab_contradictions"):
            st.warning("These results contradict each other (a confirmed contradiction): "
                       + "; ".join(f"#{a} and #{b}" for a, b in pairs), icon=":material/warning:")
    full = frame.assign(content=[r.memory.content for r in shown])
    clicked = components.result_table(
        frame, "lab_table", "recall", full=full,
        column_config={name: st.column_config.NumberColumn(name, help=explain.SIGNAL_HELP[name], format="%.3f")
                       for name in views.SIGNALS},
    )
    if clicked is not None and shown[clicked].memory.id != st.session_state.get("lab_last_click"):
        st.session_state["lab_last_click"] = st.session_state["lab_focus"] = shown[clicked].memory.id

    st.subheader("Score breakdown")
    charted = shown[:CHART_ROWS]
    if len(shown) > CHART_ROWS:
        st.caption(f"The chart shows the first {CHART_ROWS} of {len(shown)} results; the table has them all.")
    st.plotly_chart(views.contributions_figure(charted, weights), key="lab_bars", width="stretch")
    details = st.session_state.get("lab_details")
    if details is None:
        details = st.session_state["lab_details"] = views.details_table(results)
    with st.expander("Strategy details of every result"):
        show_table(views.details_in_rank_order(details, [r.memory.id for r in shown]), "lab_details")
    show_one(engine, shown, moves, details, weights)


def show_one(engine: MemoryEngine, ranked: list[RecallResult], moves: dict[str, int], details: pd.DataFrame,
             weights: ScoringWeights) -> None:
    """One result in full: its content, its score signal by signal, and what each strategy saw."""
    st.subheader("One result")
    by_id = {r.memory.id: (rank, r) for rank, r in enumerate(ranked, start=1)}
    if st.session_state.get("lab_focus") not in by_id:
        st.session_state["lab_focus"] = ranked[0].memory.id
    labels = {i: f"#{rank} {views.arrow(moves.get(i, 0))} · {views.snippet(r.memory.content, 90)}"
              for i, (rank, r) in by_id.items()}
    focus = st.selectbox("Result", list(by_id), key="lab_focus", format_func=labels.__getitem__,
                         help="Or click a row of the table.")
    rank, result = by_id[focus]
    entity = views.md_escape(result.memory.entity_id or "—")
    st.caption(f"#{rank} · score {result.score:.4f} · entity {entity} · kind {result.memory.kind.value} · "
               f"created {views.when(result.memory.created_at)} · found by {views.strategies_of(result)}")
    show_table(views.breakdown_frame(result, weights), "lab_breakdown")
    components.memory_panel(engine, result.memory, "lab_one", result=result,
                            details=details[details["id"] == focus].drop(columns=["id"]))


def first_screen(engine: MemoryEngine) -> None:
    """Before any recall: the store's shape (counts, kinds, newest memories) and cues taken from its data."""
    st.info("Type a cue above and press **Enter** (or **Recall**), or try one of the cues below. Then move the "
            "weight sliders in the sidebar: the results re-rank at once, without a new retrieval.",
            icon=":material/lightbulb:")
    overview = attempt(views.store_overview, engine, action="Could not read the store")
    if overview is None:
        return
    st.subheader("This store")
    with st.container(horizontal=True, key="lab_store_counts"):
        for label, value in overview.counts.items():
            st.metric(label, f"{value:,}", border=True, width="content")
    if overview.cues:
        st.caption("Cues from the data (a document title, an entity's story):")
        with st.container(horizontal=True, gap="small", key="lab_examples"):
            for i, cue in enumerate(overview.cues):
                st.button(cue, key=f"lab_example_{i}", on_click=_try_cue, args=(cue,), width="content",
                          icon=":material/search:")
    st.caption("Newest memories")
    show_table(overview.recent, "lab_recent", column_config={
        "content": st.column_config.TextColumn("content", width="large")})


def _try_cue(cue: str) -> None:
    st.session_state["lab_cue"] = cue
    st.session_state["lab_run_requested"] = True


def main() -> None:
    st.title("Recall lab")
    engine = current_engine()
    require_memories(engine)
    _init()
    cue, clicked, count = cue_bar()
    params = retrieval_controls(engine, cue)
    weights = weight_controls()
    urlstate.publish(FIELDS, DEFAULTS)
    entered = st.session_state.pop("lab_run_requested", False) and bool(cue.strip())
    # A link or a reload (a new session with a cue in the URL) reopens the view: inputs and results, re-run
    # once without counting.
    reopened = ("lab_results" not in st.session_state and bool(cue.strip())
                and not st.session_state.get("lab_reopened"))
    if clicked or entered or reopened:
        st.session_state["lab_reopened"] = True
        run_recall(engine, params, weights, count and not reopened)
    results: list[RecallResult] | None = st.session_state.get("lab_results")
    if not results:
        if "lab_results" in st.session_state:
            st.info("The recall found nothing: try another cue, more strategies or a larger top_k.",
                    icon=":material/search:")
        else:
            first_screen(engine)
        return
    if st.session_state.get("lab_signature") != _signature(params):
        st.warning("The inputs changed since these results: press **Recall** (or Enter in the cue) to run them. "
                   "Below are the results of the previous recall.", icon=":material/history:")
    show_results(engine, results, weights)


main()
