"""View models: turn engine results into DataFrames and plotly figures. No engine logic lives here.

Every piece of memory content that reaches a figure goes through `plotly_text` first: plotly renders a
small HTML subset in labels and hovers, and memory content is untrusted input that must show as text.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import json
import math
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from engine import Edge, EdgeType, Memory, MemoryEngine, RecallResult, ScoringWeights
from engine.models import MemoryKind, iso
from engine.recall.scoring import contributions

SIGNALS = ("relevance", "recency", "importance", "reinforcement")
SIGNAL_COLOURS = {
    "relevance": "#4C78A8",
    "recency": "#F58518",
    "importance": "#54A24B",
    "reinforcement": "#B279A2",
}
KIND_COLOURS = {
    MemoryKind.EPISODE.value: "#4C78A8",
    MemoryKind.DOCUMENT.value: "#F58518",
    MemoryKind.PROPOSITION.value: "#54A24B",
    MemoryKind.INSIGHT.value: "#E45756",
    MemoryKind.REVISION.value: "#9D9D9D",
}


# --- text --------------------------------------------------------------------------------------------
def snippet(text: str, width: int = 80) -> str:
    """The content on one line, cut to `width` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:&])")


def md_escape(text: str) -> str:
    """Backslash-escape markdown (and Streamlit's `:icon:` / `$latex$` syntax) so text shows as typed.

    Streamlit renders labels, captions and alerts as markdown; memory content must not become links,
    images or formatting there.
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def md_snippet(text: str, width: int = 80) -> str:
    """`snippet` escaped for a markdown label, caption or alert."""
    return md_escape(snippet(text, width))


def plotly_text(text: str) -> str:
    """Escape text for plotly labels and hovers, which decode &amp; &lt; &gt; and show the rest as is."""
    return html.escape(text, quote=False)


@functools.lru_cache(maxsize=4096)
def hover_text(text: str, width: int = 80, max_lines: int = 8) -> str:
    """Escaped content wrapped into a few lines for a plotly hover box (memoised: slider moves redraw it)."""
    lines = textwrap.wrap(" ".join(text.split()), width) or [""]
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], "…"]
    return "<br>".join(plotly_text(line) for line in lines)


# --- recall lab --------------------------------------------------------------------------------------
def ranks(results: Sequence[RecallResult]) -> dict[str, int]:
    """1-based rank of each memory id in an ordered result list."""
    return {r.memory.id: i for i, r in enumerate(results, start=1)}


def rank_moves(baseline: Sequence[RecallResult], current: Sequence[RecallResult]) -> dict[str, int]:
    """How many places each result moved up (positive) or down (negative) from its baseline rank."""
    before = ranks(baseline)
    return {memory_id: before[memory_id] - rank for memory_id, rank in ranks(current).items() if memory_id in before}


def arrow(move: int) -> str:
    """▲ n when a result moved up n places, ▼ n when it moved down, = when it stayed."""
    if move > 0:
        return f"▲ {move}"
    if move < 0:
        return f"▼ {-move}"
    return "="


def strategies_of(result: RecallResult) -> str:
    return ", ".join(d.strategy.value for d in result.strategy_details)


def when(moment: datetime) -> str:
    """A stored time as people read it: minutes, UTC named once (not a raw `+00:00` offset)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


@dataclasses.dataclass(frozen=True)
class Source:
    """Where a memory came from: a readable line and the page that opens it (a relative link)."""

    label: str
    link: str


