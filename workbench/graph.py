"""The causal graph view: the memories a causal recall reaches from a seed, drawn with pyvis.

The HTML is self-contained (vis-network inlined from the pyvis package, no CDN). Every piece of text that
reaches it (node labels, node and edge tooltips) is HTML-escaped in Python; the page's own script decodes
it exactly once, as RCDATA, into plain text: vis-network draws labels on a canvas and tooltips get a text
node, so no memory content is ever parsed as markup. Memory content is untrusted input.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyvis
from jinja2 import ChoiceLoader, DictLoader, Environment, FileSystemLoader
from pyvis.network import Network

from engine import Edge, EdgeType, MemoryEngine
from engine.api.responses import NeighbourNode
from engine.models import iso
from workbench.views import snippet

EDGE_COLOURS: dict[str, str] = {
    EdgeType.CAUSED_BY.value: "#E45756",
    EdgeType.FOLLOWED_BY.value: "#4C78A8",
    EdgeType.RELATED_TO.value: "#72B7B2",
    EdgeType.ENTITY_RELATION.value: "#54A24B",
    EdgeType.PROPOSITION_OF.value: "#EECA3B",
    EdgeType.REVISED_FROM.value: "#9D9D9D",
    EdgeType.CONTRADICTS.value: "#B279A2",
}
SEED_COLOUR = "#F2B701"
NODE_COLOUR = "#97C2FC"
PATH_COLOUR = "#D62728"
GRAPH_HEIGHT_PX = 600
SMALL_GRAPH = 8  # up to this many nodes every label is drawn
HUBS_LABELLED = 5  # in a larger graph, this many best-connected memories are labelled at every zoom
LABEL_CHARS = 28  # labels are short (the tooltip holds the whole content)
DARK_FONT = "#E6E6E6"
LIGHT_FONT = "#262730"

_PYVIS_TEMPLATES = Path(pyvis.__file__).resolve().parent / "templates"

# Our own page (pyvis's default template pulls bootstrap from a CDN and, when a title contains "href",
# writes titles into the page with innerHTML). vis-network and its CSS are included inline.
_TEMPLATE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<style>{% include 'lib/vis-9.1.2/vis-network.css' %}</style>
<script type="text/javascript">{% include 'lib/vis-9.1.2/vis-network.min.js' %}</script>
<style>
  html, body { margin: 0; padding: 0; font-family: "Source Sans Pro", sans-serif; }
  html, body { background: transparent; }
  #mynetwork { width: {{ width }}; height: {{ height }}; background-color: {{ bgcolor }};
               border: 1px solid rgba(128, 128, 128, 0.35); border-radius: 6px; box-sizing: border-box; }
  .hebbs-tip { white-space: pre-wrap; max-width: 420px; font-size: 13px; line-height: 1.35; }
  div.vis-tooltip { background: #fffbe6; color: #222; }
</style>
</head>
<body>
<div id="mynetwork" data-ready="false"></div>
<script type="text/javascript">
  // All text arrives HTML-escaped. Decode it once, as RCDATA (a textarea never creates elements), into
  // plain text: labels are drawn on the canvas, tooltips are text nodes.
  function decoded(escaped) {
    var decoder = document.createElement("textarea");
    decoder.innerHTML = escaped;
    return decoder.value;
  }
  function tooltip(escaped) {
    var tip = document.createElement("div");
    tip.className = "hebbs-tip";
    tip.textContent = decoded(escaped);
    return tip;
  }
  var rawNodes = {{ nodes|tojson }};
  var rawEdges = {{ edges|tojson }};
  [rawNodes, rawEdges].forEach(function (items) {
    items.forEach(function (item) {
      if (typeof item.label === "string") { item.label = decoded(item.label); }
      if (typeof item.title === "string") { item.title = tooltip(item.title); }
    });
  });
  var container = document.getElementById("mynetwork");
  var network = new vis.Network(
    container, { nodes: new vis.DataSet(rawNodes), edges: new vis.DataSet(rawEdges) }, {{ options|safe }}
  );
  // Labels: drawn only when zoomed in far enough to read them without overlap, and always for the
  // seed, the highlighted path and the best-connected memories; hovering a node shows its content.
  var LABEL_ZOOM = 1.25;
  var labelled = rawNodes.filter(function (n) { return n.alwaysLabel; }).map(function (n) { return n.id; });
  function showLabels(scale) {
    var nodes = network.body.data.nodes;
    nodes.update(rawNodes.map(function (n) {
      var on = scale >= LABEL_ZOOM || labelled.indexOf(n.id) >= 0 || rawNodes.length <= {{ small_graph }};
      return { id: n.id, font: { size: on ? 13 : 0 } };
    }));
  }
  network.on("zoom", function (params) { showLabels(params.scale); });
  // Clicking a node asks the page to make it the seed (the page's click bridge passes it to Python,
  // which accepts only ids of nodes it drew).
  network.on("click", function (params) {
    if (params.nodes.length === 1 && window.parent !== window) {
      window.parent.postMessage({ type: "{{ click_message }}", id: String(params.nodes[0]) }, "*");
    }
  });
  network.on("hoverNode", function (params) {
    network.body.data.nodes.update({ id: params.node, font: { size: 13 } });
  });
  network.on("blurNode", function (params) {
    if (network.getScale() < LABEL_ZOOM && labelled.indexOf(params.node) < 0 && rawNodes.length > {{ small_graph }}) {
      network.body.data.nodes.update({ id: params.node, font: { size: 0 } });
    }
  });
  showLabels(1);
  network.once("stabilizationIterationsDone", function () {
    network.setOptions({ physics: false });
    network.fit({ animation: false });  // the whole graph (the seed included) inside the canvas, at any width
    showLabels(network.getScale());
    container.setAttribute("data-ready", "true");
  });
  if (rawNodes.length <= 1) { container.setAttribute("data-ready", "true"); }
  window.hebbsNetwork = network;
</script>
</body>
</html>
"""

