"""The compiled BM25 kernel (engine/index/bm25_kernel.py) answers as numpy scoring every posting does: the same
rows, the same floats, ties broken by memory id; and `LexicalPostings.search` through it equals its numpy path
and SQLite's own BM25 on a store full of exact ties, with changes held beside the segment (new, revised and
forgotten memories), and from two threads at once."""

from __future__ import annotations

import random
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import MemoryEngine, config
from engine import index as engine_index
from engine.index import bm25_kernel, postings
from engine.index.postings import LexicalPostings
from engine.store.lexical import TABLES

K1 = config.LEXICAL_BM25_K1
VOCABULARY = ["webhook", "retry", "invoice", "export", "pricing", "launch", "legal", "night", "partner", "audit"]


def _numpy_best(rows: np.ndarray, counts: np.ndarray, lengths: np.ndarray, spans: list[tuple[int, int]],
                weights: list[float], k1: float, b: float, mean_length: float, stale: np.ndarray, rank: np.ndarray,
                limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The plain version: a score array added to term by term, then sorted by (score desc, rank asc)."""
    scores = np.zeros(len(stale), dtype=np.float64)
    for (start, end), weight in zip(spans, weights, strict=True):
        r, c = rows[start:end], counts[start:end]
        keep = ~stale[r]
        r, c = r[keep], c[keep]
        tf = c.astype(np.float64)
        norm = k1 if b == 0.0 else k1 * (1.0 - b + b * lengths[r] / mean_length)
        scores[r] += weight * tf * (k1 + 1.0) / (tf + norm)
    found = np.flatnonzero(scores)
    order = np.lexsort((rank[found], -scores[found]))[:limit]
    return found[order], scores[found[order]]


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    width=st.integers(1, 400),
    terms=st.integers(1, 6),
    limit=st.integers(1, 60),
    b=st.sampled_from([0.0, 0.75]),
    stale_share=st.sampled_from([None, 0.0, 0.1, 0.5]),  # None: an empty array (no row is stale)
    top_count=st.integers(1, 4),
)
def test_kernel_equals_numpy_scoring_every_posting(seed: int, width: int, terms: int, limit: int, b: float,
                                                   stale_share: float | None, top_count: int) -> None:
    rng = np.random.default_rng(seed)
    lists = [np.sort(rng.choice(width, size=int(rng.integers(0, width + 1)), replace=False)) for _ in range(terms)]
    rows = np.concatenate(lists).astype(np.int32)
    counts = rng.integers(1, top_count + 1, size=len(rows)).astype(np.int32)  # few distinct values: many ties
    ends = np.cumsum([len(x) for x in lists]).astype(np.int64)
    starts = ends - np.array([len(x) for x in lists], dtype=np.int64)
    # idf is positive; negative weights too (a row's 0 must never come back into a full heap of negative scores)
    weights = rng.uniform(0.1 if seed % 2 else -2.0, 5.0, size=terms)
    lengths = rng.integers(1, 30, size=width).astype(np.int32)
    stale = rng.random(width) < (stale_share or 0.0)
    rank = rng.permutation(width).astype(np.int64)
    scratch = np.zeros(width, dtype=np.float64)

    marked = stale if stale_share is not None else np.zeros(0, dtype=bool)
    got_rows, got_scores = bm25_kernel.best_rows(rows, counts, lengths, starts, ends, weights, K1, b, 9.5, marked,
                                                 rank, limit, scratch)
    order = np.lexsort((rank[got_rows], -got_scores))
    want_rows, want_scores = _numpy_best(rows, counts, lengths, list(zip(starts, ends, strict=True)),
                                         list(weights), K1, b, 9.5, stale, rank, limit)
    assert got_rows[order].tolist() == want_rows.tolist()
    assert got_scores[order].tobytes() == want_scores.tobytes()  # the same floats, bit for bit
    assert not scratch.any()  # left zeroed for the next search


def _texts(rng: random.Random, count: int) -> list[dict[str, str]]:
    """Short texts from a small vocabulary, a word often repeated: most rows tie exactly with many others."""
    return [{"content": " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(1, 5)))} for _ in range(count)]


def _held(engine: MemoryEngine) -> LexicalPostings:
    held = engine._indexes.lexical_postings()  # noqa: SLF001 - the search under test
    assert held is not None
    held.catch_up()
    return held


def _search(held: LexicalPostings, table: str, words: list[str], limit: int, b: float, compiled: bool,
            monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float]]:
    with monkeypatch.context() as m:
        m.setattr(config, "LEXICAL_COMPILED_MIN_POSTINGS", -1 if compiled else 10**12)
        return held.search(table, words, limit, K1, b)


def test_search_through_the_kernel_equals_numpy_and_sqlite(engine: MemoryEngine,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postings, "MERGE_MIN", 10_000)  # the changes below stay held beside the segment
    called: list[int] = []
    kernel = bm25_kernel.best_rows

    def counted(*args: object, **kwargs: object) -> tuple[np.ndarray, np.ndarray]:
        called.append(1)
        return kernel(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(bm25_kernel, "best_rows", counted)
    rng = random.Random(5)
    ids = [m.id for m in engine.remember_many(_texts(rng, 300))]
    held = _held(engine)
    store = engine._store  # noqa: SLF001

    def check() -> None:
        for _ in range(25):
            words = rng.sample(VOCABULARY, rng.randint(1, 4))
            for table in TABLES:
                for limit in (1, 5, 30):
                    compiled = _search(held, table, words, limit, 0.0, True, monkeypatch)
                    assert compiled == _search(held, table, words, limit, 0.0, False, monkeypatch)
                    sql = store.lexical_search(table, words, limit)  # SQLite's own BM25: shares no code
                    assert [i for i, _ in compiled] == [i for i, _ in sql]
                    assert np.allclose([s for _, s in compiled], [s for _, s in sql], rtol=1e-9, atol=0)
                    with_lengths = _search(held, table, words, limit, 0.75, True, monkeypatch)
                    assert with_lengths == _search(held, table, words, limit, 0.75, False, monkeypatch)

    check()
    engine.remember_many(_texts(rng, 60))
    for memory_id in rng.sample(ids, 30):
        engine.revise(memory_id, content=_texts(rng, 1)[0]["content"])
    held.catch_up()
    assert held._ids  # noqa: SLF001 - the changes are held, not merged
    check()
    for memory_id in rng.sample(ids, 20):  # an erasing forget merges them into a new segment
        engine.forget(memory_id)
    check()
    assert len(called) >= 3 * 25 * 2 * 3 * 2  # the compiled searches went through the kernel


def test_two_threads_search_at_once(engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each searching thread has its own score array: searches side by side answer as one at a time."""
    monkeypatch.setattr(config, "LEXICAL_COMPILED_MIN_POSTINGS", -1)
    rng = random.Random(9)
    engine.remember_many(_texts(rng, 400))
    held = _held(engine)
    cues = [rng.sample(VOCABULARY, rng.randint(1, 4)) for _ in range(40)]
    alone = {(table, n): held.search(table, words, 20, K1, 0.0) for n, words in enumerate(cues) for table in TABLES}
    wrong: list[tuple[str, int]] = []
    start = threading.Barrier(2)

    def run(table: str) -> None:
        start.wait()
        for _ in range(5):
            for n, words in enumerate(cues):
                if held.search(table, words, 20, K1, 0.0) != alone[(table, n)]:
                    wrong.append((table, n))

    threads = [threading.Thread(target=run, args=(table,)) for table in TABLES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), spread=st.sampled_from([10, 1_000, 1_000_000]), b=st.sampled_from([0.0, 0.75]))
