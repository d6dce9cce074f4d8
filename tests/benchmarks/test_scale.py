"""The scale run's stand-in vectors: what docs/benchmarks.md says about them must hold."""

from __future__ import annotations

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
