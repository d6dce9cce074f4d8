"""The scale run's stand-in vectors: what docs/benchmarks.md says about them must hold."""

from __future__ import annotations

import math
import time

import numpy as np

from benchmarks import corpus as corpus_mod
from benchmarks.scale import PERTURBATION, PerturbedVectors, assign_bases


def test_perturbed_vectors_stay_near_their_base_yet_never_repeat() -> None:
    rng = np.random.default_rng(3)
    base = rng.standard_normal((2, 384)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    vectors = PerturbedVectors("model", {"a": base[0], "b": base[1]}, seed=5)
    out = vectors.encode(["a", "a", "b"])
    assert out.dtype == np.float32 and out.shape == (3, 384)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    expected = 1.0 / np.sqrt(1.0 + PERTURBATION**2)  # noise orthogonal to the base, in high dimensions
    cos_to_base = [float(out[0] @ base[0]), float(out[1] @ base[0]), float(out[2] @ base[1])]
    assert all(abs(c - expected) < 0.05 for c in cos_to_base), cos_to_base
    assert float(out[0] @ out[1]) < 0.95  # the same text twice: two different memories
    assert abs(float(out[2] @ base[0]) - float(base[1] @ base[0])) < 0.2  # keeps its base's neighbourhood


def test_every_memory_of_a_larger_corpus_gets_a_base_of_its_own_template() -> None:
    base = corpus_mod.generate(300, 7)
    bigger = corpus_mod.generate(900, 7)
    bases = assign_bases(bigger, base, 7)
    assert set(bases) == set(range(bigger.n))
    for i, b in bases.items():
        assert bigger.memories[i].context["template"] == base.memories[b].context["template"]


def _size(n: int, floor_ms: float, similarity_ms: float, reopen_s: float) -> dict:
    def op(p50: float) -> dict:
        return {"p50_ms": p50, "p95_ms": 2 * p50, "ratio_to_floor": round(p50 / floor_ms, 3)}

    return {
        "size": n, "latency_ms": {"floor": op(floor_ms), "similarity": op(similarity_ms)},
        "reopen_s": reopen_s, "reopen_cpu_s": reopen_s / 2, "disk_mib": n / 100, "rss_store_mib": n / 200,
        "disk_kib_per_memory": 10.24, "rss_kib_per_memory": 5.12, "build_memories_per_s": 300.0,
    }


def test_growth_gives_each_decade_its_own_slope_and_skips_reads_a_size_lacks() -> None:
    from benchmarks.growth import exponent, growth

    assert exponent(1.0, 10.0, 1_000, 10_000) == 1.0
    assert exponent(0.0, 10.0, 1_000, 10_000) is None
    # similarity flat over the first decade, then n^0.5; disk linear throughout.
    sizes = [_size(1_000_000, 10.0, 10.0 * 10**0.5, 40.0), _size(10_000, 10.0, 10.0, 1.0),
             _size(100_000, 10.0, 10.0, 2.0)]
    sizes[1]["latency_ms"]["recommended"] = {"p50_ms": 30.0, "p95_ms": 60.0, "ratio_to_floor": 3.0}
    first, second, whole = growth(sizes)
    assert (first["from"], first["to"], second["to"], whole["from"], whole["to"]) == (
        10_000, 100_000, 1_000_000, 10_000, 1_000_000)
    assert first["p50_ms"]["similarity"] == 0.0 and second["p50_ms"]["similarity"] == 0.5
    assert whole["p50_ms"]["similarity"] == 0.25 and whole["ratio_to_floor"]["similarity"] == 0.25
    assert first["disk_mib"] == second["disk_mib"] == 1.0
    assert second["reopen_s"] == round(math.log10(20), 2)
    assert "recommended" not in first["p50_ms"]  # timed at one size only: no slope


def test_load_sampler_summarises_the_samples_since_a_mark() -> None:
    from benchmarks.machine import LoadSampler

    sampler = LoadSampler(every_s=0.01).start()
    try:
        deadline = time.monotonic() + 10
        while len(sampler.samples) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        mark = sampler.mark()
        while len(sampler.samples) < mark + 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        sampler.stop()
    whole, tail = sampler.summary(), sampler.summary(since=mark)
    assert whole is not None and tail is not None
    assert whole["samples"] >= 3 and tail["samples"] == whole["samples"] - mark
    assert whole["min"] <= whole["median"] <= whole["max"]
    assert sampler.summary(since=len(sampler.samples)) is None


def test_scale_section_reports_the_1m_target_and_growth_per_decade(tmp_path) -> None:
    from benchmarks.report import _scale_section

    sizes = [_size(10_000, 10.0, 9.0, 1.0), _size(100_000, 10.0, 10.0, 2.0), _size(1_000_000, 10.0, 16.0, 40.0)]
    scale = {"sizes": sizes, "machine": {"cores": 2}, "base_memories": 10_000, "perturbation": 0.45, "queries": 40,
             "load_average_during_run": {"min": 2.0, "median": 5.5, "max": 9.0, "samples": 10, "every_s": 30}}
    text = "\n".join(_scale_section(scale, tmp_path, tmp_path))
    assert "## Scale: 10k, 100k, 1M" in text
    assert "at 1M): similarity p50 <= 1.5x the floor: 1.60x, missed" in text
    assert "| 10k -> 100k | 100k -> 1M | 10k -> 1M |" in text
    assert "load average 2.0-9.0 (median 5.5)" in text
    assert "16.0 / 32.0 (1.60x / 3.20x)" in text
