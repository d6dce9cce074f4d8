"""Both embedding backends give the same vectors; the ONNX one runs without torch and exports idempotently."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine import MemoryEngine, config, model_files
from engine.embedding import ONNX_BATCH_ROWS, OnnxEmbedder, SentenceTransformerEmbedder, create_embedder
from engine.errors import ModelLoadError, ValidationError
from engine.onnx_export import ensure_exported

TEXTS = [
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "a",
    "Ünïcödé, émojis 🙂 and CJK 記憶 survive tokenisation.",
    "The deploy failed because the migration locked the users table; we rolled back at 14:05.",
    # Longer than the model's 256-token limit: both backends must truncate at the same place.
    " ".join(f"word{i} of a very long document about memory" for i in range(120)),
    "",
]


@pytest.fixture(scope="module")
def torch_embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


@pytest.mark.slow
def test_onnx_and_torch_give_the_same_vectors(torch_embedder: SentenceTransformerEmbedder) -> None:
    onnx = OnnxEmbedder(batch_size=4)  # several sub-batches of different lengths, run concurrently
    texts = TEXTS * 3
    a = onnx.encode(texts)
    b = torch_embedder.encode(texts)
    assert a.shape == b.shape == (len(texts), 384)
    assert a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(a * b, axis=1)
    assert cosines.min() > 0.99999, cosines
    # Batching never changes a vector: one text alone equals the same text inside a padded batch.
    np.testing.assert_allclose(onnx.encode([TEXTS[0]])[0], a[0], atol=1e-5)


def test_a_batch_embeds_each_text_as_alone() -> None:
    """The batch path (texts sorted by length, cut into padded runs of `ONNX_BATCH_ROWS` rows, run on
    two threads) gives every text the vector it gets when embedded alone, to 1e-6 in cosine."""
    onnx = OnnxEmbedder()
    sentence = "the team moved the launch after the audit found a gap in the billing export"
    texts = [f"{sentence[: 3 + 5 * i % len(sentence)]} ({i})" for i in range(3 * ONNX_BATCH_ROWS + 5)]
    texts += TEXTS  # the empty text, unicode, one over the 256-token limit
    batch = onnx.encode(texts).astype(np.float64)
    alone = np.vstack([onnx.encode([t]) for t in texts]).astype(np.float64)
    cosines = np.sum(batch * alone, axis=1) / np.linalg.norm(batch, axis=1) / np.linalg.norm(alone, axis=1)
    assert np.max(1 - cosines) <= 1e-6, np.max(1 - cosines)


def test_no_texts_give_an_empty_matrix() -> None:
    assert OnnxEmbedder().encode([]).shape == (0, 384)


def test_the_backend_comes_from_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(config.EMBEDDING_BACKEND_ENV, raising=False)
    assert isinstance(create_embedder(), OnnxEmbedder)
    monkeypatch.setenv(config.EMBEDDING_BACKEND_ENV, "torch")
    assert isinstance(create_embedder(), SentenceTransformerEmbedder)
    monkeypatch.setenv(config.EMBEDDING_BACKEND_ENV, "tensorflow")
    with pytest.raises(ValidationError, match="unknown embedding backend 'tensorflow'"):
        create_embedder()


def test_export_is_idempotent() -> None:
    first = ensure_exported()
    stamp = first.stat().st_mtime_ns
    assert ensure_exported() == first
    assert first.stat().st_mtime_ns == stamp  # found in the cache, not exported again


def test_onnx_recall_path_never_imports_torch(tmp_path: Path) -> None:
    """A recall (the command users wait on) imports neither torch nor sentence-transformers. Writes may:
    structure extraction runs spaCy, whose thinc layer imports torch when it is installed."""
    ensure_exported()
    with MemoryEngine(tmp_path / "data", embedder=OnnxEmbedder()) as engine:
        engine.remember("the cat sat on the mat")
    code = (
        "import sys\n"
        "from engine import MemoryEngine\n"
        f"with MemoryEngine({str(tmp_path / 'data')!r}) as e:\n"
        "    assert e.recall('cat', strategies=['similarity'])\n"
        "heavy = sorted(m for m in ('torch', 'sentence_transformers', 'transformers', 'pandas') if m in sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    env = {k: v for k, v in os.environ.items() if k != config.EMBEDDING_BACKEND_ENV}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_export_keeps_what_the_onnx_runtime_reads_beside_the_graph() -> None:
    folder = ensure_exported().parent
    manifest = json.loads((folder / model_files.MANIFEST).read_text())
    assert manifest["model"] == config.DEFAULT_EMBEDDING_MODEL and manifest["format"] == model_files.EXPORT_FORMAT
    weights = model_files.resolve_model_path(config.DEFAULT_EMBEDDING_MODEL)
    for name in model_files.RUNTIME_FILES:
        assert (folder / name).read_bytes() == (weights / name).read_bytes()


def test_without_the_model_package_the_cached_export_embeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A core install has no model package (it requires torch): the graph exported earlier into the model
    cache, with the files copied beside it, gives the same vectors; an empty cache says how to make one."""
    exported = ensure_exported().parent
    copy = tmp_path / "cache" / exported.name
    copy.mkdir(parents=True)
    for path in exported.iterdir():
        if path.name == model_files.ONNX_FILENAME or path.name in (*model_files.RUNTIME_FILES, model_files.MANIFEST):
            os.link(path, copy / path.name)  # the same files, without copying 90 MB
    expected = OnnxEmbedder().encode(TEXTS)

    def not_installed(name: str) -> Path:
        raise ModelLoadError(f"the bundled model package for {name} is not installed")

    monkeypatch.setattr(model_files, "resolve_model_path", not_installed)
    got = OnnxEmbedder(cache_dir=tmp_path / "cache").encode(TEXTS)
    np.testing.assert_allclose(got, expected, atol=1e-6)
    with pytest.raises(ModelLoadError, match=r"is not installed; nor is a graph .*\[export\]"):
        OnnxEmbedder(cache_dir=tmp_path / "empty").encode(["a"])
