"""Memories: a filterable table; add a memory with edges, revise one, forget one (after a confirmation)."""

from __future__ import annotations

from datetime import date

import streamlit as st

from engine import Memory, MemoryEngine
from engine.models import EdgeType, MemoryKind
from workbench import components, urlstate, views
from workbench.session import (
    EMPTY_STORE_MESSAGE,
    attempt,
    current_engine,
    memory_count,
    memory_label,
    show_table,
)

ALL = "(all)"
NOT_REVISIONS = "(all but revisions)"
ADD_KEYS = ("mem_add_content", "mem_add_entity", "mem_add_context", "mem_add_targets")
NEW_KINDS = [k.value for k in MemoryKind if k != MemoryKind.REVISION]
MAX_EDGES = 10  # a typed filter's "select all matches" must not silently add dozens of edges
FIELDS = [
    urlstate.Field("mem_search", "search"),
    urlstate.Field("mem_entity", "entity"),
    urlstate.Field("mem_kind", "kind"),
    urlstate.Field("mem_dates", "dates", "dates"),
    urlstate.Field("mem_min_importance", "min_importance", "float"),
    urlstate.Field("mem_limit", "rows", "int"),
    urlstate.Field("mem_page", "page", "int"),
    urlstate.Field("mem_selected", "memory"),
]
TABS = ["Details", "History", "Revise", "Forget"]
DEFAULTS = {"mem_search": "", "mem_entity": ALL, "mem_kind": NOT_REVISIONS, "mem_min_importance": 0.0, "mem_limit": 200,
            "mem_page": 1}


def flash(message: str) -> None:
    """Show `message` after the rerun that follows a change."""
    st.session_state["mem_flash"] = message
    st.rerun()


def filters(engine: MemoryEngine) -> dict:
    """The sidebar filters as `list_page` arguments; every filter runs in the store, before paging."""
    sb = st.sidebar
    linked = urlstate.KEEP_PREFIX + "mem_selected" not in st.session_state  # a new visit: the URL may name one
    urlstate.restore("memories", FIELDS)
    if linked and st.session_state.get("mem_selected"):
        st.session_state["mem_pinned"] = st.session_state["mem_selected"]
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    entities = attempt(engine.entities, action="Could not list entities") or []
    kinds = [NOT_REVISIONS, ALL, *[k.value for k in MemoryKind]]
    if st.session_state["mem_entity"] not in [ALL, *entities]:
        st.session_state["mem_entity"] = ALL
    if st.session_state["mem_kind"] not in kinds:
        st.session_state["mem_kind"] = NOT_REVISIONS
    search = sb.text_input("Search the content", key="mem_search", placeholder="words or part of a word…",
                           help="Memories whose content contains this text (case is ignored); the filters below "
                                "still apply.").strip()
    entity = sb.selectbox("Entity", [ALL, *entities], key="mem_entity")
    kind = sb.selectbox("Kind", kinds, key="mem_kind")
    dates = sb.date_input("Created between", value=[], key="mem_dates")
    min_importance = sb.slider("Minimum importance", 0.0, 1.0, step=0.05, key="mem_min_importance")
    limit = int(sb.number_input("Rows per page", 10, 1000, step=10, key="mem_limit"))
    page = int(sb.number_input("Page", 1, 100_000, key="mem_page"))
    days = [d for d in (dates if isinstance(dates, tuple | list) else [dates]) if isinstance(d, date)]
    time_range = (days[0].isoformat(), days[1].isoformat() if len(days) > 1 else None) if days else None
    return {
        "search": search,
        "entity_id": None if entity == ALL else entity,
        "kind": None if kind in (ALL, NOT_REVISIONS) else kind,
        "time_range": time_range,
        "min_importance": min_importance or None,
        "include_revisions": kind != NOT_REVISIONS,
        "limit": limit,
        "offset": (page - 1) * limit,
    }


