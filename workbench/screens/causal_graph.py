"""Causal graph: the stored edges around a seed memory, with the path from the seed to a chosen memory."""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from engine import MemoryEngine, build_request, config
from engine.models import EdgeType
from workbench import components, graph, graph_clicks, urlstate, views
from workbench.session import attempt, current_engine, memory_label, recalling, require_memories, show_table

NO_TARGET = ""
SEARCH_RESULTS = 15
RECENT = 30
SCAN_FOR_EDGES = 300  # newest memories looked at for a default seed with causal edges
EDGE_TYPE_NAMES = [t.value for t in EdgeType]
FIELDS = [
    urlstate.Field("graph_seed", "seed"),
    urlstate.Field("graph_search", "search"),
    urlstate.Field("graph_depth", "depth", "int"),
    urlstate.Field("graph_edge_types", "edge_type", "list", choices=lambda: EDGE_TYPE_NAMES),
    urlstate.Field("graph_limit", "max", "int"),
    urlstate.Field("graph_target", "path_to"),
]
DEFAULTS = {"graph_search": "", "graph_depth": 2, "graph_edge_types": EDGE_TYPE_NAMES, "graph_limit": 100,
            "graph_target": NO_TARGET}


def has_causal_edges(engine: MemoryEngine, memory_id: str) -> bool:
    return any(e.type == EdgeType.CAUSED_BY for e in engine.edges_of(memory_id))


def causal_memories(engine: MemoryEngine, limit: int = RECENT) -> list[str]:
    """The newest memories with a causal edge: seeds whose graph has something to show."""
    recent = attempt(engine.list_memories, limit=SCAN_FOR_EDGES, include_revisions=False,
                     action="Could not list memories") or []
    return [m.id for m in recent if has_causal_edges(engine, m.id)][:limit]


def default_seed(engine: MemoryEngine) -> str | None:
    """The recall lab's best result that has a causal edge, else the newest memory with one, else the newest."""
    ranked = [str(i) for i in st.session_state.get("lab_ranked_ids") or []]
    with_edges = next((i for i in ranked[:RECENT] if has_causal_edges(engine, i)), None)
    if with_edges is not None:
        return with_edges
    causal = causal_memories(engine, 1)
    if causal:
        return causal[0]
    newest = attempt(engine.list_memories, limit=1, include_revisions=False, action="Could not list memories")
    return newest[0].id if newest else None


def _use_typed_seed() -> None:
    st.session_state["graph_seed_typed_pending"] = True


def seed_options(engine: MemoryEngine) -> list[str]:
    """Seeds to pick from: search results, else the recall lab's results and the newest memories."""
    query = st.sidebar.text_input("Find a seed", key="graph_search", placeholder="search memories…").strip()
    if query:
        request = attempt(build_request, query, top_k=SEARCH_RESULTS, action="Invalid search")
        with st.spinner(recalling()):
            found = attempt(engine.retrieve, request, action="Search failed") if request else None
        ids = [r.memory.id for r in found or []]
        if not ids:
            st.sidebar.caption("No match: try other words.")
        return ids
    ids = [i for i in [st.session_state.get("graph_seed")] if i]
    ids += [i for i in st.session_state.get("lab_ranked_ids", [])[:RECENT] if has_causal_edges(engine, i)]
    ids += causal_memories(engine)
    return list(dict.fromkeys(ids))