def source_of(memory: Memory, document: Memory | None = None) -> Source:
    """A memory's source: the document it was split from (title), the conversation and speaker of a message,
    the file it was indexed from; `document` is the memory its `proposition_of` edge points to, if any."""
    ctx = memory.context or {}
    title = str(ctx.get("title") or ctx.get("source") or "").strip()
    parts = []
    if document is not None:
        doc_title = str((document.context or {}).get("title") or "").strip()
        parts.append(f"document “{doc_title or snippet(document.content, 50)}”")
    elif ctx.get("format") == "conversation" or ctx.get("conversation"):
        parts.append(f"conversation “{title or ctx.get('conversation')}”"
                     + (f", session {ctx['session']}" if ctx.get("session") not in (None, "") else ""))
    elif memory.kind == MemoryKind.DOCUMENT:
        parts.append(f"document “{title or snippet(memory.content, 50)}”")
    elif title:
        parts.append(f"“{title}”")
    if ctx.get("speaker"):
        parts.append(f"said by {ctx['speaker']}")
    target = document.id if document is not None else memory.id
    return Source(", ".join(parts) or f"added directly ({memory.kind.value})", f"memories?memory={target}")


def sources(engine: MemoryEngine, memories: Sequence[Memory]) -> dict[str, Source]:
    """`source_of` for each memory, reading the documents propositions were split from through the facade."""
    parents: dict[str, str] = {}
    for m in memories:
        if m.kind == MemoryKind.PROPOSITION:
            edge = next((e for e in engine.edges_of(m.id)
                         if e.type == EdgeType.PROPOSITION_OF and e.source == m.id), None)
            if edge is not None:
                parents[m.id] = edge.target
    documents = engine.get_many(list(set(parents.values()))) if parents else {}
    return {m.id: source_of(m, documents.get(parents.get(m.id, ""))) for m in memories}


RESULT_COLUMNS = ["rank", "score", "move", "content", "source", "found by", "open", *SIGNALS, "created", "entity",
                  "kind", "id"]


def results_frame(results: Sequence[RecallResult], moves: Mapping[str, int],
                  found: Mapping[str, Source] | None = None) -> pd.DataFrame:
    """The ranked table of the recall lab: rank and score first (they are what ranks), the memory, where it
    came from and which strategies found it, then the signals."""
    found = found or {}
    rows = []
    for rank, r in enumerate(results, start=1):
        source = found.get(r.memory.id)
        rows.append(
            {
                "rank": rank,
                "score": round(r.score, 4),
                "move": arrow(moves.get(r.memory.id, 0)),
                "content": snippet(r.memory.content, 400),
                "source": source.label if source else "",
                "found by": strategies_of(r),
                "open": source.link if source else "",
                **{name: round(value, 4) for name, value in r.signals.to_dict().items()},
                "created": r.memory.created_at.strftime("%Y-%m-%d %H:%M"),
                "entity": r.memory.entity_id or "",
                "kind": r.memory.kind.value,
                "id": r.memory.id,
            }
        )
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)


def contributions_frame(results: Sequence[RecallResult], weights: ScoringWeights) -> pd.DataFrame:
    """One row per result: each signal times its weight (they add up to the score)."""
    rows = []
    for rank, r in enumerate(results, start=1):
        rows.append({"rank": rank, "id": r.memory.id, **contributions(r.signals, weights), "score": r.score})
    return pd.DataFrame(rows, columns=["rank", "id", *SIGNALS, "score"])


def contributions_figure(results: Sequence[RecallResult], weights: ScoringWeights) -> go.Figure:
    """A horizontal stacked bar per result: the four weighted contributions to its score.

    Built from one dict (a single validation pass): this runs on every slider move.
    """
    frame = contributions_frame(results, weights)
    labels = [f"#{rank} {plotly_text(snippet(r.memory.content, 40))}" for rank, r in enumerate(results, start=1)]
    hovers = [hover_text(r.memory.content, 60, 4) for r in results]
    traces = [
        {
            "type": "bar",
            "name": name,
            "y": labels,
            "x": frame[name].tolist(),
            "orientation": "h",
            "marker": {"color": SIGNAL_COLOURS[name]},
            "customdata": hovers,
            "hovertemplate": f"{name}: %{{x:.3f}}<br>%{{customdata}}<extra></extra>",
        }
        for name in SIGNALS
    ]
    layout = {
        "barmode": "stack",
        "height": max(220, 34 * len(results) + 90),
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0, "traceorder": "normal"},
        "xaxis": {"title": {"text": "weighted contribution to the composite score"}},
        "yaxis": {"autorange": "reversed"},
    }
    return go.Figure({"data": traces, "layout": layout})