def add_form(engine: MemoryEngine, candidates: list[Memory]) -> None:
    """Remember a new memory, optionally with edges to existing ones."""
    if st.session_state.pop("mem_add_reset", False):
        for key in ADD_KEYS:
            st.session_state.pop(key, None)
    labels = {m.id: m.content for m in candidates}
    with st.form("mem_add_form"):
        content = st.text_area("Content", key="mem_add_content")
        left, right = st.columns(2)
        entity = left.text_input("Entity (optional)", key="mem_add_entity")
        kind = right.selectbox("Kind", NEW_KINDS, key="mem_add_kind")
        importance = left.slider("Importance", 0.0, 1.0, 0.5, step=0.05, key="mem_add_importance")
        context = right.text_input("Context (JSON object, optional)", key="mem_add_context",
                                   placeholder='{"source": "call"}')
        targets = st.multiselect("Edges to", list(labels), key="mem_add_targets", max_selections=MAX_EDGES,
                                 format_func=lambda i: memory_label(i, labels[i], 60),
                                 help=f"Up to {MAX_EDGES} memories from the table; the new memory is the edge's "
                                      "source. With more than one, you confirm the list before it is saved.")
        left, right = st.columns(2)
        edge_type = left.selectbox("Edge type", [t.value for t in EdgeType], key="mem_add_edge_type")
        confidence = right.slider("Edge confidence", 0.0, 1.0, 1.0, step=0.05, key="mem_add_confidence")
        submitted = st.form_submit_button("Add memory", type="primary", key="mem_add_submit")
    if submitted:
        pending = {"content": content, "importance": importance, "context": context.strip() or None,
                   "entity_id": entity.strip() or None, "kind": kind,
                   "edges": [(t, edge_type, confidence) for t in targets]}
        if len(targets) > 1:  # several edges at once (e.g. a filter's "select all"): confirm the list first
            st.session_state["mem_add_pending"] = pending
            st.rerun()
        add_memory(engine, pending)
    confirm_edges(engine, labels)


def add_memory(engine: MemoryEngine, pending: dict) -> None:
    """Remember the form's memory with its edges; clear the form and select the new memory."""
    memory = attempt(engine.remember, pending["content"], importance=pending["importance"],
                     context=pending["context"], entity_id=pending["entity_id"], kind=pending["kind"],
                     edges=pending["edges"], action="Could not add the memory")
    if memory is not None:
        st.session_state["mem_add_reset"] = True
        st.session_state["mem_selected"] = memory.id
        flash(f"Added memory {memory.id} with {len(pending['edges'])} edge(s).")


def confirm_edges(engine: MemoryEngine, labels: dict[str, str]) -> None:
    """A memory with several edges is added only after the list of its targets is confirmed."""
    pending = st.session_state.get("mem_add_pending")
    if not pending:
        return
    edges = pending["edges"]
    st.warning(f"Add this memory with **{len(edges)} edges** ({views.md_escape(edges[0][1])})? Each of these "
               "memories gets one:", icon=":material/call_split:")
    for target, _type, _confidence in edges:
        st.text(f"→ {memory_label(target, labels.get(target, '(not in the table)'), 90)}")
    yes, back = st.columns(2)
    if yes.button(f"Yes, add it with {len(edges)} edges", type="primary", key="mem_add_confirm"):
        st.session_state.pop("mem_add_pending", None)
        add_memory(engine, pending)
    if back.button("Back to the form", key="mem_add_back"):
        st.session_state.pop("mem_add_pending", None)
        st.rerun()


def revise_form(engine: MemoryEngine, memory: Memory) -> None:
    """Change a memory in place; its previous state is kept as a revision."""
    if st.session_state.get("mem_revise_for") != memory.id:
        st.session_state["mem_revise_for"] = memory.id
        st.session_state["mem_revise_content"] = memory.content
        st.session_state["mem_revise_importance"] = memory.importance
        st.session_state["mem_revise_entity"] = memory.entity_id or ""
    with st.form("mem_revise_form"):
        content = st.text_area("Content", key="mem_revise_content")
        left, right = st.columns(2)
        importance = left.slider("Importance", 0.0, 1.0, step=0.05, key="mem_revise_importance")
        entity = right.text_input("Entity", key="mem_revise_entity")
        submitted = st.form_submit_button("Save revision", key="mem_revise_submit")
    if submitted:
        changes = {
            "content": content if content != memory.content else None,
            "importance": importance if importance != memory.importance else None,
            "entity_id": entity.strip() if entity.strip() and entity.strip() != (memory.entity_id or "") else None,
        }
        changes = {k: v for k, v in changes.items() if v is not None}
        if not changes:
            st.info("Nothing changed.")
            return
        if attempt(engine.revise, memory.id, **changes, action="Could not revise the memory") is not None:
            st.session_state.pop("mem_revise_for", None)
            flash(f"Revised {memory.id}: {', '.join(changes)}; the previous state is kept as a revision.")


def _ask_to_forget(memory_id: str) -> None:
    st.session_state["mem_forget_pending"] = memory_id
    st.session_state["mem_tab"] = "Forget"  # the confirmation shows where it was asked for


def forget_controls(engine: MemoryEngine, memory: Memory) -> None:
    """Forget asks for a confirmation first."""
    if st.session_state.get("mem_forget_pending") != memory.id:
        st.button("Forget this memory…", key="mem_forget", on_click=_ask_to_forget, args=(memory.id,))
        return
    st.warning(f"Forget “{views.md_snippet(memory.content, 80)}” and its revisions? This cannot be undone.",
               icon=":material/delete:")
    yes, no = st.columns(2)
    if yes.button("Yes, forget it", type="primary", key="mem_forget_confirm"):
        deleted = attempt(engine.forget, [memory.id], action="Could not forget the memory")
        st.session_state.pop("mem_forget_pending", None)
        if deleted is not None:
            st.session_state.pop("mem_selected", None)
            flash(f"Forgot {memory.id} ({len(deleted)} record(s) including revisions).")
    if no.button("Cancel", key="mem_forget_cancel"):
        st.session_state.pop("mem_forget_pending", None)
        st.rerun()