def main() -> None:
    st.title("Causal graph")
    engine = current_engine()
    require_memories(engine)
    urlstate.restore("graph", FIELDS)
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    st.session_state.setdefault("graph_search_ran", st.session_state["graph_search"].strip())
    seed_now = st.session_state.get("graph_seed")
    if seed_now and seed_now not in (engine.get_many([seed_now]) or {}):  # a short id from a link
        st.session_state["graph_seed"] = components.resolve_id(engine, seed_now)
    if reseed := st.session_state.pop("graph_reseed", None):
        st.session_state["graph_seed"] = reseed
        st.session_state["graph_search"] = st.session_state["graph_search_ran"] = ""
    if not st.session_state.get("graph_seed"):
        st.session_state["graph_seed"] = default_seed(engine)
    typed = st.sidebar.text_input("Seed id or short id", key="graph_seed_typed", on_change=_use_typed_seed,
                                  help="A full memory id, or a unique start or end of one (e.g. the 8 characters "
                                       "shown in tables).").strip()
    if st.session_state.pop("graph_seed_typed_pending", False) and typed:
        resolved = components.resolve_id(engine, typed)
        if resolved is not None:
            st.session_state["graph_seed"] = resolved
            st.session_state["graph_search"] = st.session_state["graph_search_ran"] = ""
    options = seed_options(engine)
    query = st.session_state.get("graph_search", "").strip()
    if query != st.session_state["graph_search_ran"]:
        st.session_state["graph_search_ran"] = query
        if options:  # a new search: start from its best match
            st.session_state["graph_seed"] = options[0]
    labels = attempt(engine.get_many, options, action="Could not read memories") or {}
    options = [i for i in options if i in labels]
    if not options:
        st.info("Search for a memory in the sidebar to start the graph from it.", icon=":material/west:")
        return
    if st.session_state.get("graph_seed") not in options:
        st.session_state["graph_seed"] = options[0]
    seed = st.sidebar.selectbox("Seed", options, key="graph_seed",
                                format_func=lambda i: memory_label(i, labels[i].content, 50),
                                help="Search results; else the recall lab's results and the newest memories that "
                                     "have causal edges.")
    depth = st.sidebar.slider("Depth", 1, config.MAX_DEPTH_CAP, key="graph_depth")
    all_types = EDGE_TYPE_NAMES
    types = st.sidebar.multiselect("Edge types", all_types, key="graph_edge_types")
    limit = st.sidebar.number_input("Max memories", 2, 500, key="graph_limit")
    if not types:
        st.info("Pick at least one edge type in the sidebar.", icon=":material/west:")
        return
    nb = attempt(graph.neighbourhood, engine, seed, depth, None if len(types) == len(all_types) else types,
                 int(limit), action="Could not walk the graph")
    if nb is None:
        return
    others = sorted((i for i in nb.nodes if i != seed), key=lambda i: (nb.nodes[i].depth, i))
    if st.session_state.get("graph_target") not in [NO_TARGET, *others]:
        st.session_state["graph_target"] = NO_TARGET
    target = st.sidebar.selectbox(
        "Highlight the path to", [NO_TARGET, *others], key="graph_target",
        format_func=lambda i: "(none)" if i == NO_TARGET else
        f"depth {nb.nodes[i].depth} · {memory_label(i, nb.nodes[i].memory.content, 44)}",
    )
    path = nb.path_to(target) if target else ()
    urlstate.publish(FIELDS, DEFAULTS)

    st.caption(f"Seed: {views.md_snippet(nb.nodes[seed].memory.content, 140)}")
    if not nb.edges:
        st.info("This memory has no edges of the chosen types within this depth: pick another seed, more edge "
                "types or a larger depth.", icon=":material/search:")
    if len(nb.nodes) >= int(limit):
        st.warning(f"“Max memories” ({int(limit)}) cut the walk: memories further out are not shown. Raise it "
                   "in the sidebar, or lower the depth.", icon=":material/content_cut:")
    dark = getattr(st.context.theme, "type", None) == "dark"
    page = attempt(graph.graph_html, nb, path, dark=dark, action="Could not draw the graph")
    if page is not None:
        st.iframe(page, height=graph.GRAPH_HEIGHT_PX + 12, alt="Causal graph around the seed memory")
        clicked_node = graph_clicks.clicked_node("graph_clicks")
        if clicked_node in nb.nodes and clicked_node != seed:  # only a node this page drew
            start_from(clicked_node)
    legend(sorted({e.type.value for e in nb.edges}))
    if path:
        st.subheader("Path from the seed")
        show_table(path_frame(nb, path), "graph_path")
    st.subheader(f"Memories reached ({len(nb.nodes)})")
    frame = nodes_frame(nb)
    clicked = components.result_table(frame, "graph_nodes", "graph", full=frame.assign(
        content=[nb.nodes[i].memory.content for i in frame["id"]]), rows_of=f"_{seed[-8:]}")
    st.caption("Click a row to make that memory the seed.")
    if clicked is not None:
        chosen = str(frame["id"].iloc[clicked])
        if chosen != seed and chosen != st.session_state.get("graph_last_click"):
            st.session_state["graph_last_click"] = chosen
            start_from(chosen)


def start_from(memory_id: str) -> None:
    """Start the graph again from `memory_id` (set before the seed picker is drawn, on the next run)."""
    st.session_state["graph_reseed"] = memory_id
    st.rerun()


LEGEND_NOTES = (
    "★ the seed · ● a memory (size = importance) · red ring: on the highlighted path · "
    "arrows run from cause to effect (a stored “A caused_by B” is drawn B → A); other edges point as stored "
    "(A → B reads “A followed_by B”, …). Labels show when you zoom in; hover a node for its content; "
    "click a node to make it the seed."
)


def legend(types: list[str]) -> None:
    """Node shapes, arrow meaning and edge colours (static, trusted text only)."""
    st.caption(LEGEND_NOTES)
    if not types:
        return
    chips = " ".join(
        f'<span style="display:inline-block;margin-right:14px"><span style="display:inline-block;width:22px;'
        f'height:4px;vertical-align:middle;background:{graph.EDGE_COLOURS.get(t, "#888")}"></span> '
        f"{html.escape(t)}</span>"
        for t in types
    )
    st.html(f'<div style="font-size:0.9rem">{chips}</div>')


def nodes_frame(nb: graph.Neighbourhood) -> pd.DataFrame:
    rows = [
        {
            "depth": n.depth,
            "via": n.edge_type or "seed",
            "direction": n.direction or "",
            "entity": n.memory.entity_id or "",
            "content": views.snippet(n.memory.content, 140),
            "id": i,
        }
        for i, n in sorted(nb.nodes.items(), key=lambda item: (item[1].depth, item[0]))
    ]
    return pd.DataFrame(rows, columns=["depth", "via", "direction", "entity", "content", "id"])


def path_frame(nb: graph.Neighbourhood, path: tuple[str, ...]) -> pd.DataFrame:
    rows = []
    for step, memory_id in enumerate(path):
        node = nb.nodes.get(memory_id)
        if node is None:  # a revision (history) the walk passed through; not drawn
            rows.append({"step": step, "via": "", "direction": "", "content": "(earlier revision)", "id": memory_id})
            continue
        rows.append({"step": step, "via": node.edge_type or "seed", "direction": node.direction or "",
                     "content": views.snippet(node.memory.content, 140), "id": memory_id})
    return pd.DataFrame(rows, columns=["step", "via", "direction", "content", "id"])


main()
