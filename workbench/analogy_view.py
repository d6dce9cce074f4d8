"""An analogical match drawn as two aligned episode graphs: the cue's above, the memory's below, events in
the order told, participants beside them, relations as arrows, and the mapping as dashed links between them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from engine.analogy.episode_graph import Episode

CUE_Y, MEMORY_Y = 1.0, 0.0
_ROW = {"cue": (CUE_Y, CUE_Y + 0.35), "memory": (MEMORY_Y, MEMORY_Y - 0.35)}


def _positions(ep: Episode, side: str) -> dict[str, tuple[float, float]]:
    event_y, participant_y = _ROW[side]
    pos = {e.id: (float(i), event_y) for i, e in enumerate(sorted(ep.events, key=lambda e: e.order))}
    for i, p in enumerate(ep.participants):
        pos[p.id] = (i + 0.5, participant_y)
    return pos


def _side(fig: go.Figure, ep: Episode, pos: dict[str, tuple[float, float]], name: str, color: str) -> None:
    for kind, a, b in ep.relations:
        (x0, y0), (x1, y1) = pos[a], pos[b]
        fig.add_annotation(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", showarrow=True,
                           arrowhead=2, arrowcolor=color, text="", opacity=0.8)
        fig.add_annotation(x=(x0 + x1) / 2, y=y0 + 0.08, text=kind, showarrow=False, font={"size": 10, "color": color})
    for event, role, participant in ep.roles:
        (x0, y0), (x1, y1) = pos[event], pos[participant]
        fig.add_trace(go.Scatter(x=[x0, x1], y=[y0, y1], mode="lines", line={"color": "#ccc", "width": 1},
                                 hoverinfo="text", text=role, showlegend=False))
    fig.add_trace(go.Scatter(
        x=[pos[e.id][0] for e in ep.events], y=[pos[e.id][1] for e in ep.events], mode="markers+text",
        marker={"size": 16, "color": color}, text=[ep.describe_event(e.id) for e in ep.events],
        textposition="top center" if name == "cue" else "bottom center", name=f"{name} events",
        hovertext=[e.text for e in ep.events], hoverinfo="text"))
    fig.add_trace(go.Scatter(
        x=[pos[p.id][0] for p in ep.participants], y=[pos[p.id][1] for p in ep.participants], mode="markers+text",
        marker={"size": 10, "color": color, "symbol": "square", "opacity": 0.5},
        text=[f"{p.type}" for p in ep.participants], textposition="middle right", name=f"{name} participants",
        hovertext=[p.text for p in ep.participants], hoverinfo="text"))


def mapping_figure(cue: Mapping[str, Any], memory: Mapping[str, Any], mapping: Mapping[str, Any]) -> go.Figure:
    """The cue's and the memory's episode graphs with the mapped events and participants linked."""
    ep1, ep2 = Episode.from_json(cue.get("graph")), Episode.from_json(memory.get("graph"))
    p1, p2 = _positions(ep1, "cue"), _positions(ep2, "memory")
    fig = go.Figure()
    _side(fig, ep1, p1, "cue", "#1f77b4")
    _side(fig, ep2, p2, "memory", "#d62728")
    links = [(m["cue_id"], m["memory_id"]) for m in (*mapping.get("events", []), *mapping.get("participants", []))]
    for a, b in links:
        if a in p1 and b in p2:
            fig.add_trace(go.Scatter(x=[p1[a][0], p2[b][0]], y=[p1[a][1], p2[b][1]], mode="lines",
                                     line={"color": "#2ca02c", "dash": "dash", "width": 2}, name="mapped",
                                     hoverinfo="skip", showlegend=False))
    fig.update_layout(height=360, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      xaxis={"visible": False}, yaxis={"visible": False, "range": [-0.7, 1.7]},
                      title={"text": "cue (top) mapped onto the memory (bottom)", "font": {"size": 12}})
    return fig


def sentence_rows(mapping: Mapping[str, Any], cue: str, content: str) -> list[dict[str, Any]]:
    """Which cue sentence maps to which of the memory's, with both sentences' words (a story's mapping)."""
    rows = []
    for s in mapping.get("sentences", []):
        if s.get("cue_span") and s.get("memory_span"):
            rows.append({"cue sentence": s["cue"] + 1, "cue": cue[slice(*s["cue_span"])],
                         "memory sentence": s["memory"] + 1, "memory": content[slice(*s["memory_span"])],
                         "events mapped": s["events"]})
    return rows


def plot_rows(plot: Mapping[str, Any], cue: str, content: str) -> list[dict[str, Any]]:
    """How a story cue's plot lines up with the memory's (engine/analogy/plot.py): which cue sentence plays the part
    of which, with both sentences' words and how closely they line up once each story's setting is taken out."""
    return [{"cue sentence": s["cue"] + 1, "cue": cue[slice(*s["cue_span"])],
             "memory sentence": s["memory"] + 1, "memory": content[slice(*s["memory_span"])],
             "lines up": s["similarity"]}
            for s in plot.get("sentences", []) if s.get("cue_span") and s.get("memory_span")]


def analogical_fields(result: Any) -> dict[str, Any]:
    """The analogical detail fields a recall result carries, or {}."""
    return next((dict(d.fields) for d in result.strategy_details if d.strategy.value == "analogical"), {})


def mapped_links(figure: go.Figure) -> int:
    """How many mapping links a figure draws (for tests and captions)."""
    return sum(1 for t in figure.data if t.name == "mapped")
