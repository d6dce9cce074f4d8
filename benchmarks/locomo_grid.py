"""The fusion settings of the `recommended` preset, chosen by a grid search on LoCoMo's tuning half only.

Each tuning question is searched once (`MemoryEngine.fusion_frame`: the candidate pool and each signal's
per-query z-scores); every grid point then re-weights that same evidence with numpy, exactly as
`FusionFrame.scores` does, so hundreds of points cost seconds instead of hundreds of full runs. The point
with the best mean of R@5/10/25/50 on the tuning half is reported beside the preset's own point; the held-out
half is never read here.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks import locomo
from engine.recall.fusion import FusionFrame
from engine.recall.presets import PRESETS, FusionSettings

# The grid: the fusion settings vary around the preset (a weight left out of a point keeps the preset's).
# Session 5's grid (432 points over similarity_window, lexical, lexical_window, entity_named, neighbour and
# episode weights, similarity fixed at 1) chose similarity_window 0.25 and lexical 0.3, kept here; session 6
# added the unnamed-cue similarity and the episode boost's decay.
GRID: Mapping[str, tuple[float, ...]] = {
    "similarity": (0.5, 0.75),
    "similarity_unnamed": (1.0, 1.5),
    "lexical_window": (0.8, 1.1),
    "entity_named": (1.0, 1.5),
    "neighbour_weight": (0.2, 0.3),
    "episode_weight": (0.6, 0.8, 1.0),
    "episode_decay": (0.9, 0.95),
}
WEIGHT_KEYS = ("similarity", "similarity_window", "similarity_unnamed", "lexical", "lexical_window", "entity_named")


@dataclass(frozen=True)
class Question:
    """One tuning question's evidence before weighting, and the dia id of each candidate."""

    frame: FusionFrame
    dia: tuple[str, ...]
    evidence: tuple[str, ...]


def question(frame: FusionFrame, dia_of: Mapping[str, str], evidence: Sequence[str]) -> Question:
    return Question(frame, tuple(dia_of[i] for i in frame.pool), tuple(evidence))


def settings(point: Mapping[str, float]) -> FusionSettings:
    """A grid point as the fusion settings a request would carry (what it leaves out: the preset's)."""
    full = {**preset_point(), **point}
    return FusionSettings(
        weights={k: v for k, v in full.items() if k in WEIGHT_KEYS},
        neighbour_weight=full["neighbour_weight"],
        episode_weight=full["episode_weight"],
        episode_decay=full["episode_decay"],
    )


def ranking(q: Question, point: Mapping[str, float], k: int) -> list[str]:
    """The dia ids of the best k candidates under `point`, as the engine ranks them."""
    return [q.dia[n] for n in q.frame.ranked(settings(point), k)]


def score(frames: Sequence[Question], point: Mapping[str, float]) -> dict[str, float]:
    """R@k (fractions) over the questions, plus their mean (the selection criterion)."""
    top = max(locomo.KS)
    recalls = {k: [] for k in locomo.KS}  # type: dict[int, list[float]]
    for a in frames:
        got = ranking(a, point, top)
        for k in locomo.KS:
            recalls[k].append(locomo.recall_at_k(got[:k], a.evidence))
    out = {f"R@{k}": float(np.mean(v)) if v else 0.0 for k, v in recalls.items()}
    out["mean"] = float(np.mean([out[f"R@{k}"] for k in locomo.KS]))
    return out


def preset_point(name: str = "recommended") -> dict[str, float]:
    fusion = PRESETS[name].fusion
    point = {k: fusion.weight(k) for k in WEIGHT_KEYS}
    return {**point, "neighbour_weight": fusion.neighbour_weight, "episode_weight": fusion.episode_weight,
            "episode_decay": fusion.episode_decay}


def search(frames: Sequence[Question], grid: Mapping[str, Sequence[float]] = GRID) -> dict[str, Any]:
    """Every grid point's tuning-half R@k; the best point and the preset's own point beside it."""
    names = list(grid)
    rows = []
    for values in itertools.product(*(grid[n] for n in names)):
        point = dict(zip(names, values, strict=True))
        rows.append({"point": point, **{k: round(v, 4) for k, v in score(frames, point).items()}})
    rows.sort(key=lambda r: -r["mean"])
    current = preset_point()
    return {
        "criterion": "mean of R@5, R@10, R@25, R@50 on the tuning half; weights a point leaves out keep the "
        "preset's",
        "questions": len(frames),
        "grid": {n: list(v) for n, v in grid.items()},
        "points": len(rows),
        "best": rows[0] if rows else None,
        "preset": {"point": current, **{k: round(v, 4) for k, v in score(frames, current).items()}},
        "top10": rows[:10],
    }
