"""The calibration view's data and figure: a cue's fused pool, its evidence, its calibrated relevance and how
the four weights rank it (pure functions of the engine's read-only fusion frame; no recall is counted)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from engine import MemoryEngine, ScoringWeights, build_request
from engine.recall import calibration, scoring
from engine.recall.presets import DEFAULT_PRESET
from engine.recall.scoring import WEIGHT_NAMES
from workbench import views

POOL_SHOWN = 50  # the pool's best this many by fused evidence (the composite ranks the fused list's best)
SIGNALS = ("relevance", "recency", "importance", "reinforcement")


def pool_frame(engine: MemoryEngine, cue: str, top: int = POOL_SHOWN) -> pd.DataFrame:
    """The default preset's candidate pool for `cue`, best `top` by fused evidence: fused score, its z over the
    whole pool, the calibrated relevance, and the other three signals now. Read-only: nothing is counted."""
    request = build_request(cue, preset=DEFAULT_PRESET.name)
    frame = engine.fusion_frame(request)
    if not frame.pool:
        return pd.DataFrame(columns=["id", "content", "fused", "fused_z", *SIGNALS])
    fused = frame.scores(request.fusion)
    z = calibration.standardised(fused)
    relevance = calibration.from_z(z)
    kept = frame.top(fused, top)
    ids = [frame.pool[n] for n in kept]
    memories = engine.get_many(ids)
    now = engine.clock.now()
    rows = []
    for n, i in zip(kept, ids, strict=True):
        m = memories.get(i)
        if m is None:
            continue
        s = scoring.signals_for(m, float(relevance[n]), now)
        rows.append({"id": i, "content": m.content, "fused": float(fused[n]), "fused_z": float(z[n]),
                     "relevance": s.relevance, "recency": s.recency, "importance": s.importance,
                     "reinforcement": s.reinforcement})
    return pd.DataFrame(rows)


def ranked(pool: pd.DataFrame, weights: ScoringWeights) -> pd.DataFrame:
    """The pool ranked by the composite score under `weights`, with each signal's contribution and the rank it
    has by relevance alone (how far the other three signals moved it)."""
    if pool.empty:
        return pool.assign(rank=[], relevance_rank=[], score=[])
    w = dict(zip(SIGNALS, weights.as_tuple(), strict=True))
    out = pool.copy()
    for signal in SIGNALS:
        out[f"{signal} part"] = w[signal] * out[signal]
    out["score"] = sum(out[f"{signal} part"] for signal in SIGNALS)
    out["relevance_rank"] = out["relevance"].rank(ascending=False, method="first").astype(int)
    out = out.sort_values(["score", "relevance"], ascending=False, kind="stable").reset_index(drop=True)
    out["rank"] = np.arange(1, len(out) + 1)
    return out


def weight_effects(pool: pd.DataFrame, weights: ScoringWeights, top_k: int) -> pd.DataFrame:
    """What each weight does to the top `top_k`: with that weight set to 0 (the others kept), how many of the
    current top_k drop out, and the largest part it adds to any of them."""
    current = ranked(pool, weights)
    if current.empty:
        return pd.DataFrame(columns=["weight", "value", "top_k changed without it", "largest part in top_k"])
    top = set(current["id"][:top_k])
    rows = []
    for name, signal in zip(WEIGHT_NAMES, SIGNALS, strict=True):
        without = ranked(pool, replace(weights, **{name: 0.0}))
        changed = len(top - set(without["id"][:top_k]))
        rows.append({"weight": name, "value": getattr(weights, name), "top_k changed without it": changed,
                     "largest part in top_k": float(current[f"{signal} part"][:top_k].max())})
    return pd.DataFrame(rows)


def curve_figure(pool: pd.DataFrame, in_top: Mapping[str, bool]) -> go.Figure:
    """Fused evidence (z over the pool) against calibrated relevance: the fitted curve, and the pool's members
    (filled: in the top_k under the current weights)."""
    z = np.linspace(min(-2.0, float(pool["fused_z"].min()) if not pool.empty else -2.0),
                    max(6.0, float(pool["fused_z"].max()) if not pool.empty else 6.0), 200)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=z, y=calibration.from_z(z), mode="lines", name="calibration",
                             line={"color": "#888"}, hoverinfo="skip"))
    chosen = [bool(in_top.get(i, False)) for i in pool["id"]]
    for flag, label, symbol in ((True, "in top_k", "circle"), (False, "rest of the pool", "circle-open")):
        part = pool[[c == flag for c in chosen]]
        fig.add_trace(go.Scatter(
            x=part["fused_z"], y=part["relevance"], mode="markers", name=label, marker={"symbol": symbol, "size": 9},
            text=[views.hover_text(c) for c in part["content"]],
            hovertemplate="z %{x:.2f} → relevance %{y:.3f}<br>%{text}<extra></extra>",
        ))
    fig.update_layout(xaxis_title="fused evidence (z over the cue's pool)", yaxis_title="calibrated relevance",
                      yaxis_range=[0, 1.02], height=380, margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    return fig
