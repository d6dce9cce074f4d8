"""The embedding model is chosen by configuration, and a store keeps the model that wrote its vectors.

Searching or writing a store with another model is refused before that model loads (so this runs in CI without the
optional all-mpnet-base-v2). The tests that embed with all-mpnet-base-v2 itself skip when `make setup-mpnet`
has not been run: CI does not download its 420 MB.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import MemoryEngine, config
from engine.embedding import Embedder, OnnxEmbedder, create_embedder
from engine.errors import EmbeddingModelMismatchError, ModelLoadError
from engine.model_files import resolve_model_path
from engine.model_parts import MPNET_PART_PACKAGES, assembled_dir
from interfaces.cli import main


def _mpnet_installed() -> bool:
    try:
        importlib.metadata.distribution(MPNET_PART_PACKAGES[-1])
    except importlib.metadata.PackageNotFoundError:
        return (assembled_dir(config.MPNET_EMBEDDING_MODEL) / "model.safetensors").is_file()
    return True


needs_mpnet = pytest.mark.skipif(not _mpnet_installed(), reason="all-mpnet-base-v2 not installed (make setup-mpnet)")


@pytest.fixture
def minilm_store(tmp_path: Path, embedder: Embedder) -> Path:
    """A store whose vectors the bundled MiniLM wrote."""
    data = tmp_path / "data"
    with MemoryEngine(data, embedder=embedder) as engine:
        engine.remember("The cooling fan of rack 7 failed on Monday.")
        engine.remember("We replaced the fan and the rack cooled down.")
    return data


def test_aliases_name_the_models(monkeypatch: pytest.MonkeyPatch) -> None:
    assert config.canonical_model_name("mpnet") == config.MPNET_EMBEDDING_MODEL
    assert config.canonical_model_name("sentence-transformers/all-mpnet-base-v2") == config.MPNET_EMBEDDING_MODEL
    assert config.canonical_model_name("MiniLM") == config.DEFAULT_EMBEDDING_MODEL
    monkeypatch.delenv(config.MODEL_ENV, raising=False)
    assert create_embedder().name == config.DEFAULT_EMBEDDING_MODEL  # the default stays MiniLM
    monkeypatch.setenv(config.MODEL_ENV, "mpnet")
    assert create_embedder().name == config.MPNET_EMBEDDING_MODEL  # loaded on first use only


def test_a_store_records_the_model_and_width_that_wrote_it(minilm_store: Path, embedder: Embedder) -> None:
    with MemoryEngine(minilm_store, embedder=embedder) as engine:
        meta = engine._store.get_meta  # noqa: SLF001 (the store's own record is what is under test)
        assert meta(config.EMBEDDING_MODEL_META_KEY) == config.DEFAULT_EMBEDDING_MODEL
        assert meta(config.EMBEDDING_DIMENSION_META_KEY) == str(embedder.encode(["x"]).shape[1]) == "384"


def test_a_minilm_store_refuses_mpnet_before_loading_it_and_changes_nothing(
    minilm_store: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(config.MODEL_ENV, "mpnet")
    with MemoryEngine(minilm_store) as engine:
        assert len(engine.list_memories()) == 2  # reads that embed nothing work with any model
        for attempt in (
            lambda: engine.recall("fan failed", strategies=["similarity"]),
            lambda: engine.remember("A third memory, in another model's vectors."),
        ):
            with pytest.raises(EmbeddingModelMismatchError) as caught:
                attempt()
            message = str(caught.value)
            assert "'all-MiniLM-L6-v2' (384 dimensions)" in message and "'all-mpnet-base-v2'" in message
            assert f"{config.MODEL_ENV}=all-MiniLM-L6-v2" in message
    monkeypatch.delenv(config.MODEL_ENV)
    with MemoryEngine(minilm_store, embedder=embedder) as engine:  # nothing was written or changed
        assert engine.stats()["memories"] == 2
        assert engine.recall("fan failed", strategies=["similarity"])[0].memory.content.startswith("The cooling")


def test_the_cli_reports_the_mismatch_in_one_line_with_exit_2(
    minilm_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(config.MODEL_ENV, "mpnet")
    result = CliRunner().invoke(main, ["--data-dir", str(minilm_store), "recall", "fan"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "all-MiniLM-L6-v2" in lines[0] and "Traceback" not in result.output


def test_an_unknown_model_name_is_a_load_error_not_a_download() -> None:
    with pytest.raises(ModelLoadError, match="never downloaded"):
        resolve_model_path("intfloat/e5-large")


@pytest.fixture(scope="module")
def mpnet() -> Iterator[OnnxEmbedder]:
    model = OnnxEmbedder("mpnet")
    model.encode(["warm up"])
    yield model


@needs_mpnet
def test_mpnet_vectors_do_not_depend_on_padding(mpnet: OnnxEmbedder) -> None:
    """MPNet derives position ids from its pad token: a text alone and inside a padded batch must agree.
    (The export itself is checked against torch's vectors before it is installed.)"""
    texts = ["Caroline went to the LGBTQ support group on 7 May 2023.", "a", "a longer sentence " * 30]
    batch = mpnet.encode(texts)
    assert batch.shape == (3, 768)
    for n, text in enumerate(texts):
        assert float(mpnet.encode([text])[0] @ batch[n]) > 0.99999
    minilm_like = mpnet.encode(["The fan failed.", "The cooling fan broke down.", "Lunch was pasta."])
    assert minilm_like[0] @ minilm_like[1] > minilm_like[0] @ minilm_like[2]  # a real model, not noise


@needs_mpnet
def test_an_mpnet_store_refuses_minilm(tmp_path: Path, mpnet: OnnxEmbedder, embedder: Embedder) -> None:
    data = tmp_path / "data"
    with MemoryEngine(data, embedder=mpnet) as engine:
        engine.remember("The cooling fan of rack 7 failed on Monday.")
        assert engine.recall("fan broke", strategies=["similarity"])
        assert engine._store.get_meta(config.EMBEDDING_DIMENSION_META_KEY) == "768"  # noqa: SLF001
    with (
        MemoryEngine(data, embedder=embedder) as engine,
        pytest.raises(EmbeddingModelMismatchError, match="'all-mpnet-base-v2' \\(768 dimensions\\)"),
    ):
        engine.recall("fan broke", strategies=["similarity"])
