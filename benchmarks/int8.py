"""The int8 ONNX embedder against fp32, in one run: encode speed, agreement of the vectors, LoCoMo cost.

    python -m benchmarks.int8 [--locomo PATH] [--cues 200] [--skip-locomo] [--save] [--output int8.json]

- Speed: single-cue encode p50/p95 (cues alternating between the two graphs, so both see the same
  machine) and batch throughput (texts/s) over the same LoCoMo turns, alternating twice.
- Agreement: cosine between the two graphs' vectors for every LoCoMo turn and question.
- Cost: R@5/10/25/50 of similarity alone and of the recommended preset on the tuning half and the held-out
  half (benchmarks/locomo_eval.py; the int8 vectors have their own cache file in benchmarks/.cache).
Writes benchmarks/results/int8.json with --save (`--output NAME`: another file in results/, so a
re-measure on a later preset keeps the earlier one). The int8 graph is made locally from the fp32 one on first
use (nothing downloaded).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import locomo, locomo_eval
from benchmarks.embed_cache import cached_vectors, vector_key
from benchmarks.paths import RESULTS_DIR, display, locomo_path, write_json
from benchmarks.progress import log
from engine.embedding import OnnxEmbedder
from engine.recall.presets import PRESETS

PRECISIONS = ("fp32", "int8")
CONFIGS = ("similarity", "recommended")


def _speed(models: dict[str, OnnxEmbedder], cues: list[str], batch: list[str]) -> dict[str, Any]:
    single: dict[str, list[float]] = {p: [] for p in models}
    for cue in cues:
        for precision, model in models.items():
            start = time.perf_counter()
            model.encode([cue])
            single[precision].append(1000 * (time.perf_counter() - start))
    throughput: dict[str, list[float]] = {p: [] for p in models}
    for _ in range(2):
        for precision, model in models.items():
            start = time.perf_counter()
            model.encode(batch)
            throughput[precision].append(len(batch) / (time.perf_counter() - start))
    out: dict[str, Any] = {}
    for precision in models:
        ms = np.array(single[precision])
        out[precision] = {
            "single_cue_ms_p50": round(float(np.percentile(ms, 50)), 2),
            "single_cue_ms_p95": round(float(np.percentile(ms, 95)), 2),
            "batch_texts_per_s": round(float(np.median(throughput[precision])), 1),
        }
    out["int8_over_fp32"] = {
        "single_cue_p50": round(out["int8"]["single_cue_ms_p50"] / out["fp32"]["single_cue_ms_p50"], 3),
        "batch_throughput": round(out["int8"]["batch_texts_per_s"] / out["fp32"]["batch_texts_per_s"], 3),
    }
    out["cues"] = len(cues)
    out["batch_texts"] = len(batch)
    return out


def _recall(result: dict[str, Any]) -> dict[str, Any]:
    """R@k overall and R@10 per category (multi-hop R@10 is the target with the least margin)."""
    return {
        name: {
            split: {
                **{k: result[name][split][k] for k in (*(f"R@{k}" for k in locomo.KS), "questions")},
                "R@10_by_category": {str(cat): v["R@10"] for cat, v in result[name][split]["by_category"].items()},
            }
            for split in ("tune", "heldout")
        }
        for name in CONFIGS
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    models = {p: OnnxEmbedder(precision=p) for p in PRECISIONS}
    path = locomo_path(args.locomo)
    convs = locomo.load(path)
    questions = [q.question for c in convs for q in c.questions]
    texts = list(dict.fromkeys([t.content for c in convs for t in c.turns] + questions))
    for model in models.values():
        model.encode(["warm up"])
    load = os.getloadavg()
    rng = np.random.default_rng(7)
    cues = [questions[i] for i in rng.choice(len(questions), size=min(args.cues, len(questions)), replace=False)]
    turns = [t.content for c in convs for t in c.turns]
    out: dict[str, Any] = {"speed": _speed(models, cues, turns[: args.batch]), "load_average_before": load}
    log(f"int8 speed: {out['speed']}")

    tables = {p: cached_vectors("locomo", texts, m.encode, vector_key(m)) for p, m in models.items()}
    cos = np.array([float(np.dot(tables["fp32"][t], tables["int8"][t])) for t in texts])
    out["agreement"] = {
        "texts": len(texts),
        "cosine_min": round(float(cos.min()), 4),
        "cosine_p1": round(float(np.percentile(cos, 1)), 4),
        "cosine_median": round(float(np.median(cos)), 4),
        "cosine_mean": round(float(cos.mean()), 4),
    }
    log(f"int8 agreement with fp32: {out['agreement']}")
    if not args.skip_locomo:
        recall = {}
        for precision, model in models.items():
            result = locomo_eval.run(path, model, config_names=list(CONFIGS), grid=False, latency_run=False)
            recall[precision] = _recall(result)
            log(f"LoCoMo {precision}: {recall[precision]}")
        out["locomo"] = recall
        int8, fp32 = recall["int8"], recall["fp32"]
        out["locomo_cost_points"] = {
            name: {
                split: {
                    f"R@{k}": round(100 * (int8[name][split][f"R@{k}"] - fp32[name][split][f"R@{k}"]), 2)
                    for k in locomo.KS
                }
                for split in ("tune", "heldout")
            }
            for name in CONFIGS
        }
        out["locomo_cost_points_r10_by_category"] = {
            name: {
                split: {
                    cat: round(100 * (v - fp32[name][split]["R@10_by_category"][cat]), 2)
                    for cat, v in int8[name][split]["R@10_by_category"].items()
                    if v is not None and fp32[name][split]["R@10_by_category"][cat] is not None
                }
                for split in ("tune", "heldout")
            }
            for name in CONFIGS
        }
    out["recommended_fusion_weights"] = dict(PRESETS["recommended"].fusion.weights)  # which preset was measured
    out["load_average_after"] = os.getloadavg()
    out["locomo_file"] = display(path)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", default=None, help="LoCoMo file (default: beside the repo or $HEBBS_LOCOMO_PATH)")
    parser.add_argument("--cues", type=int, default=200, help="single-cue encodes per precision")
    parser.add_argument("--batch", type=int, default=1000, help="texts in the throughput batch")
    parser.add_argument("--skip-locomo", action="store_true", help="speed and agreement only")
    parser.add_argument("--save", action="store_true", help=f"write {display(RESULTS_DIR / 'int8.json')}")
    parser.add_argument("--output", default="int8.json", help="file name in the results folder for --save")
    args = parser.parse_args()
    result = run(args)
    print(json.dumps(result, indent=2))
    if args.save:
        write_json(RESULTS_DIR / Path(args.output).name, result)


if __name__ == "__main__":
    main()
