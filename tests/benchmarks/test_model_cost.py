"""The cost of an embedding model is measured in a fresh process, and the report shows another model's
LoCoMo figures and cost beside the default model's."""

from __future__ import annotations

from typing import Any

from benchmarks import model_cost, report
from benchmarks.locomo import CATEGORIES, KS
from engine import config

CUES = ["When did Caroline go to the support group?", "What does Melanie paint?", "Where did they camp?"]
TEXTS = [f"Speaker {n}: we talked about the camping trip number {n} and the lake." for n in range(40)]


def test_the_default_models_cost_is_measured_in_a_fresh_process() -> None:
    costs = model_cost.compare([config.DEFAULT_EMBEDDING_MODEL], CUES, TEXTS)
    cost = costs[config.DEFAULT_EMBEDDING_MODEL]
    assert cost["dimension"] == 384 and cost["vector_bytes"] == 1536
    assert 0 < cost["cue_p50_ms"] <= cost["cue_p95_ms"] and cost["cues"] == len(CUES)
    assert cost["ingest_texts"] == len(TEXTS) and cost["ingest_ms_per_1k_texts"] > 0
    assert cost["cue_ratio"] == cost["ingest_ratio"] == 1.0
    assert cost["rss_mib_model"] > 10  # the loaded ONNX session and tokenizer
    assert 50 < cost["disk_mib_weights"] < 200 and 50 < cost["disk_mib_onnx"] < 200  # MiniLM is about 90 MB


def _agg(base: float) -> dict[str, Any]:
    values = {f"R@{k}": base + k / 1000 for k in KS}
    cats = {f"{c} {label}": {"questions": 3, **values} for c, label in CATEGORIES.items()}
    return {"questions": 15, **values, "by_category": cats}


def test_the_report_shows_the_other_model_beside_the_default() -> None:
    default = {"similarity": {"heldout": _agg(0.4)}, "recommended": {"heldout": _agg(0.7)}}
    cost = {"dimension": 768, "cue_p50_ms": 50.0, "cue_ratio": 5.0, "ingest_ms_per_1k_texts": 9000.0,
            "ingest_ratio": 6.0, "rss_mib_model": 500.0, "disk_mib_weights": 418.0, "disk_mib_onnx": 416.0}
    models = {
        "all-mpnet-base-v2": {
            "configs": {"similarity": {"heldout": _agg(0.45)}, "recommended": {"heldout": _agg(0.75)}},
            "fusion_grid": {"best": {"point": {"lexical": 0.3}, "mean": 0.8}, "preset": {"mean": 0.79}},
            "cost": {config.DEFAULT_EMBEDDING_MODEL: {**cost, "dimension": 384, "cue_ratio": 1.0},
                     "all-mpnet-base-v2": cost},
        }
    }
    text = "\n".join(report._models_section(models, default))  # noqa: SLF001
    assert "### all-mpnet-base-v2: held-out R@k (%)" in text
    assert "| recommended | all-mpnet-base-v2 | 75.50 |" in text and "| recommended | default model | 70.50 |" in text
    assert "| all-mpnet-base-v2 | 768 | 50.00 | 5.0x |" in text
    assert "best point lexical 0.3" in text
    assert report._models_section(None, default) == []  # noqa: SLF001 (no other model run: no section)