def breakdown_frame(result: RecallResult, weights: ScoringWeights) -> pd.DataFrame:
    """One result's score, signal by signal: raw value, weight, contribution."""
    raw = result.signals.to_dict()
    parts = contributions(result.signals, weights)
    weight = dict(zip(SIGNALS, weights.as_tuple(), strict=True))
    return pd.DataFrame(
        {
            "signal": list(SIGNALS),
            "value": [round(raw[s], 4) for s in SIGNALS],
            "weight": [weight[s] for s in SIGNALS],
            "contribution": [round(parts[s], 4) for s in SIGNALS],
        }
    )


def details_table(results: Sequence[RecallResult]) -> pd.DataFrame:
    """Every strategy detail of every result, one row each (computed once per recall: weights don't change it)."""
    rows: list[dict[str, Any]] = []
    for r in results:
        for detail in r.strategy_details:
            row: dict[str, Any] = {"id": r.memory.id}
            for key, value in detail.to_dict().items():
                if isinstance(value, list | tuple):
                    value = " → ".join(str(v) for v in value)
                elif isinstance(value, float):
                    value = round(value, 4)
                row[key] = value
            rows.append(row)
    frame = pd.DataFrame(rows)
    for column in frame.columns:  # a column mixing numbers and text is shown as text
        values = frame[column].dropna()
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            frame[column] = ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
                             for v in frame[column]]
    return frame


def details_in_rank_order(table: pd.DataFrame, ranked_ids: Sequence[str]) -> pd.DataFrame:
    """The details table sorted by the current ranking, with each row's result rank in `#`."""
    if table.empty:
        return table
    order = {memory_id: rank for rank, memory_id in enumerate(ranked_ids, start=1)}
    ranked = table.assign(**{"#": table["id"].map(order)}).sort_values("#", kind="stable")
    return ranked[["#", *[c for c in table.columns if c != "id"], "id"]]


# --- the first screen -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class StoreOverview:
    """The store's shape for a first screen: counts, the newest memories, cues taken from its data."""

    counts: dict[str, int]
    recent: pd.DataFrame
    cues: list[str]


RECENT_SHOWN = 6
EXAMPLE_CUES = 4