def test_changed_rows_scored_alike_near_and_far_apart(seed: int, spread: int, b: float) -> None:
    """The changed rows' scores (`_scores_of`): one score per row when they are few and far apart (a large
    segment's changes), a dense array otherwise; the same rows and floats either way."""
    rng = np.random.default_rng(seed)
    lists = []
    for _ in range(int(rng.integers(1, 5))):
        rows = np.sort(rng.choice(spread, size=int(rng.integers(0, min(spread, 40) + 1)), replace=False))
        counts = rng.integers(1, 4, size=len(rows)).astype(np.int32)
        lengths = rng.integers(1, 30, size=len(rows)).astype(np.int32) if b else None
        lists.append((rows.astype(np.int64), counts, lengths, float(rng.uniform(0.1, 5.0))))
    dense = np.zeros(spread, dtype=np.float64)
    for rows, counts, lengths, weight in lists:
        tf = counts.astype(np.float64)
        norm = K1 if lengths is None else K1 * (1.0 - b + b * lengths / 9.5)
        dense[rows] += weight * tf * (K1 + 1.0) / (tf + norm)
    rows, scores = postings._scores_of(lists, K1, b, 9.5)  # noqa: SLF001 - the helper under test
    assert rows.tolist() == np.flatnonzero(dense).tolist()
    assert scores.tobytes() == dense[rows].tobytes()


def test_without_numba_large_searches_score_with_numpy(engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """Where numba cannot be imported, a search past the threshold still answers, exactly, from numpy."""
    rng = random.Random(3)
    engine.remember_many(_texts(rng, 200))
    held = _held(engine)
    cues = [rng.sample(VOCABULARY, rng.randint(1, 4)) for _ in range(10)]
    with_kernel = [_search(held, "memory_text", words, 10, 0.0, True, monkeypatch) for words in cues]
    postings._kernel.cache_clear()  # noqa: SLF001
    monkeypatch.setitem(sys.modules, "engine.index.bm25_kernel", None)  # importing it raises ImportError
    monkeypatch.delattr(engine_index, "bm25_kernel")
    try:
        without = [_search(held, "memory_text", words, 10, 0.0, True, monkeypatch) for words in cues]
        assert postings._kernel() is None  # noqa: SLF001
    finally:
        postings._kernel.cache_clear()  # noqa: SLF001
    assert without == with_kernel
    assert "numba is not usable" in caplog.text
