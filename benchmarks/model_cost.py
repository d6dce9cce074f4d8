"""What an embedding model costs: ms per cue, ms per 1,000 texts embedded at ingest, memory, disk.

Each model is measured in a fresh process (`python -m benchmarks.model_cost --model NAME`), so its resident
memory is its own and not the sum of every model the parent loaded. Models are measured one after the other
on the same texts; on a busy machine compare the ratio, not the absolute figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

CUES = 60
INGEST_TEXTS = 1000


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _mib(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / (1 << 20)


def measure(model: str, cues: Sequence[str], texts: Sequence[str]) -> dict[str, Any]:
    """In this process: load `model` on the ONNX backend, then time single cues and an ingest-sized batch."""
    from engine.embedding import EMBED_BATCH_SIZE, OnnxEmbedder
    from engine.model_files import onnx_path, resolve_model_path

    before = _rss_mib()
    embedder = OnnxEmbedder(model)
    started = time.perf_counter()
    dimension = int(embedder.encode(["warm up"]).shape[1])
    load_s = time.perf_counter() - started
    loaded = _rss_mib()
    times = []
    for cue in cues:
        t0 = time.perf_counter()
        embedder.encode([cue])
        times.append(1000 * (time.perf_counter() - t0))
    batch = EMBED_BATCH_SIZE * 4  # what the write path hands the embedder at once
    t0 = time.perf_counter()
    for start in range(0, len(texts), batch):
        embedder.encode(texts[start : start + batch])
    ingest_ms = 1000 * (time.perf_counter() - t0)
    model_dir = resolve_model_path(embedder.name)
    return {
        "model": embedder.name,
        "dimension": dimension,
        "cue_p50_ms": round(float(np.median(times)), 2),
        "cue_p95_ms": round(float(np.percentile(times, 95)), 2),
        "cues": len(times),
        "ingest_ms_per_1k_texts": round(ingest_ms * 1000 / max(1, len(texts)), 1),
        "ingest_texts": len(texts),
        "load_s": round(load_s, 2),
        "rss_mib_model": round(loaded - before, 1),
        "rss_mib_process": round(_rss_mib(), 1),
        "disk_mib_weights": round(_mib(model_dir), 1),
        "disk_mib_onnx": round(_mib(onnx_path(model_dir)), 1),
        "vector_bytes": 4 * dimension,
    }


def measure_in_subprocess(model: str, cues: Sequence[str], texts: Sequence[str]) -> dict[str, Any]:
    """`measure` in a fresh interpreter (clean memory figures); the texts travel on stdin."""
    payload = json.dumps({"model": model, "cues": list(cues), "texts": list(texts)})
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.model_cost"], input=payload, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"measuring {model} failed: {done.stderr.strip()[-500:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def compare(models: Sequence[str], cues: Sequence[str], texts: Sequence[str]) -> dict[str, Any]:
    """Every model's cost, measured one after the other on the same texts, and each one's ratio to the first."""
    cues = list(cues)[:CUES]
    texts = list(texts)[:INGEST_TEXTS]
    costs = {m: measure_in_subprocess(m, cues, texts) for m in models}
    base = costs[models[0]]
    for cost in costs.values():
        cost["cue_ratio"] = round(cost["cue_p50_ms"] / base["cue_p50_ms"], 2)
        cost["ingest_ratio"] = round(cost["ingest_ms_per_1k_texts"] / base["ingest_ms_per_1k_texts"], 2)
    return {model: costs[model] for model in models}


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description="Measure one embedding model (reads a JSON job on stdin).").parse_args(argv)
    job = json.loads(sys.stdin.read())
    print(json.dumps(measure(job["model"], job["cues"], job["texts"])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
