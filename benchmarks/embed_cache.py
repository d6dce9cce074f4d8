"""Embeddings computed once and reused: building a 100,000-memory store should not re-run the model each time.

`CachingEmbedder` wraps the real embedder: texts it has a vector for are answered from memory, anything
else goes to the model. The engine's whole write path (validation, structure extraction, SQLite, Chroma,
indexes) still runs; only the model call is skipped for known texts. Timed writes use fresh texts, so the
model runs there.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from benchmarks.paths import CACHE_DIR


class CachingEmbedder:
    """An `Embedder` answering known texts from a table and the rest from the wrapped model."""

    def __init__(self, inner: object, table: dict[str, np.ndarray] | None = None) -> None:
        self.inner = inner
        self.name: str = inner.name  # type: ignore[attr-defined]
        self.table: dict[str, np.ndarray] = table if table is not None else {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self.table]
        if missing:
            vectors = self.inner.encode(missing)  # type: ignore[attr-defined]
            with self._lock:
                self.table.update(zip(missing, vectors, strict=True))
        with self._lock:
            self.misses += len(missing)
            self.hits += len(texts) - len(missing)
            return np.stack([self.table[t] for t in texts]).astype(np.float32, copy=False)


def vector_key(model: object) -> str:
    """What a cache of `model`'s vectors is keyed by: its name, plus its precision when not fp32 (the int8
    ONNX graph has the fp32 one's name but gives slightly different vectors)."""
    name: str = model.name  # type: ignore[attr-defined]
    precision = getattr(model, "precision", "fp32")
    return name if precision == "fp32" else f"{name}/{precision}"


def _key(texts: Sequence[str], model: str) -> str:
    digest = hashlib.sha256(model.encode())
    for t in texts:
        digest.update(t.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def cached_vectors(
    label: str,
    texts: Sequence[str],
    encode: Callable[[list[str]], np.ndarray],
    model: str,
    progress: Callable[[int, int], None] | None = None,
    chunk: int = 2048,
    cache_dir: Path = CACHE_DIR,
) -> dict[str, np.ndarray]:
    """text -> vector for every distinct text, from `benchmarks/.cache/` when the same texts were embedded
    before with the same model (the file name carries a hash of both), else computed and saved."""
    unique = list(dict.fromkeys(texts))
    key = _key(unique, model)
    path = cache_dir / f"{label}-{key}.npy"
    if path.exists():
        matrix = np.load(path)
        if matrix.shape[0] == len(unique):
            if progress:
                progress(len(unique), len(unique))
            return dict(zip(unique, matrix, strict=True))
    # Chunks are saved as they finish, so an interrupted first run resumes instead of starting over.
    parts_dir = cache_dir / f"{label}-{key}.parts"
    parts_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    for number, start in enumerate(range(0, len(unique), chunk)):
        part_path = parts_dir / f"{number:05d}-{chunk}.npy"
        if part_path.exists():
            part = np.load(part_path)
        else:
            part = np.asarray(encode(unique[start : start + chunk]), dtype=np.float32)
            np.save(part_path, part)
        parts.append(part)
        if progress:
            progress(min(start + chunk, len(unique)), len(unique))
    matrix = np.concatenate(parts) if parts else np.zeros((0, 384), dtype=np.float32)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, matrix)
    tmp.replace(path)
    shutil.rmtree(parts_dir, ignore_errors=True)
    return dict(zip(unique, matrix, strict=True))
