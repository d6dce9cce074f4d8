"""Insights: what reflection found in the store, each with the memories it cites; and the contradiction
candidates found on write, for a person to confirm, mark as a revision, or dismiss."""

from __future__ import annotations

import streamlit as st

from engine import MemoryEngine
from workbench import review_view, views
from workbench.session import attempt, current_engine, require_memories, show_table

ALL = "all memories"
MAX_SHOWN = 50
VERDICTS = {"contradiction": "Contradiction", "revision": "Revision", "dismiss": "Dismiss"}


def reflect_panel(engine: MemoryEngine) -> str | None:
    """The scope picker and the Reflect button; returns the chosen entity (None: every memory)."""
    entities = attempt(engine.entities, action="Could not list entities") or []
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    with left:
        chosen = st.selectbox("Scope", [ALL, *entities], key="ins_scope",
                              help="Reflect on one entity's memories, or on every memory (the newest 5,000).")
    entity = None if chosen == ALL else chosen
    with right:
        if st.button("Reflect now", key="ins_reflect", type="primary", width="stretch"):
            with st.spinner("Grouping memories into topics…"):
                done = attempt(review_view.run, engine, "reflect", entity_id=entity, action="Reflect failed")
            if done is not None:
                st.session_state["ins_done"] = (f"{len(done.insights)} new insight(s) from {done.memories_processed} "
                                                f"memories in {done.clusters_found} topic(s); {done.unchanged} "
                                                "unchanged")
    if note := st.session_state.get("ins_done"):
        st.success(views.md_escape(note), icon=":material/lightbulb:")
    return entity


def show_insights(engine: MemoryEngine, entity: str | None) -> None:
    found = attempt(review_view.run, engine, "insights", entity_id=entity, max_results=MAX_SHOWN,
                    action="Could not read the insights")
    if found is None:
        return
    if not found.insights:
        st.info("No insights yet: press **Reflect now** (a topic needs at least 3 memories).")
        return
    st.caption(f"{len(found.insights)} insight(s), most confident first. Each is a memory of kind insight with "
               "an insight_from edge to every source; stale: a source was forgotten or revised since.")
    for n, insight in enumerate(found.insights):
        with st.container(key=f"ins_{n}", border=True):
            st.text(insight.memory.content)
            stale = " · :orange[stale]" if insight.stale else ""
            st.caption(f"confidence {insight.confidence:.2f} · importance {insight.memory.importance:.2f} · "
                       f"{len(insight.source_ids)} sources · entity {views.md_escape(insight.memory.entity_id or '—')}"
                       f"{stale}")
            with st.expander("Sources"):
                show_table(review_view.sources_frame(engine, insight), f"ins_sources_{n}")


def show_contradictions(engine: MemoryEngine) -> None:
    st.subheader("Contradictions to review")
    found = attempt(review_view.run, engine, "contradiction_prepare", limit=MAX_SHOWN,
                    action="Could not read the contradiction candidates")
    if found is None:
        return
    if not found.candidates:
        st.caption("None pending: candidates are found when a memory is remembered or indexed.")
        return
    for c in found.candidates:
        with st.container(key=f"ctr_{c.pending_id}", border=True):
            st.caption(f"{views.md_escape(c.reason)} · suggested: {c.verdict} · confidence {c.confidence:.2f} · "
                       f"{views.md_escape(c.detail)}")
            st.text(f"older: {found.contents.get(c.memory_a, '')}")
            st.text(f"newer: {found.contents.get(c.memory_b, '')}")
            for column, (verdict, label) in zip(st.columns(len(VERDICTS)), VERDICTS.items(), strict=True):
                if column.button(label, key=f"ctr_{c.pending_id}_{verdict}", width="stretch"):
                    done = attempt(review_view.run, engine, "contradiction_commit",
                                   verdicts=[{"pending_id": c.pending_id, "verdict": verdict}],
                                   action="Could not apply the verdict")
                    if done is not None:
                        st.rerun()


engine = current_engine()
require_memories(engine)
st.subheader("Insights")
show_insights(engine, reflect_panel(engine))
show_contradictions(engine)
