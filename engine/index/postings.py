"""`LexicalPostings`: BM25 over the lexical tables' posting lists, held in memory and scored with numpy.

The SQLite store's BM25 (engine/store/sqlite/fulltext.py `bm25`) is computed in SQL from FTS5's fts5vocab
views: every recall walks every occurrence of every cue term through a virtual table, which on a
100,000-memory store costs 70-590 ms when the cue names a speaker found in half the rows. Here each term's
posting list (row numbers and occurrences, read once from the same view) is kept as numpy arrays, and a
search is a weighted `bincount` over the cue terms' lists: the cost is the postings of the cue's terms, in
C, not a walk through SQLite. The scores are the same Okapi BM25 (Lucene idf, `k1`, `b`) with the same
tie-break (memory id), so the ranked lists equal `fulltext.bm25`'s (tests/engine/test_recall_parity.py).

Like the candidate table, everything here is valid for one `Storage.version`: the first search after
any change (this process's write, or another connection's commit) starts from empty lists again, so
nothing can be stale. Lists are kept up to `LEXICAL_POSTINGS_KEPT` entries in all, then dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from engine.store.interface import Storage
from engine.store.lexical import TABLES, idf

# Posting lists kept in memory for lexical search, in entries (8 bytes each) over
# all terms; beyond it they are dropped and read again as cues need them.
LEXICAL_POSTINGS_KEPT = 5_000_000


class LexicalPostings:
    def __init__(self, store: Storage) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._version: tuple[int, int] | None = None
        self._lists: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._kept = 0
        self._totals: dict[str, tuple[int, float]] = {}
        self._sizes: dict[str, np.ndarray] = {}
        self._ids: tuple[np.ndarray, np.ndarray] | None = None

    def _current(self) -> None:
        """Drop everything read at an older version of the store (call with the lock held)."""
        version = self._store.version()
        if version != self._version:
            self._version = version
            self._lists.clear()
            self._kept = 0
            self._totals.clear()
            self._sizes.clear()
            self._ids = None

    def _postings(self, table: str, term: str) -> tuple[np.ndarray, np.ndarray]:
        key = (table, term)
        found = self._lists.get(key)
        if found is None:
            found = self._store.lexical_postings(table, term)
            if self._kept + len(found[0]) > LEXICAL_POSTINGS_KEPT:
                self._lists.clear()
                self._kept = 0
            self._lists[key] = found
            self._kept += len(found[0])
        return found

    def _lengths(self, table: str, rows: np.ndarray) -> np.ndarray:
        """Each given row's length in tokens (only needed when `b` > 0)."""
        sizes = self._sizes.get(table)
        if sizes is None:
            numbers, lengths = self._store.lexical_doc_sizes(table)
            sizes = np.zeros(int(numbers.max(initial=0)) + 1, dtype=np.float64)
            sizes[numbers] = lengths
            self._sizes[table] = sizes
        return sizes[rows]

    def _memory_ids(self, rows: np.ndarray) -> np.ndarray:
        """The memory id of each row number (None where a row has none)."""
        if self._ids is None:
            self._ids = self._store.lexical_row_ids()
        numbers, ids = self._ids
        at = np.searchsorted(numbers, rows)
        at = np.minimum(at, max(len(numbers) - 1, 0))
        found = np.full(len(rows), None, dtype=object)
        if len(numbers):
            hit = numbers[at] == rows
            found[hit] = ids[at[hit]]
        return found

    def search(self, table: str, words: Sequence[str], limit: int, k1: float, b: float) -> list[tuple[str, float]]:
        """(memory id, BM25 score) of the best `limit` rows of `table` holding any of the words, best first
        (ties: by memory id): `fulltext.bm25`'s answer, from the posting lists in memory."""
        assert table in TABLES
        terms = self._store.lexical_terms(words)
        with self._lock:
            self._current()
            rows_total, mean_length = self._totals.get(table) or self._totals.setdefault(
                table, self._store.lexical_totals(table)
            )
            if not terms or rows_total == 0:
                return []
            lists = [(t, self._postings(table, t)) for t in sorted(terms)]
            lists = [(t, p) for t, p in lists if len(p[0])]
            if not lists:
                return []
            width = 1 + max(int(p[0][-1]) for _, p in lists)
            scores = np.zeros(width, dtype=np.float64)
            for _, (rows, counts) in lists:
                weight = idf(rows_total, len(rows))
                tf = counts.astype(np.float64)
                if b == 0.0:
                    norm: np.ndarray | float = k1
                else:
                    norm = k1 * (1.0 - b + b * self._lengths(table, rows) / mean_length)
                scores[rows] += weight * tf * (k1 + 1.0) / (tf + norm)
            matched = np.flatnonzero(scores)
            if len(matched) > limit:  # the best `limit`, and every row tied with the last of them
                cut = np.partition(scores[matched], len(matched) - limit)[len(matched) - limit]
                matched = matched[scores[matched] >= cut]
            ids = self._memory_ids(matched)
        keep = np.array([i is not None for i in ids], dtype=bool)
        matched, ids = matched[keep], ids[keep]
        order = np.lexsort((ids.astype(str), -scores[matched]))[:limit]
        return [(str(ids[n]), float(scores[matched[n]])) for n in order]
