"""Another embedding model on LoCoMo (`make bench-locomo LOCOMO_ARGS="--model mpnet"`), next to the default.

The run is the default model's run with another embedder: the same configs, the same fusion grid on the
tuning half only, the same held-out half. What is kept in locomo.json's `models` entry: each config's tune
and held-out figures (per category), the grid's best point for this model, recall latency, and the model's
cost beside the default model's (benchmarks/model_cost.py), measured in the same run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks import locomo, model_cost
from engine import config


def summary(result: dict[str, Any], model: str, locomo_path: Path) -> dict[str, Any]:
    """The figures of one model's LoCoMo run, and what the model costs beside the default model."""
    configs = {
        name: {"note": value["note"], "tune": value["tune"], "heldout": value["heldout"], "all": value["all"]}
        for name, value in result.items()
        if isinstance(value, dict) and "heldout" in value
    }
    grid = result.get("fusion_grid") or {}
    conversations = locomo.load(locomo_path)
    cues = [q.question for c in conversations if c.sample_id in locomo.HELDOUT for q in c.questions]
    texts = [t.content for c in conversations if c.sample_id in locomo.HELDOUT for t in c.turns]
    names = [config.DEFAULT_EMBEDDING_MODEL, *([model] if model != config.DEFAULT_EMBEDDING_MODEL else [])]
    return {
        "configs": configs,
        "recommended_default": result.get("recommended_default"),
        "ablation_heldout": result.get("ablation_heldout"),
        "fusion_grid": {k: grid[k] for k in ("criterion", "questions", "best", "preset", "top10") if k in grid},
        "latency": result.get("latency"),
        "meta": {**result.get("meta", {}), "model": model},
        "cost": model_cost.compare(names, cues, texts),
    }
