"""Analogies: memories shaped like the cue (same causes, actions, outcomes) even when the words differ."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine import MemoryEngine, RecallResult, build_request, config
from engine.models import Strategy
from workbench import analogy_view, components, urlstate, views
from workbench.session import attempt, current_engine, recalling, require_memories, show_table

FIELDS = [
    urlstate.Field("ana_cue", "cue"),
    urlstate.Field("ana_alpha", "alpha", "float"),
    urlstate.Field("ana_top_k", "top_k", "int"),
]
DEFAULTS = {"ana_cue": "", "ana_alpha": config.DEFAULT_ANALOGICAL_ALPHA, "ana_top_k": config.DEFAULT_TOP_K}


def run(engine: MemoryEngine, cue: str, alpha: float, top_k: int) -> None:
    """One counted analogical recall; the cue's structure is kept alongside its results."""
    request = attempt(build_request, cue, strategies=[Strategy.ANALOGICAL], analogical_alpha=alpha, top_k=top_k,
                      action="Invalid request")
    if request is None:
        return
    with st.spinner(recalling()):
        results = attempt(engine.recall, request, action="Recall failed")
        structure = attempt(engine.analyze, cue, action="Could not analyse the cue")
    if results is not None and structure is not None:
        st.session_state["ana_results"] = results
        st.session_state["ana_cue_structure"] = structure
        st.session_state["ana_ran"] = {"cue": cue, "alpha": alpha}


def show(engine: MemoryEngine, results: list[RecallResult], cue_structure: dict) -> None:
    ran = st.session_state.get("ana_ran", {})
    cue = views.md_escape(ran.get("cue", ""))
    st.caption(f"Analogs of “{cue}” with alpha = {ran.get('alpha', 0.5):.2f}: relevance = "
               "alpha × embedding similarity + (1 − alpha) × structural similarity, each counted in the "
               "candidates' standard deviations first when both count (0 < alpha < 1); ranked by the "
               "composite score (default weights), as a recall ranks them. For a cue of two sentences or more, "
               f"structural similarity = {1 - config.ANALOGICAL_PLOT_WEIGHT:g} × systematicity × the share kept + "
               f"{config.ANALOGICAL_PLOT_WEIGHT:g} × plot similarity (the stories' sentences aligned in order, each "
               "story's setting taken out). The share kept is 1 up to an embedding similarity of "
               f"{config.ANALOGICAL_SURFACE_FREE:g}, then falls to 0 for a copy of the cue: what a story maps only "
               "because it repeats the cue's words counts little.")
    roles = views.structure_roles(cue_structure)
    described = " · ".join(f"{r}: {', '.join(v)}" for r, v in roles.items())
    st.markdown("**The cue's structure:** "
                + (views.md_escape(described) or "none found (try words about actions, causes and outcomes)"))
    frame = views.analogy_frame(results)
    full = frame.assign(content=[r.memory.content for r in results])
    clicked = components.result_table(frame, "ana_table", "analogies", full=full)
    if clicked is not None:
        with st.container(border=True):
            components.memory_panel(engine, results[clicked].memory, "ana_open", result=results[clicked])
    st.subheader("Where each analog's relevance comes from")
    st.plotly_chart(views.analogy_figure(frame, [r.memory.content for r in results]), key="ana_bars",
                    width="stretch")
    st.subheader("Structures side by side")
    for row, r in zip(frame.itertuples(), results, strict=True):
        with st.expander(f"#{row.rank} · {views.md_snippet(r.memory.content, 90)}"):
            st.text(r.memory.content)
            structure = attempt(engine.structure_of, r.memory.id, action="Could not read the structure")
            if structure is not None:
                show_table(views.structure_comparison(cue_structure, structure), f"ana_structure_{r.memory.id}")
                fields = analogy_view.analogical_fields(r)
                mapping = dict(fields.get("mapping") or {})
                lined_up = analogy_view.plot_rows(fields.get("plot") or {}, ran.get("cue", ""), r.memory.content)
                if lined_up:  # a story cue: how the two plots line up, sentence by sentence
                    st.markdown(f"**How the plots line up** (plot similarity {fields['plot_similarity']:.3f}, "
                                f"systematicity {fields['systematicity']:.3f}, of which "
                                f"{fields.get('surface_kept', 1.0):.0%} counts net of the shared surface): each "
                                "story's sentences with its setting taken out, aligned in order")
                    show_table(pd.DataFrame(lined_up), f"ana_plot_{r.memory.id}")
                sentences = analogy_view.sentence_rows(mapping, ran.get("cue", ""), r.memory.content)
                if len(sentences) > 1:  # a story: which sentence maps to which, and the relations carried over
                    show_table(pd.DataFrame(sentences), f"ana_sentences_{r.memory.id}")
                if mapping.get("relations"):
                    show_table(pd.DataFrame(mapping["relations"]), f"ana_relations_{r.memory.id}")
                if mapping:
                    st.plotly_chart(analogy_view.mapping_figure(cue_structure, structure, mapping),
                                    key=f"ana_graph_{r.memory.id}")
            st.caption(f"embedding similarity {row.embedding_similarity:.3f} (contributes {row.from_embedding:.3f})"
                       f" · structural similarity {row.structural_similarity:.3f} (contributes "
                       f"{row.from_structure:.3f})")


def main() -> None:
    st.title("Analogies")
    engine = current_engine()
    require_memories(engine)
    sb = st.sidebar
    urlstate.restore("analogies", FIELDS)
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    cue = sb.text_area("Cue", key="ana_cue", placeholder="e.g. we rushed the launch and skipped testing, "
                       "and it failed")
    alpha = sb.slider("Alpha (0 = structure only, 1 = embedding only)", 0.0, 1.0, step=0.05, key="ana_alpha",
                      help="Analogical relevance = alpha x embedding similarity + (1 - alpha) x structural "
                           "similarity.")
    top_k = sb.number_input("top_k", 1, 100, key="ana_top_k")
    urlstate.publish(FIELDS, DEFAULTS)
    if sb.button("Find analogies", type="primary", key="ana_run", width="stretch"):
        run(engine, cue, alpha, int(top_k))
    results = st.session_state.get("ana_results")
    if results is None:
        st.info("Describe a situation in the sidebar (what was done, why, how it ended) and press **Find "
                "analogies**. Move alpha towards 0 to match on structure alone.", icon=":material/lightbulb:")
        return
    if not results:
        st.info("No analogs found: describe the situation's actions, causes and outcomes, or raise alpha.",
                icon=":material/search:")
        return
    ran = st.session_state.get("ana_ran", {})
    if ran.get("cue") != cue or ran.get("alpha") != alpha:
        st.warning("The inputs changed since these results: press **Find analogies** to run them. Below are the "
                   "results of the previous search.", icon=":material/history:")
    show(engine, results, st.session_state.get("ana_cue_structure", {}))


main()