CLICK_MESSAGE = "hebbs-graph-seed"  # the message a clicked node posts to the page around the graph
_TEMPLATE = _TEMPLATE.replace("{{ small_graph }}", str(SMALL_GRAPH)).replace("{{ click_message }}", CLICK_MESSAGE)

_OPTIONS = {
    "nodes": {"font": {"multi": False, "size": 13, "face": "sans-serif"}, "borderWidth": 1},
    "edges": {"smooth": {"type": "continuous"}, "arrows": {"to": {"enabled": True, "scaleFactor": 0.6}}},
    "interaction": {"hover": True, "tooltipDelay": 120, "navigationButtons": False},
    "layout": {"improvedLayout": True},
    "physics": {
        "solver": "barnesHut",
        "barnesHut": {"gravitationalConstant": -9000, "springLength": 160, "springConstant": 0.03,
                      "avoidOverlap": 0.6},
        "stabilization": {"enabled": True, "iterations": 300},
    },
}

_EXTERNAL = re.compile(
    r"""<(?:script|link|img|iframe|source|embed)\b[^>]*?\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//[^"'\s>]+""",
    re.IGNORECASE,
)


def escape_text(text: str) -> str:
    """HTML-escape a label or tooltip; the page decodes it once, into plain text."""
    return html.escape(text, quote=True)


def external_resources(page: str) -> list[str]:
    """Tags in an HTML page that would load something from another host (there must be none)."""
    return [m.group(0) for m in _EXTERNAL.finditer(page)]


@dataclass
class Neighbourhood:
    """The engine's neighbourhood of a seed (`MemoryEngine.neighbourhood`), its nodes keyed by memory id."""

    seed: str
    nodes: dict[str, NeighbourNode] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    truncated: bool = False

    def path_to(self, memory_id: str) -> tuple[str, ...]:
        node = self.nodes.get(memory_id)
        return node.path if node else ()


def neighbourhood(
    engine: MemoryEngine,
    seed: str,
    max_depth: int,
    edge_types: Collection[str] | None = None,
    limit: int = 100,
) -> Neighbourhood:
    """The memories within `max_depth` edges of `seed` (nearest first, at most `limit`) and the stored edges
    among them: the engine's neighbourhood query, the one the REST route serves."""
    found = engine.neighbourhood(
        seed, depth=max_depth, max_nodes=limit, edge_types=None if edge_types is None else list(edge_types)
    )
    return Neighbourhood(found.seed, {n.memory.id: n for n in found.nodes}, list(found.edges), found.truncated)


