"""The int8 ONNX embedder: quantised locally from the fp32 graph, close to fp32's vectors, chosen by config."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import MemoryEngine, config
from engine.embedding import OnnxEmbedder, create_embedder
from engine.errors import ValidationError
from engine.onnx_export import MIN_INT8_COSINE, ensure_exported

TEXTS = [
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "a",
    "The deploy failed because the migration locked the users table; we rolled back at 14:05.",
    "Melanie painted a sunrise over the lake last summer.",
    " ".join(f"word{i} of a very long document about memory" for i in range(120)),
]


@pytest.fixture(scope="module")
def int8() -> OnnxEmbedder:
    return OnnxEmbedder(precision="int8")


def test_int8_graph_is_quantised_beside_the_fp32_one() -> None:
    fp32, quantised = ensure_exported(precision="fp32"), ensure_exported(precision="int8")
    assert quantised.parent == fp32.parent and quantised != fp32
    # int8 weights: the file is far smaller than the float graph (about a quarter).
    assert quantised.stat().st_size < 0.5 * fp32.stat().st_size
    stamp = quantised.stat().st_mtime_ns
    assert ensure_exported(precision="int8") == quantised and quantised.stat().st_mtime_ns == stamp


def test_int8_vectors_are_close_to_fp32_but_not_equal(int8: OnnxEmbedder) -> None:
    a = int8.encode(TEXTS)
    b = OnnxEmbedder(precision="fp32").encode(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384) and a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(a * b, axis=1)
    assert cosines.min() > MIN_INT8_COSINE, cosines
    assert cosines.max() < 0.999999, "the int8 graph gave fp32's vectors exactly: was it quantised?"
    # Unlike fp32, a vector depends a little on its batch: dynamic quantisation scales each activation
    # tensor by its own range, padding included. Close, not equal.
    alone = int8.encode([TEXTS[0]])[0]
    assert float(alone @ a[0]) > MIN_INT8_COSINE
    # The nearest text stays the nearest: similarity order agrees with fp32 on a clear case.
    cue = int8.encode(["who went to the support group?"])[0]
    assert int(np.argmax(a @ cue)) == 0


def test_precision_comes_from_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(config.EMBEDDING_PRECISION_ENV, raising=False)
    assert OnnxEmbedder().precision == "fp32"
    monkeypatch.setenv(config.EMBEDDING_PRECISION_ENV, "INT8")
    embedder = create_embedder("onnx")
    assert isinstance(embedder, OnnxEmbedder) and embedder.precision == "int8"
    monkeypatch.setenv(config.EMBEDDING_PRECISION_ENV, "int4")
    with pytest.raises(ValidationError, match="unknown embedding precision 'int4'"):
        create_embedder("onnx")


def test_an_engine_on_int8_remembers_and_recalls(int8: OnnxEmbedder, tmp_path: Path) -> None:
    with MemoryEngine(tmp_path / "data", embedder=int8) as engine:
        ids = [engine.remember(t).id for t in TEXTS[:4]]
        hits = engine.recall("which release did the migration break?", strategies=["similarity"], top_k=2)
        assert hits[0].memory.id == ids[2]
