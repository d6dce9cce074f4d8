"""Timeline: one or more entities' memories over time; pick one to see its details and edges."""

from __future__ import annotations

from datetime import date, timedelta

import streamlit as st

from engine import Memory, MemoryEngine
from engine.models import MemoryKind
from workbench import components, urlstate, views
from workbench.session import attempt, current_engine, memory_label, require_memories, show_table

MAX_PER_ENTITY = 1000
DEFAULT_ENTITIES = 3
PICKER_MARGIN_DAYS = 31
FIELDS = [
    urlstate.Field("timeline_entities", "entity", "list"),
    urlstate.Field("timeline_dates", "dates", "dates"),
    urlstate.Field("timeline_memory", "memory"),
]


def default_entities(engine: MemoryEngine, entities: list[str]) -> list[str]:
    """The entities with the most recent memories: what most people want to look at first."""
    recent = attempt(engine.list_memories, limit=200, action="Could not list memories") or []
    chosen: list[str] = []
    for m in recent:
        if m.entity_id in entities and m.entity_id not in chosen:
            chosen.append(m.entity_id)
        if len(chosen) == DEFAULT_ENTITIES:
            break
    return chosen or entities[:DEFAULT_ENTITIES]


def data_span(engine: MemoryEngine) -> tuple[date | None, date | None]:
    """The first and last day that hold a memory (the date picker opens there, not on today's month)."""
    newest = attempt(engine.list_page, limit=1, action="Could not list memories")
    if newest is None or not newest.total:
        return None, None
    oldest = attempt(engine.list_page, limit=1, offset=newest.total - 1, action="Could not list memories")
    last = newest.memories[0].created_at.date()
    first = oldest.memories[0].created_at.date() if oldest is not None and oldest.memories else last
    return first, last


def load(engine: MemoryEngine, entities: list[str], time_range: tuple[str | None, str | None] | None) -> list[Memory]:
    memories: list[Memory] = []
    for entity in entities:
        found = attempt(engine.list_memories, entity_id=entity, time_range=time_range, limit=MAX_PER_ENTITY,
                        action=f"Could not read the timeline of {entity}")
        memories.extend(m for m in found or [] if m.kind != MemoryKind.REVISION)
    return memories


def sync_chart_selection() -> None:
    """A point clicked on the chart becomes the selected memory (before the picker is drawn)."""
    event = st.session_state.get("timeline_chart")
    points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else []
    if points:
        custom = points[0].get("customdata")
        memory_id = custom[0] if isinstance(custom, list | tuple) and custom else None
        if memory_id and memory_id != st.session_state.get("timeline_last_click"):
            st.session_state["timeline_last_click"] = memory_id
            st.session_state["timeline_memory"] = memory_id


def show_details(engine: MemoryEngine, memory: Memory) -> None:
    st.subheader("Selected memory")
    st.text(memory.content)
    left, right = st.columns([2, 3])
    with left:
        show_table(views.memory_fields_frame(memory), "timeline_fields")
    with right:
        edges = attempt(views.edges_with_neighbours, engine, memory.id, action="Could not read edges")
        if edges is not None and len(edges):
            components.edge_table(edges, "timeline_edges")
        elif edges is not None:
            st.caption("This memory has no edges.")


def main() -> None:
    st.title("Timeline")
    engine = current_engine()
    require_memories(engine)
    entities = attempt(engine.entities, action="Could not list entities") or []
    if not entities:
        st.info("No memory has an entity yet: the timeline shows memories by entity. Add memories with an "
                "entity on the **Memories** page or index documents that name one.", icon=":material/lightbulb:")
        return
    urlstate.restore("timeline", FIELDS)
    kept = [e for e in st.session_state.get("timeline_entities", []) if e in entities]
    st.session_state["timeline_entities"] = kept or default_entities(engine, entities)
    chosen = st.sidebar.multiselect("Entities", entities, key="timeline_entities")
    first, last = data_span(engine)
    if first and last:  # a margin around the data, so a range may start before or end after it
        first, last = first - timedelta(days=PICKER_MARGIN_DAYS), last + timedelta(days=PICKER_MARGIN_DAYS)
    dates = st.sidebar.date_input("Time range", value=[], key="timeline_dates", min_value=first, max_value=last,
                                  help="Pick a start and an end date; leave empty for all time. The calendar "
                                       "spans the stored memories' dates.")
    time_range = _range(dates)
    if not chosen:
        urlstate.publish(FIELDS)
        st.info("Pick one or more entities in the sidebar.", icon=":material/west:")
        return
    memories = load(engine, chosen, time_range)
    if not memories:
        st.info("No memories of these entities in this time range: widen the range or pick other entities.",
                icon=":material/search:")
        return
    by_id = {m.id: m for m in memories}
    ordered = sorted(memories, key=lambda m: (m.created_at, m.id), reverse=True)
    sync_chart_selection()
    if st.session_state.get("timeline_memory") not in by_id:
        st.session_state["timeline_memory"] = ordered[0].id
    selected = st.sidebar.selectbox(
        "Memory", [m.id for m in ordered], key="timeline_memory",
        format_func=lambda i: memory_label(i, by_id[i].content, 50),
        help="Or click a point on the chart.",
    )
    urlstate.publish(FIELDS, {"timeline_dates": ()})
    frame = views.timeline_frame(memories)
    st.caption(f"{len(memories)} memories of {len(chosen)} entit{'y' if len(chosen) == 1 else 'ies'} · "
               "size is importance, colour is kind; hover for the content, click to select.")
    st.plotly_chart(views.timeline_figure(frame, selected), key="timeline_chart", on_select="rerun",
                    selection_mode="points", width="stretch")
    show_details(engine, by_id[selected])


def _range(dates: object) -> tuple[str | None, str | None] | None:
    if isinstance(dates, date):
        return (dates.isoformat(), None)
    values = [d for d in (dates or ()) if isinstance(d, date)]  # type: ignore[attr-defined]
    if not values:
        return None
    start = values[0].isoformat()
    end = values[1].isoformat() if len(values) > 1 else None
    return (start, end)


main()