def example_cues(memories: Sequence[Memory], n: int = EXAMPLE_CUES) -> list[str]:
    """Cues a newcomer can try, taken from the data (newest first): titles of indexed documents and
    conversations, then a question about each entity with memories."""
    titles = [str((m.context or {}).get("title") or "").strip() for m in memories]
    entities = [f"What happened with {m.entity_id}?" for m in memories if m.entity_id]
    cues = list(dict.fromkeys(t for t in titles if t))[: max(1, n // 2)]
    cues += [e for e in dict.fromkeys(entities) if e not in cues]
    return cues[:n]


def store_overview(engine: MemoryEngine) -> StoreOverview:
    """Counts from the record store (no vector index opened), memories by kind, the newest memories."""
    stats = engine.stats(vector_index=False)
    counts = {"memories": int(stats["memories"] or 0), "edges": int(stats["edges"] or 0),
              "entities": int(stats["entities"] or 0)}
    for kind in MemoryKind:
        total = engine.list_page(kind=kind.value, limit=1).total
        if total:
            counts[f"{kind.value}s"] = total
    recent = engine.list_memories(limit=200, include_revisions=False)
    table = memories_frame(recent[:RECENT_SHOWN])[["created", "entity", "kind", "content"]]
    return StoreOverview(counts, table, example_cues(recent))


# --- memories, timeline ------------------------------------------------------------------------------
def memories_frame(memories: Iterable[Memory]) -> pd.DataFrame:
    """A table of memories: when, entity, kind, importance, content, id."""
    rows = [
        {
            "created": when(m.created_at),
            "entity": m.entity_id or "",
            "kind": m.kind.value,
            "importance": m.importance,
            "accessed": m.access_count,
            "content": snippet(m.content, 160),
            "id": m.id,
        }
        for m in memories
    ]
    columns = ["created", "entity", "kind", "importance", "accessed", "content", "id"]
    return pd.DataFrame(rows, columns=columns)


def field_text(value: Any) -> str:
    """A memory field as text: times in UTC minutes, the context as JSON (never a Python repr)."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return when(value)
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=str) if value else ""
    return str(value)


def memory_fields_frame(memory: Memory) -> pd.DataFrame:
    """A memory's fields (all but its content) as a two-column table."""
    data = {f.name: getattr(memory, f.name) for f in dataclasses.fields(memory) if f.name != "content"}
    return pd.DataFrame({"field": list(data), "value": [field_text(v) for v in data.values()]})


def revisions_frame(current: Memory, earlier: Sequence[Memory]) -> pd.DataFrame:
    """A memory's history, newest first: the current state, then each kept revision (content, importance,
    entity), with the time each state was written."""
    rows = [{"state": "current", "written": when(current.updated_at), "content": current.content,
             "importance": current.importance, "entity": current.entity_id or ""}]
    rows += [{"state": f"revision {len(earlier) - i}", "written": when(m.updated_at), "content": m.content,
              "importance": m.importance, "entity": m.entity_id or ""} for i, m in enumerate(earlier)]
    return pd.DataFrame(rows, columns=["state", "written", "content", "importance", "entity"])


EDGE_COLUMNS = ["other", "direction", "type", "confidence", "other_id"]


def edges_frame(memory_id: str, edges: Sequence[Edge], memories: Mapping[str, Memory]) -> pd.DataFrame:
    """A memory's edges, read from its side: the other memory's content first (what people read), then
    direction, type and confidence; the other memory's id last."""
    rows = []
    for e in edges:
        outgoing = e.source == memory_id
        other = e.target if outgoing else e.source
        other_memory = memories.get(other)
        rows.append(
            {
                "other": snippet(other_memory.content, 200) if other_memory else "(missing)",
                "direction": "out →" if outgoing else "← in",
                "type": e.type.value,
                "confidence": e.confidence,
                "other_id": other,
            }
        )
    return pd.DataFrame(rows, columns=EDGE_COLUMNS)


def edges_with_neighbours(engine: MemoryEngine, memory_id: str) -> pd.DataFrame:
    """`edges_frame` for one memory, reading its edges and neighbours through the facade."""
    edges = engine.edges_of(memory_id)
    others = [e.target if e.source == memory_id else e.source for e in edges]
    return edges_frame(memory_id, edges, engine.get_many(others))


def timeline_frame(memories: Iterable[Memory]) -> pd.DataFrame:
    """The points of the timeline: one per memory with an entity."""
    rows = [
        {
            "created_at": m.created_at,
            "entity": m.entity_id,
            "kind": m.kind.value,
            "importance": m.importance,
            "id": m.id,
            "hover": hover_text(m.content),
            "when": iso(m.created_at),
        }
        for m in memories
        if m.entity_id is not None
    ]
    return pd.DataFrame(rows, columns=["created_at", "entity", "kind", "importance", "id", "hover", "when"])


TIMELINE_HOVER = (
    "<b>%{customdata[2]}</b> · importance %{customdata[3]:.2f}<br>%{customdata[1]}<extra>%{fullData.name}</extra>"
)


def marker_size(importance: float) -> float:
    return 8 + 30 * float(importance)


SPREAD = 0.36  # how far (in rows) same-day points of one entity fan out around their row


def spread_offsets(frame: pd.DataFrame) -> list[float]:
    """A vertical offset per point so that memories of one entity on the same day sit side by side instead of
    on top of each other (documents stay on the row's centre line)."""
    offsets = [0.0] * len(frame)
    if not len(frame):
        return offsets
    days = [f"{e}|{pd.Timestamp(t).date()}" for e, t in zip(frame["entity"], frame["created_at"], strict=True)]
    groups: dict[str, list[int]] = {}
    for position, (day, kind) in enumerate(zip(days, frame["kind"], strict=True)):
        if kind != MemoryKind.DOCUMENT.value:
            groups.setdefault(day, []).append(position)
    for members in groups.values():
        n = len(members)
        if n == 1:
            continue
        for i, position in enumerate(members):
            offsets[position] = SPREAD * (2 * i / (n - 1) - 1)
    return offsets


def timeline_figure(frame: pd.DataFrame, selected_id: str | None = None) -> go.Figure:
    """Memories over time, one row per entity; size is importance, colour is kind; hover shows content.

    Same-day memories of an entity fan out around its row; documents are drawn last (on top) as diamonds.
    """
    fig = go.Figure()
    entities = sorted({str(e) for e in frame["entity"]}) if len(frame) else []
    row = {e: i for i, e in enumerate(entities)}
    placed = frame.assign(y=[row[str(e)] + o for e, o in zip(frame["entity"], spread_offsets(frame), strict=True)])
    kinds = sorted(placed["kind"].unique(), key=lambda k: (k == MemoryKind.DOCUMENT.value, str(k)))
    for kind in kinds:
        group = placed[placed["kind"] == kind]
        document = kind == MemoryKind.DOCUMENT.value
        fig.add_trace(
            go.Scatter(
                name=str(kind),
                x=group["created_at"],
                y=group["y"],
                mode="markers",
                marker={
                    "size": [marker_size(i) + (6 if document else 0) for i in group["importance"]],
                    "color": KIND_COLOURS.get(str(kind), "#72B7B2"),
                    "opacity": 0.95 if document else 0.8,
                    "symbol": "diamond" if document else "circle",
                    "line": {"width": 1 if document else 0.5, "color": "#333333" if document else "#FFFFFF"},
                },
                customdata=list(zip(group["id"], group["hover"], group["when"], group["importance"], strict=True)),
                hovertemplate=TIMELINE_HOVER,
            )
        )
    chosen = placed[placed["id"] == selected_id] if selected_id is not None else placed.iloc[0:0]
    if len(chosen):  # a ring around the selected memory
        point = chosen.iloc[0]
        fig.add_trace(
            go.Scatter(
                name="selected",
                showlegend=False,
                x=[point["created_at"]],
                y=[point["y"]],
                mode="markers",
                marker={"size": marker_size(point["importance"]) + 8, "color": "rgba(0,0,0,0)",
                        "line": {"width": 3, "color": "#D62728"}},
                customdata=[[point["id"], point["hover"], point["when"], point["importance"]]],
                hovertemplate=TIMELINE_HOVER,
            )
        )
    fig.update_layout(
        height=max(300, 90 * max(len(entities), 1) + 160),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"title": "kind", "orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        xaxis={"title": "created at", "rangeslider": {"visible": True}, "type": "date"},
        yaxis={"title": "entity", "tickmode": "array", "tickvals": list(range(len(entities))),
               "ticktext": [plotly_text(e) for e in entities], "range": [-0.6, len(entities) - 0.4],
               "zeroline": False},
        clickmode="event+select",
    )
    return fig


# --- analogies ---------------------------------------------------------------------------------------
def structure_roles(structure: Mapping[str, Any]) -> dict[str, list[str]]:
    """Group a structure's `role:value` features by role."""
    roles: dict[str, list[str]] = {}
    for feature in structure.get("features", []):
        role, _, value = str(feature).partition(":")
        roles.setdefault(role if value else "feature", []).append(value or role)
    return {role: sorted(values) for role, values in sorted(roles.items())}


def structure_comparison(cue: Mapping[str, Any], memory: Mapping[str, Any]) -> pd.DataFrame:
    """The cue's structure side by side with a memory's, role by role, with what they share."""
    a, b = structure_roles(cue), structure_roles(memory)
    rows = []
    for role in sorted(set(a) | set(b)):
        mine, theirs = set(a.get(role, [])), set(b.get(role, []))
        rows.append(
            {
                "role": role,
                "cue": ", ".join(sorted(mine)),
                "memory": ", ".join(sorted(theirs)),
                "shared": ", ".join(sorted(mine & theirs)),
            }
        )
    return pd.DataFrame(rows, columns=["role", "cue", "memory", "shared"])


def analogical_detail(result: RecallResult) -> dict[str, Any] | None:
    for detail in result.strategy_details:
        if detail.strategy.value == "analogical":
            return detail.to_dict()
    return None


def analogy_frame(results: Sequence[RecallResult]) -> pd.DataFrame:
    """One row per analog: its analogical relevance split into embedding and structural parts."""
    rows = []
    for rank, r in enumerate(results, start=1):
        d = analogical_detail(r) or {}
        alpha = float(d.get("alpha", 0.5))
        e_sim = float(d.get("embedding_similarity", 0.0))
        s_sim = float(d.get("structural_similarity", 0.0))
        rows.append(
            {
                "rank": rank,
                "score": round(r.score, 4),
                "relevance": round(float(d.get("relevance", 0.0)), 4),
                "embedding_similarity": round(e_sim, 4),
                "structural_similarity": round(s_sim, 4),
                "from_embedding": round(alpha * float(d.get("embedding_part", e_sim)), 4),
                "from_structure": round((1 - alpha) * float(d.get("structural_part", s_sim)), 4),
                "shared_structure": ", ".join(d.get("shared_structure", [])),
                "entity": r.memory.entity_id or "",
                "content": snippet(r.memory.content, 120),
                "id": r.memory.id,
            }
        )
    columns = ["rank", "score", "relevance", "embedding_similarity", "structural_similarity", "from_embedding",
               "from_structure", "shared_structure", "entity", "content", "id"]
    return pd.DataFrame(rows, columns=columns)


def analogy_figure(frame: pd.DataFrame, contents: Sequence[str]) -> go.Figure:
    """Stacked bars: how much of each analog's relevance came from the embedding and from structure."""
    labels = [f"#{rank} {plotly_text(snippet(c, 40))}" for rank, c in zip(frame["rank"], contents, strict=True)]
    fig = go.Figure()
    for column, name, colour in (
        ("from_embedding", "alpha × embedding similarity", "#4C78A8"),
        ("from_structure", "(1 − alpha) × structural similarity", "#E45756"),
    ):
        fig.add_trace(go.Bar(name=name, y=labels, x=frame[column], orientation="h", marker_color=colour,
                             hovertemplate=f"{name}: %{{x:.3f}}<extra></extra>"))
    fig.update_layout(
        barmode="stack",
        height=max(220, 34 * len(frame) + 90),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0, "traceorder": "normal"},
        xaxis_title="analogical relevance",
        yaxis={"autorange": "reversed"},
    )
    return fig


# --- ingest ------------------------------------------------------------------------------------------
def summary_dict(summary: object) -> dict[str, Any]:
    """An indexing summary as a plain dict, whatever shape the engine returns it in."""
    if hasattr(summary, "to_dict"):
        data = summary.to_dict()
    elif dataclasses.is_dataclass(summary) and not isinstance(summary, type):
        data = dataclasses.asdict(summary)
    elif isinstance(summary, Mapping):
        data = dict(summary)
    elif hasattr(summary, "__dict__"):
        data = {k: v for k, v in vars(summary).items() if not k.startswith("_")}
    else:
        data = {"summary": summary}
    return {str(k): _plain(v) for k, v in data.items()}


def _plain(value: Any) -> Any:
    """JSON-friendly: lists and dicts kept, other objects as text."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)
