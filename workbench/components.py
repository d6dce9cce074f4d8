"""Widgets several pages share: readable result tables (content first, wrapped, click a row to open it,
CSV and JSON downloads), the whole-memory panel, and the seed picker that accepts a short id."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from engine import HebbsError, Memory, MemoryEngine, RecallResult, build_request
from workbench import views
from workbench.session import attempt, memory_label, recalling, show_error, show_table

ROW_HEIGHT_PX = 72  # Streamlit wraps cell text only in rows taller than 4rem (64 px): three lines fit
MAX_TABLE_HEIGHT_PX = 520
SEARCH_RESULTS = 15
RECENT = 40


def short_id(memory_id: str) -> str:
    """The short id the workbench shows (the id's last 8 characters; any unique start or end resolves)."""
    return memory_id[-8:]


def table_height(rows: int) -> int:
    return min(MAX_TABLE_HEIGHT_PX, 40 + ROW_HEIGHT_PX * max(rows, 1))


def content_first(frame: pd.DataFrame) -> pd.DataFrame:
    """Rank and score first (what a ranking is about), then the content (what people read) and its date,
    the id last."""
    lead = [c for c in ("rank", "score", "content", "source", "found by", "created") if c in frame.columns]
    rest = [c for c in frame.columns if c not in (*lead, "id")]
    return frame[[*lead, *rest, *(["id"] if "id" in frame.columns else [])]]


def downloads(frame: pd.DataFrame, key: str, name: str) -> None:
    """CSV and JSON downloads of a table (the full content, not the shortened display).

    The files are made only when a button is clicked (deferred data, no rerun): a rerun then serves no
    media files, so quick slider moves never leave the browser asking for files a newer run removed.
    """
    left, right, _ = st.columns([1, 1, 6])
    left.download_button("CSV", lambda: frame.to_csv(index=False).encode(), file_name=f"{name}.csv",
                         mime="text/csv", key=f"{key}_csv", icon=":material/download:", on_click="ignore")
    right.download_button("JSON", lambda: frame.to_json(orient="records", date_format="iso", indent=1).encode(),
                          file_name=f"{name}.json", mime="application/json", key=f"{key}_json",
                          icon=":material/download:", on_click="ignore")


def result_table(frame: pd.DataFrame, key: str, name: str, full: pd.DataFrame | None = None,
                 column_config: dict[str, Any] | None = None, rows_of: str = "") -> int | None:
    """A wide table with rank and score pinned first, then the content, wrapped; returns the index of the
    clicked row, if any.

    `full` (same rows) is what the downloads hold; by default the table itself. `rows_of` names what the rows
    are (e.g. the seed they were reached from): a new value is a new table, so a row ticked in the old one is
    not read as a click in the new one.
    """
    shown = content_first(frame)
    config: dict[str, Any] = {"content": st.column_config.TextColumn("content", width="large")}
    for pinned in ("rank", "score"):  # always in view, however wide the content makes the table
        if pinned in shown.columns:
            config[pinned] = st.column_config.NumberColumn(pinned, pinned=True, width="small",
                                                           format="%.4f" if pinned == "score" else None)
    if "open" in shown.columns:
        config["open"] = st.column_config.LinkColumn("open", display_text="source ↗", width="small",
                                                     help="Open the source (the document, or the memory itself) "
                                                          "on the Memories page, in a new tab.")
    config.update(column_config or {})
    with st.container(key=key):
        st.dataframe(shown, key=f"{key}_grid{rows_of}", on_select="rerun", selection_mode="single-row",
                             hide_index=True, width="stretch", row_height=ROW_HEIGHT_PX,
                             height=table_height(len(shown)), column_config=config)
    downloads(content_first(full) if full is not None else shown, f"{key}_dl", name)
    return selected_row(f"{key}_grid{rows_of}", len(shown))


def selected_row(key: str, rows: int) -> int | None:
    """The row clicked in the selectable table `key` (read from session state, as AppTest can set it)."""
    event = st.session_state.get(key)
    try:
        picked = list(event["selection"]["rows"]) if event is not None else []
    except (KeyError, TypeError):
        picked = []
    return picked[0] if picked and 0 <= picked[0] < rows else None


def edge_table(edges: pd.DataFrame, key: str) -> None:
    """A memory's edges with the other memory's content first, wide and wrapped (its id last)."""
    show_table(edges, key, row_height=ROW_HEIGHT_PX, height=table_height(len(edges)),
               column_config={"other": st.column_config.TextColumn("other memory", width="large")})


def memory_panel(engine: MemoryEngine, memory: Memory, key: str, result: RecallResult | None = None,
                 details: pd.DataFrame | None = None) -> None:
    """A memory in full: its whole content, its id (with a copy button), fields, signals, strategy details,
    edges and the relational structure analogical recall compares."""
    st.text(memory.content)
    st.code(memory.id, language=None)
    tabs = st.tabs(["Fields", "Signals", "Strategies", "Edges", "Structure"])
    with tabs[0]:
        show_table(views.memory_fields_frame(memory), f"{key}_fields")
    with tabs[1]:
        if result is None:
            st.caption("Signals belong to a recall result: open this memory from a recall.")
        else:
            show_table(pd.DataFrame({"signal": list(result.signals.to_dict()),
                                     "value": [round(v, 4) for v in result.signals.to_dict().values()]}),
                       f"{key}_signals")
    with tabs[2]:
        if details is None or details.empty:
            st.caption("No strategy details (not opened from a recall).")
        else:
            show_table(details, f"{key}_details")
    with tabs[3]:
        edges = attempt(views.edges_with_neighbours, engine, memory.id, action="Could not read edges")
        if edges is not None and len(edges):
            edge_table(edges, f"{key}_edges")
        elif edges is not None:
            st.caption("This memory has no edges.")
    with tabs[4]:
        structure = attempt(engine.structure_of, memory.id, action="Could not read the structure")
        if structure is not None:
            roles = views.structure_roles(structure)
            if roles:
                show_table(pd.DataFrame({"role": list(roles), "values": [", ".join(v) for v in roles.values()]}),
                           f"{key}_structure")
            else:
                st.caption("No relational structure was found in this memory.")


def resolve_id(engine: MemoryEngine, text: str) -> str | None:
    """A typed id or short id as a full id; shows the reason (unknown, ambiguous) and returns None otherwise."""
    try:
        return engine.resolve_memory_id(text)
    except HebbsError as exc:
        show_error(exc, "Seed")
        return None


def search_memories(engine: MemoryEngine, query: str) -> list[str]:
    """Ids of the memories nearest a query (no access counted), best first."""
    request = attempt(build_request, query, top_k=SEARCH_RESULTS, action="Invalid search")
    if request is None:
        return []
    with st.spinner(recalling()):
        found = attempt(engine.retrieve, request, action="Search failed")
    return [r.memory.id for r in found or []]


def seed_candidates(engine: MemoryEngine, extra: Sequence[str] = ()) -> list[str]:
    """Ids to offer before any search: `extra` (e.g. the recall lab's results), then the newest memories."""
    recent = attempt(engine.list_memories, limit=RECENT, include_revisions=False,
                     action="Could not list memories") or []
    return list(dict.fromkeys([*extra, *(m.id for m in recent)]))


def labels_for(engine: MemoryEngine, ids: Sequence[str], width: int = 60) -> dict[str, str]:
    found = attempt(engine.get_many, list(ids), action="Could not read memories") or {}
    return {i: memory_label(i, found[i].content, width) for i in ids if i in found}


def json_of(value: Any) -> str:
    return json.dumps(value, indent=1, default=str)
