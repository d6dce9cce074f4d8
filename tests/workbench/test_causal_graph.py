"""Causal graph: a seed from a search or a recall, depth and edge-type controls, the path to a memory."""

from __future__ import annotations

import json
import re

from streamlit.testing.v1 import AppTest

from engine import Edge, EdgeType
from tests.workbench.conftest import XSS, MakeApp, Store, open_engine
from tests.workbench.helpers import recall, table
from workbench import graph
from workbench.graph import external_resources


def graph_page(at: AppTest) -> str:
    return at.get("iframe")[0].proto.srcdoc


def drawn(page: str, what: str) -> list[dict]:
    """The nodes or edges handed to vis-network (`what` is "Nodes" or "Edges")."""
    match = re.search(rf"var raw{what} = (.*);\n", page)
    assert match
    return json.loads(match.group(1))


def reached(at: AppTest) -> dict[str, int]:
    frame = table(at, "graph_nodes")
    return dict(zip(frame["id"], frame["depth"], strict=True))


def test_search_pick_a_seed_and_walk(make_app: MakeApp, seeded_store: Store) -> None:
    path, ids = seeded_store
    at = make_app(path, "causal_graph")
    at.text_input(key="graph_search").set_value("thermostats recalled").run()
    assert at.selectbox(key="graph_seed").value == ids["helix_recall"]  # the best match is the seed
    assert not at.exception and not at.error
    assert reached(at) == {ids["helix_recall"]: 0, ids["helix_bug"]: 1, ids["helix_release"]: 2}
    at.slider(key="graph_depth").set_value(1).run()
    assert reached(at) == {ids["helix_recall"]: 0, ids["helix_bug"]: 1}


def test_edge_types_filter_the_walk(make_app: MakeApp, seeded_store: Store) -> None:
    path, ids = seeded_store
    at = make_app(path, "causal_graph")
    at.text_input(key="graph_search").set_value("Atlas postmortem rushed launch").run()
    at.selectbox(key="graph_seed").set_value(ids["atlas_postmortem"]).run()
    assert ids["atlas_crash"] in reached(at)
    at.multiselect(key="graph_edge_types").set_value(["related_to"]).run()
    assert reached(at) == {ids["atlas_postmortem"]: 0, ids["atlas_skip"]: 1, ids["lesson"]: 1}
    page = graph_page(at)
    assert [e["title"] for e in drawn(page, "Edges")] == ["related_to · confidence 0.70"] * 1 + [
        "related_to · confidence 0.60"
    ]
    at.multiselect(key="graph_edge_types").set_value([]).run()
    assert "Pick at least one edge type" in at.info[0].value


def test_the_path_to_a_chosen_memory_is_highlighted(
    make_app: MakeApp, seeded_store: Store
) -> None:
    path, ids = seeded_store
    at = make_app(path, "causal_graph")
    at.text_input(key="graph_search").set_value("thermostats recalled").run()
    at.selectbox(key="graph_seed").set_value(ids["helix_recall"]).run()
    at.selectbox(key="graph_target").set_value(ids["helix_release"]).run()
    steps = table(at, "graph_path")
    assert list(steps["id"]) == [ids["helix_recall"], ids["helix_bug"], ids["helix_release"]]
    assert list(steps["via"]) == ["seed", "caused_by", "caused_by"]
    page = graph_page(at)
    assert [e["width"] for e in drawn(page, "Edges")] == [5, 5]  # both edges of the path drawn thick
    assert [n["borderWidth"] for n in drawn(page, "Nodes")] == [4, 4, 4]  # and its memories outlined


def test_a_recall_result_can_be_the_seed(
    make_app: MakeApp, seeded_store: Store
) -> None:
    path, ids = seeded_store
    at = recall(make_app(path), "customers asked for refunds")
    first = at.session_state["lab_ranked_ids"][0]
    assert first == ids["atlas_refunds"]
    at.switch_page("screens/causal_graph.py").run()
    assert at.selectbox(key="graph_seed").options[0].endswith(first[-8:])
    assert at.selectbox(key="graph_seed").value == first


def test_graph_is_offline_and_escapes_untrusted_content(
    make_app: MakeApp, seeded_store: Store
) -> None:
    path, ids = seeded_store
    at = make_app(path, "causal_graph")
    assert at.selectbox(key="graph_seed").value == ids["xss"]  # the newest memory is the default seed
    page = graph_page(at)
    assert external_resources(page) == []
    assert not re.search(r"<script[^>]+src=", page)
    assert "vis.Network" in page  # vis-network is inlined...
    assert "cdnjs" not in page and "jsdelivr" not in page  # ...and nothing comes from a CDN
    assert XSS not in page
    assert "<img" not in page
    assert XSS in table(at, "graph_nodes")["content"].tolist()


def test_arrows_run_from_cause_to_effect_with_a_legend(make_app: MakeApp, seeded_store: Store) -> None:
    cause, effect = "CAUSE", "EFFECT"
    assert graph.drawn_direction(Edge(effect, cause, EdgeType.CAUSED_BY)) == (cause, effect)
    assert graph.drawn_direction(Edge(cause, effect, EdgeType.FOLLOWED_BY)) == (cause, effect)
    path, ids = seeded_store
    at = make_app(path, "causal_graph")
    assert not at.exception and not at.error
    assert any("arrows run from cause to effect" in c.value for c in at.caption)
    at.number_input(key="graph_limit").set_value(2).run()
    assert any("cut the walk" in w.value for w in at.warning)


def test_a_dark_theme_gets_a_transparent_canvas_and_light_labels(seeded_store: Store) -> None:
    path, ids = seeded_store
    nb = graph.neighbourhood(open_engine(path), ids["atlas_crash"], 2)
    page = graph.graph_html(nb, dark=True)
    assert graph.DARK_FONT in page
    assert "background-color: rgba(0,0,0,0)" in page  # the theme's background shows through