def history(engine: MemoryEngine, memory: Memory) -> None:
    """The memory's earlier states (each revise keeps one), newest first, beside its current state."""
    earlier = attempt(engine.revisions_of, memory.id, action="Could not read the revisions")
    if earlier is None:
        return
    if not earlier:
        st.caption("Never revised: this is its only state. A revision (the Revise tab) keeps the previous state "
                   "here.")
    else:
        st.caption(f"{len(earlier)} earlier state{'s' if len(earlier) != 1 else ''}, newest first.")
    components.edge_table(views.revisions_frame(memory, earlier), "mem_history")


def details(engine: MemoryEngine, memory: Memory) -> None:
    st.text(memory.content)
    left, right = st.columns([2, 3])
    with left:
        show_table(views.memory_fields_frame(memory), "mem_fields")
    edges = attempt(views.edges_with_neighbours, engine, memory.id, action="Could not read edges")
    if edges is not None and len(edges):
        with right:
            components.edge_table(edges, "mem_edges")
    elif edges is not None:
        right.caption("No edges.")


def main() -> None:
    st.title("Memories")
    engine = current_engine()
    if message := st.session_state.pop("mem_flash", None):
        st.success(message, icon=":material/check_circle:")
    query = filters(engine)
    if memory_count(engine) == 0:
        st.info(EMPTY_STORE_MESSAGE, icon=":material/lightbulb:")
        with st.expander("Add a memory", expanded=True):
            add_form(engine, [])
        return
    search = query.pop("search")
    if search:
        listed = attempt(engine.search_text, search, **query, action="Could not search the memories")
    else:
        listed = attempt(engine.list_page, **query, action="Could not list memories")
    shown = list(listed.memories) if listed is not None else []
    with st.expander("Add a memory"):
        add_form(engine, shown)
    wanted = st.session_state.get("mem_pinned")
    if wanted and wanted == st.session_state.get("mem_selected") and wanted not in {m.id for m in shown}:
        # a link to one memory (e.g. a recall result's source) opens it, wherever it is in the list
        linked = attempt(engine.get_many, [wanted], action="Could not read the memory") or {}
        if wanted in linked:
            st.caption("The linked memory is not on this page of the list; it is shown first.")
            shown = [linked[wanted], *shown]
    if not shown:
        urlstate.publish(FIELDS, DEFAULTS)
        if listed is not None and listed.total:
            st.info(f"{matches(listed.total)}, but page {query['offset'] // query['limit'] + 1} is past the last: "
                    "lower the page number in the sidebar.", icon=":material/search:")
        else:
            st.info("No memory matches these filters: loosen them in the sidebar.", icon=":material/search:")
        return
    total = listed.total if listed is not None else len(shown)
    pages = max(1, -(-total // query["limit"]))
    st.caption(f"{matches(total)}{f' for “{views.md_escape(search)}”' if search else ''}, "
               f"page {query['offset'] // query['limit'] + 1} of {pages}, newest first. Click a row to select it.")
    frame = views.memories_frame(shown)
    clicked = components.result_table(
        frame, "mem_table", "memories", full=frame.assign(content=[m.content for m in shown]),
        column_config={"importance": st.column_config.ProgressColumn(min_value=0.0, max_value=1.0, format="%.2f")},
    )
    by_id = {m.id: m for m in shown}
    if clicked is not None and shown[clicked].id != st.session_state.get("mem_last_click"):
        st.session_state["mem_last_click"] = st.session_state["mem_selected"] = shown[clicked].id
    if st.session_state.get("mem_selected") not in by_id:
        st.session_state["mem_selected"] = shown[0].id
    selected = st.selectbox("Selected memory", list(by_id), key="mem_selected",
                            format_func=lambda i: memory_label(i, by_id[i].content, 90))
    memory = by_id[selected]
    urlstate.publish(FIELDS, DEFAULTS)
    if st.session_state.get("mem_tab") not in TABS:
        st.session_state["mem_tab"] = TABS[0]
    tab_details, tab_history, tab_revise, tab_forget = st.tabs(TABS, key="mem_tab", on_change="rerun")
    with tab_details:
        details(engine, memory)
    with tab_history:
        history(engine, memory)
    with tab_revise:
        revise_form(engine, memory)
    with tab_forget:
        forget_controls(engine, memory)


def matches(total: int) -> str:
    return f"{total:,} match{'es' if total != 1 else ''}"


main()
