"""`LexicalPostings`: BM25 over the lexical tables' posting lists, held in memory and scored with numpy.

The SQLite store's BM25 (engine/store/sqlite/fulltext.py `bm25`) is computed in SQL from FTS5's fts5vocab
views: every recall walks every occurrence of every cue term through a virtual table, which on a
100,000-memory store costs 70-590 ms when the cue names a speaker found in half the rows. Here each term's
posting list (row numbers and occurrences, read once from the same view) is kept as numpy arrays, and a
search is a weighted `bincount` over the cue terms' lists: the cost is the postings of the cue's terms, in
C, not a walk through SQLite. The scores are the same Okapi BM25 (Lucene idf, `k1`, `b`) with the same
tie-break (memory id), so the ranked lists equal `fulltext.bm25`'s (tests/engine/test_recall_parity.py).

Like the candidate table, everything here is read once and then caught up with the store's change log
(`catch_up`: right after each write of this engine, and before a search once the store's version moved):
the posting lists, row lengths and row ids are patched for the rows of the memories changed since
(`Storage.lexical_documents`: their rows tokenized again), never read again whole. The row ids are read
before any list, so a list never holds a row the ids do not know. Lists are kept up to
`LEXICAL_POSTINGS_KEPT` entries in all, then dropped.
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
# More changed memories than this since the last catch-up: drop everything rather than patch.
CATCH_UP_MAX = 20_000


class LexicalPostings:
    def __init__(self, store: Storage) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._version: tuple[int, int] | None = None  # the store's version when last caught up
        self._seq = 0  # the change number caught up to
        self._lists: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._kept = 0
        self._totals: dict[str, tuple[int, float]] = {}
        self._sizes: dict[str, np.ndarray] = {}
        self._ids: np.ndarray | None = None  # memory id by row number (None: no row)
        self._row_of: dict[str, int] = {}

    def reset(self) -> None:
        """Drop everything (call with the lock held): it is read again as searches need it."""
        self._lists.clear()
        self._kept = 0
        self._totals.clear()
        self._sizes.clear()
        self._ids = None
        self._row_of = {}

    def catch_up(self) -> None:
        """Follow the store's changes since the last catch-up (cheap when its version has not moved)."""
        with self._lock:
            self._catch_up()

    def _catch_up(self) -> None:
        version = self._store.version()
        if version == self._version:
            return
        self._version = version
        self._totals.clear()
        if self._ids is None:  # nothing held that a change could make stale: start from here
            self.reset()
            self._seq = self._store.change_seq()
            return
        caught = self._store.changes_since(self._seq)
        if caught is None or len(caught[1]) > CATCH_UP_MAX:
            self.reset()
            self._seq = self._store.change_seq()
            return
        self._seq, changed = caught
        if changed:
            self._patch(changed)

    def _patch(self, changed: list[str]) -> None:
        """Replace the changed memories' rows (old and new) in every list held, the row lengths and ids."""
        assert self._ids is not None
        docs = {table: self._store.lexical_documents(table, changed) for table in TABLES}
        old = [self._row_of.pop(i) for i in changed if i in self._row_of]
        new = {i: doc[0] for table in TABLES for i, doc in docs[table].items()}
        touched = np.unique(np.array([*old, *new.values()], dtype=np.int64))
        ids = self._ids
        if len(touched) and int(touched[-1]) >= len(ids):
            ids = np.concatenate([ids, np.full(max(int(touched[-1]) + 1 - len(ids), len(ids) // 2), None)])
        ids[old] = None
        for memory_id, row in new.items():
            ids[row] = memory_id
            self._row_of[memory_id] = row
        self._ids = ids
        for table, sizes in list(self._sizes.items()):
            if len(touched) and int(touched[-1]) >= len(sizes):
                sizes = np.concatenate([sizes, np.zeros(int(touched[-1]) + 1 - len(sizes))])
            sizes[touched] = 0.0
            for row, length, _ in docs[table].values():
                sizes[row] = length
            self._sizes[table] = sizes
        added: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for table in TABLES:
            for row, _, terms in docs[table].values():
                for term, n in terms.items():
                    added.setdefault((table, term), []).append((row, n))
        for key, (rows, counts) in list(self._lists.items()):
            at = np.searchsorted(rows, touched)
            hit = at[at < len(rows)]
            hit = hit[rows[hit] == touched[at < len(rows)]]
            more = added.get(key)
            if not len(hit) and not more:
                continue
            keep = np.ones(len(rows), dtype=bool)
            keep[hit] = False
            rows, counts = rows[keep], counts[keep]
            if more:
                extra = np.array(more, dtype=np.int32)
                rows, counts = np.concatenate([rows, extra[:, 0]]), np.concatenate([counts, extra[:, 1]])
                order = np.argsort(rows, kind="stable")
                rows, counts = rows[order], counts[order]
            self._kept += len(rows) - len(self._lists[key][0])
            self._lists[key] = (rows, counts)

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
        if len(rows) and int(rows.max()) >= len(sizes):  # a row committed since the catch-up: the next one
            sizes = self._sizes[table] = np.concatenate([sizes, np.zeros(int(rows.max()) + 1 - len(sizes))])
        return sizes[rows]

    def _read_ids(self) -> None:
        """The memory id of every row number, read before any list (see the module's docstring)."""
        if self._ids is None:
            numbers, ids = self._store.lexical_row_ids()
            by_row = np.full(int(numbers.max(initial=0)) + 1, None, dtype=object)
            by_row[numbers] = ids
            self._ids = by_row
            self._row_of = dict(zip(ids.tolist(), numbers.tolist(), strict=True))

    def _memory_ids(self, rows: np.ndarray) -> np.ndarray:
        """The memory id of each row number (None where a row has none)."""
        assert self._ids is not None
        found = np.full(len(rows), None, dtype=object)
        inside = rows < len(self._ids)
        found[inside] = self._ids[rows[inside]]
        return found

    def search(self, table: str, words: Sequence[str], limit: int, k1: float, b: float) -> list[tuple[str, float]]:
        """(memory id, BM25 score) of the best `limit` rows of `table` holding any of the words, best first
        (ties: by memory id): `fulltext.bm25`'s answer, from the posting lists in memory."""
        assert table in TABLES
        terms = self._store.lexical_terms(words)
        with self._lock:
            self._catch_up()
            self._read_ids()
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