def path_edges(path: Sequence[str]) -> set[frozenset[str]]:
    """The unordered pairs of consecutive memories on a path."""
    return {frozenset(pair) for pair in zip(path, path[1:], strict=False)}


def best_connected(nb: Neighbourhood, n: int = HUBS_LABELLED) -> set[str]:
    """The `n` memories with the most edges in the drawing (ties: nearer the seed, then id)."""
    degree = dict.fromkeys(nb.nodes, 0)
    for e in nb.edges:
        for end in (e.source, e.target):
            if end in degree:
                degree[end] += 1
    ranked = sorted(degree, key=lambda i: (-degree[i], nb.nodes[i].depth, i))
    return {i for i in ranked[:n] if degree[i] > 0}


def drawn_direction(edge: Edge) -> tuple[str, str]:
    """Arrows run from cause to effect: a stored `A caused_by B` is drawn B -> A; other edges as stored."""
    if edge.type == EdgeType.CAUSED_BY:
        return edge.target, edge.source
    return edge.source, edge.target


def graph_html(nb: Neighbourhood, highlight: Sequence[str] = (), height_px: int = GRAPH_HEIGHT_PX,
               dark: bool = False) -> str:
    """A self-contained HTML page drawing the neighbourhood; `highlight` is a path of ids to emphasise.

    `dark` draws for a dark theme (transparent canvas, light label text)."""
    net = Network(height=f"{height_px}px", width="100%", directed=True, cdn_resources="in_line",
                  bgcolor="rgba(0,0,0,0)", font_color=DARK_FONT if dark else LIGHT_FONT)
    on_path = set(highlight)
    pairs = path_edges(highlight)
    hubs = best_connected(nb)
    for memory_id, node in sorted(nb.nodes.items(), key=lambda item: (item[1].depth, item[0])):
        m = node.memory
        is_seed = memory_id == nb.seed
        title = "\n".join(
            [
                m.content,
                "",
                f"{'seed · ' if is_seed else ''}depth {node.depth}"
                + (f" · via {node.edge_type} ({node.direction})" if node.edge_type else ""),
                f"{m.entity_id or 'no entity'} · {m.kind.value} · {iso(m.created_at)}",
                m.id,
            ]
        )
        colour = SEED_COLOUR if is_seed else NODE_COLOUR
        net.add_node(
            memory_id,
            label=escape_text(snippet(m.content, LABEL_CHARS)),
            title=escape_text(title),
            color={"background": colour, "border": PATH_COLOUR if memory_id in on_path else "#2B7CE9"},
            borderWidth=4 if memory_id in on_path else 1,
            size=14 + 16 * m.importance + (6 if is_seed else 0),
            shape="star" if is_seed else "dot",
            alwaysLabel=is_seed or memory_id in on_path or memory_id in hubs,
            font={"color": DARK_FONT if dark else LIGHT_FONT, "size": 13},
        )
    for e in nb.edges:
        highlighted = frozenset((e.source, e.target)) in pairs
        colour = EDGE_COLOURS.get(e.type.value, "#888888")
        start, end = drawn_direction(e)
        net.add_edge(
            start,
            end,
            title=escape_text(f"{e.type.value} · confidence {e.confidence:.2f}"),
            color={"color": colour, "highlight": colour, "hover": colour},
            width=5 if highlighted else 1.5,
            dashes=bool(pairs) and not highlighted,
        )
    net.options = _OPTIONS
    net.templateEnv = Environment(
        loader=ChoiceLoader([DictLoader({"hebbs_graph.html": _TEMPLATE}), FileSystemLoader(str(_PYVIS_TEMPLATES))]),
        autoescape=False,
    )
    net.path = "hebbs_graph.html"
    page = net.generate_html()
    leaks = external_resources(page)
    if leaks:  # the graph must work offline; never ship a page that needs a CDN
        raise RuntimeError(f"graph page would load external resources: {leaks[:3]}")
    return page
