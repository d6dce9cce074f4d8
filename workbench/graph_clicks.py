"""The bridge that turns a click on a node of the causal graph into a new seed.

The graph is a self-contained page in an iframe; a clicked node posts `graph.CLICK_MESSAGE` with its id
to the app page. This small `st.components.v2` component, mounted beside the graph, listens for that
message and hands the id to Python as a trigger value (one rerun per click, no page reload, so the
session keeps its state). Python accepts only ids of nodes it drew.
"""

from __future__ import annotations

import json

import streamlit as st

from workbench.graph import CLICK_MESSAGE

_JS = """
export default function (component) {
  const { setTriggerValue } = component;
  function onMessage(event) {
    const data = event.data;
    if (data && data.type === MESSAGE && typeof data.id === "string" && data.id.length < 200) {
      setTriggerValue("seed", data.id);
    }
  }
  window.addEventListener("message", onMessage);
  return () => window.removeEventListener("message", onMessage);
}
""".replace("MESSAGE", json.dumps(CLICK_MESSAGE), 1)

_bridge = st.components.v2.component("hebbs_graph_clicks", js=_JS)


def clicked_node(key: str) -> str | None:
    """Mount the bridge; the id of the node clicked since the last run, if any."""
    result = _bridge(key=key, on_seed_change=lambda: None, height=0)
    seed = getattr(result, "seed", None)
    return seed if isinstance(seed, str) else None
