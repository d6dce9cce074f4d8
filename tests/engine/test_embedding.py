"""Both embedding backends give the same vectors; the ONNX one runs without torch and exports idempotently."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine import MemoryEngine, config
from engine.embedding import OnnxEmbedder, SentenceTransformerEmbedder, create_embedder
from engine.errors import ValidationError
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
    """The batch path (texts sorted by length, cut into padded runs of `config.ONNX_BATCH_ROWS` rows, run on
    two threads) gives every text the vector it gets when embedded alone, to 1e-6 in cosine."""
    onnx = OnnxEmbedder()
    sentence = "the team moved the launch after the audit found a gap in the billing export"
    texts = [f"{sentence[: 3 + 5 * i % len(sentence)]} ({i})" for i in range(3 * config.ONNX_BATCH_ROWS + 5)]
    texts += TEXTS  # the empty text, unicode, one over the 256-token limit
    batch = onnx.encode(texts).astype(np.float64)
    alone = np.vstack([onnx.encode([t]) for t in texts]).astype(np.float64)
    cosines = np.sum(batch * alone, axis=1) / np.linalg.norm(batch, axis=1) / np.linalg.norm(alone, axis=1)
    assert np.max(1 - cosines) <= 1e-6, np.max(1 - cosines)


def test_one_text_gets_the_vector_of_its_batch_tokenization() -> None:
    """A single text is tokenized with the tokenizer's `encode` (no hand-off to its worker pool): the same
    ids, type ids and mask as `encode_batch`, truncation included, so exactly the same vector."""
    onnx = OnnxEmbedder()
    model = onnx._load()
    for text in TEXTS:
        batched = model.tokenizer.encode_batch([text, "another text beside it"])[0]
        single = model.tokenizer.encode(text)
        assert (single.ids, single.type_ids, single.attention_mask) == (
            batched.ids, batched.type_ids, batched.attention_mask
        )
        np.testing.assert_array_equal(onnx.encode([text])[0], model.run([batched])[0])


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
