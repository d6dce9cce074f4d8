"""The HNSW index: a Chroma collection in cosine space, holding only ids and embeddings.

Chroma's local HNSW reads `ef_search` from the collection configuration when it loads the segment, and
`collection.modify` does not reach an already loaded segment. hnswlib searches with
`ef = max(ef_search, k)`, so the collection is created with the smallest `ef_search` and each query asks
for `max(k, ef_search)` neighbours: the search really runs with the requested `ef_search`, per query,
with no shared state to race on. The extra neighbours are dropped after the query.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine import config
from engine.errors import StoreError

VECTOR_COLLECTION = "memories"  # the collection a store's vectors live in
# HNSW graph build effort for a new vector collection (Chroma's default is 100; pgvector's 64). Measured at
# 100k real MiniLM embeddings on a quiet 2-core machine (two builds each): inserting 256 vectors took 88 ms
# instead of 138 (Chroma's insert is most of what a batched remember adds to its encode), a query for 100
# neighbours 2.5 ms instead of 3.0, recall@10 at ef_search 50 against exact search 0.993 instead of 0.997.
# A collection keeps the value it was made with (Chroma cannot change it), so stores made before keep 100.
HNSW_EF_CONSTRUCTION = 64

log = logging.getLogger(__name__)

_BASE_EF_SEARCH = 1
_UPSERT_BATCH = 5000


@dataclass(frozen=True, slots=True)
class Neighbour:
    id: str
    distance: float


class VectorIndex:
    def __init__(self, collection: Any, client: Any = None, path: Path | None = None) -> None:
        self._collection = collection
        self._client = client
        self.path = path  # the folder of an embedded index (what erasure scrubs); None for a server
        self._lock = threading.Lock()

    @classmethod
    def open_embedded(cls, path: Path, name: str = VECTOR_COLLECTION) -> VectorIndex:
        import chromadb

        client = chromadb.PersistentClient(path=str(path), settings=chromadb.Settings(anonymized_telemetry=False))
        return cls(_get_collection(client, name), client, path)

    @classmethod
    def open_snapshot(cls, path: Path, name: str = VECTOR_COLLECTION) -> VectorIndex:
        """A private copy of a read-only data dir's index, opened from a temporary folder (deleted again when
        the index is garbage-collected or the process exits): Chroma writes to its files even to read them,
        so a read-only index cannot be opened in place. The copy costs time and disk in proportion to it."""
        snapshot = Path(tempfile.mkdtemp(prefix="hebbs-read-only-index-"))
        if path.is_dir():
            shutil.copytree(path, snapshot, dirs_exist_ok=True)
        index = cls.open_embedded(snapshot, name)
        index.path = None  # the copy is not the data dir's index: erasure has nothing to scrub there
        weakref.finalize(index, shutil.rmtree, snapshot, True)
        return index

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """No call of this index into Chroma runs meanwhile. Held while Chroma's SQLite file is read or
        rewritten from outside Chroma (engine/store/vector_files.py): Chroma's SQLite is a second copy of the
        library in this process, and POSIX file locks do not separate two copies in one process (closing one
        copy's connection even drops the other's locks), so only this lock keeps them from corrupting the file
        ("database disk image is malformed" under concurrent recalls and an erasing forget)."""
        with self._lock:
            yield

    def rebuild(self, batches: Iterable[list[tuple[str, np.ndarray]]]) -> None:
        """Drop the collection and fill a new one from `batches` of (id, embedding): the only way to get a
        deleted vector out of HNSW files, where Chroma's delete just marks it."""
        if self._client is None:
            raise RuntimeError("only an embedded vector index can be rebuilt")
        with self._lock:
            name = self._collection.name
            self._client.delete_collection(name)
            self._collection = _get_collection(self._client, name)
        for batch in batches:
            if batch:
                self.upsert([i for i, _ in batch], np.stack([v for _, v in batch]))

    @classmethod
    def open_server(cls, url: str, name: str = VECTOR_COLLECTION) -> VectorIndex:
        """The collection on a Chroma server (`chroma run`) at `url`, e.g. `http://127.0.0.1:8000`."""
        from urllib.parse import urlsplit

        import chromadb

        parts = urlsplit(url if "://" in url else f"http://{url}")
        if not parts.hostname:
            raise StoreError(f"not a Chroma server URL: {url!r} (expected http://host:port)")
        try:
            client = chromadb.HttpClient(
                host=parts.hostname,
                port=parts.port or (443 if parts.scheme == "https" else 8000),
                ssl=parts.scheme == "https",
                settings=chromadb.Settings(anonymized_telemetry=False),
            )
            return cls(_get_collection(client, name))
        except Exception as exc:  # chromadb raises its own and httpx errors for an unreachable server
            raise StoreError(f"cannot reach the Chroma server at {url}: {exc}") from exc

    def upsert(self, ids: Sequence[str], embeddings: np.ndarray | Sequence[np.ndarray]) -> None:
        matrix = np.asarray(embeddings, dtype=np.float32)
        with self._lock:
            for start in range(0, len(ids), _UPSERT_BATCH):
                self._collection.upsert(
                    ids=list(ids[start : start + _UPSERT_BATCH]),
                    embeddings=matrix[start : start + _UPSERT_BATCH],
                )

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self._lock:
                for start in range(0, len(ids), _UPSERT_BATCH):
                    self._collection.delete(ids=list(ids[start : start + _UPSERT_BATCH]))

    def query(self, embedding: np.ndarray, k: int, ef_search: int = config.DEFAULT_EF_SEARCH) -> list[Neighbour]:
        """The k nearest neighbours by cosine distance, searched with the given `ef_search`."""
        if k <= 0:
            return []
        n = max(k, ef_search)
        query = np.asarray(embedding, dtype=np.float32).reshape(1, -1)
        with self._lock:
            try:
                # Chroma 1.x returns min(n, count) neighbours (none from an empty collection), so no count()
                # round trip is needed first; it cost as much as a third of a small query.
                result = self._collection.query(query_embeddings=query, n_results=n, include=["distances"])
            except Exception:
                count = self._collection.count()  # a server that insists on n <= count
                if count == 0:
                    return []
                result = self._collection.query(query_embeddings=query, n_results=min(n, count), include=["distances"])
        if not result["ids"] or not result["ids"][0]:
            return []
        ids, distances = result["ids"][0], result["distances"][0]
        return [Neighbour(i, float(d)) for i, d in zip(ids[:k], distances[:k], strict=True)]

    def count(self) -> int:
        with self._lock:
            return int(self._collection.count())

    def all_ids(self) -> set[str]:
        with self._lock:
            return set(self._collection.get(include=[])["ids"])

    def raw_query(self, embedding: np.ndarray, n: int) -> Any:
        """One plain Chroma query, nothing around it: the floor that benchmarks compare recall with."""
        query = np.asarray(embedding, dtype=np.float32).reshape(1, -1)
        with self._lock:  # uncontended: a few hundred nanoseconds
            return self._collection.query(query_embeddings=query, n_results=n, include=["distances"])


def stored_forms(vector: np.ndarray) -> list[bytes]:
    """The byte strings a vector may be kept as in Chroma's files: as given (its queue) and as hnswlib
    normalises it for cosine space (its HNSW segment: a float32 running sum, then `x / (sqrt + 1e-30)`),
    which differs from the given vector in the last bits even when that is already of unit length."""
    raw = np.asarray(vector, dtype=np.float32)
    total = np.cumsum(raw * raw, dtype=np.float32)[-1] if raw.size else np.float32(0)
    scale = np.float32(1.0) / (np.sqrt(total, dtype=np.float32) + np.float32(1e-30))
    normalised = (raw * scale).astype(np.float32)
    return [raw.astype("<f4").tobytes(), normalised.astype("<f4").tobytes()]


def _get_collection(client: Any, name: str) -> Any:
    return client.get_or_create_collection(
        name,
        configuration={
            "hnsw": {"space": "cosine", "ef_search": _BASE_EF_SEARCH, "ef_construction": HNSW_EF_CONSTRUCTION}
        },
        embedding_function=None,
    )
