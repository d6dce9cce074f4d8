"""`LexicalPostings`: BM25 over the lexical tables' posting lists, read from flat arrays and scored with numpy.

The SQLite store's BM25 (engine/store/sqlite/fulltext.py `bm25`) is computed in SQL from FTS5's fts5vocab
views: every recall walks every occurrence of every cue term through a virtual table, about 8.5 us each, which
on a 100,000-memory store cost more than the rest of the recall. Here the whole index is a segment of numpy
arrays in the data dir (engine/index/lexical_segment.py, memory-mapped, nothing copied into the process), and
a search is a weighted sum over the cue terms' slices of it, in C. The scores are the same Okapi BM25 (Lucene
idf, `k1`, `b`) with the same tie-break (memory id), so the ranked lists equal `fulltext.bm25`'s
(tests/engine/test_recall_parity.py).

The segment describes the store at one change number. The changes since are followed from the store's change
log (`catch_up`: right after each write of this engine, and before a search once the store's version moved):
the changed memories' rows are tokenized again (`Storage.lexical_documents`) and held in memory beside the
segment, which hides its own, now stale, versions of those rows. Once more than `MERGE_AT` rows are held
(or a quarter of the segment's, if fewer), they are merged into a new segment, saved and mapped in its place;
the record store stays the truth: a segment that is missing or unusable is rebuilt from it
(`Storage.lexical_dump`), as is one so far behind that catching up would read most of the store.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from types import ModuleType

import numpy as np

from engine import config
from engine.index.lexical_segment import Document, LexicalSegment, TableArrays
from engine.index.sorted_rows import members_of
from engine.store.interface import Storage
from engine.store.lexical import TABLES, idf

log = logging.getLogger(__name__)

# Rows changed since the segment that are held in memory before they are merged into a new one (fewer for a
# small store: a quarter of its rows, at least `MERGE_MIN`).
MERGE_AT = 20_000
MERGE_MIN = 1_000
# The store meta key naming the store a segment was built from (a data dir's segment never serves another).
STORE_KEY = "lexical_segment_key"
_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_SCORES = np.zeros(0, dtype=np.float64)
_NO_STALE = np.zeros(0, dtype=bool)


class LexicalPostings:
    def __init__(self, store: Storage, folder: Path | None = None) -> None:
        """`folder`: where segments are kept (None, or a read-only store: built in memory, never saved)."""
        self._store = store
        self._folder = folder
        self._lock = threading.Lock()
        self._version: tuple[int, int] | None = None  # the store's version when last caught up
        self._segment: LexicalSegment | None = None
        self._seq = 0  # the change number caught up to
        self._totals: dict[str, tuple[int, float]] = {}
        self._verify = False  # compare the live rows with the store's once caught up (a segment loaded from disk)
        self._rank: np.ndarray | None = None  # per segment: each row's memory id rank (`_ranks`)
        self._scratch_of = threading.local()  # each searching thread's score array for the compiled kernel
        self._reset_changes()

    def _reset_changes(self) -> None:
        """Forget the rows held beside the segment (it now describes them, or is being replaced)."""
        width = 0 if self._segment is None else self._segment.width
        self._stale = np.zeros(width, dtype=bool)  # the segment's rows changed since it was written
        self._stale_held = 0  # of those, rows that held a memory in the segment
        self._stale_sorted: np.ndarray | None = None  # their row numbers, ascending (`_stale_rows`)
        self._stale_lent = False  # a search outside the lock reads `_stale`: copy it before changing it
        self._ids: dict[int, str] = {}  # row changed since -> its memory id now ("": no memory any more)
        self._row_of: dict[str, int] = {}  # the other way round, for memories that have a row now
        self._docs: dict[str, dict[int, Document]] = {t: {} for t in TABLES}
        self._extra: dict[str, dict[str, dict[int, int]]] = {t: {} for t in TABLES}  # term -> {row: occurrences}

    def catch_up(self) -> None:
        """Follow the store's changes since the last catch-up (cheap when its version has not moved); the first
        call opens the segment (or builds it)."""
        with self._lock:
            self._catch_up()

    def erase(self) -> None:
        """Forgotten memories must leave every file: merge the changes into a new segment now (it holds no row
        that went) and remove the older segments' files."""
        with self._lock:
            self._catch_up()
            if self._ids:
                self._merge()

    # --- following the store ---------------------------------------------------------------------------------------
    def _catch_up(self) -> None:
        version = self._store.version()  # read first: a commit meanwhile is caught up now or next time
        if version == self._version and self._segment is not None:
            return
        if self._segment is None:
            self._open()
        self._version = version
        self._totals.clear()
        caught = self._store.changes_since(self._seq)
        segment = self._segment
        assert segment is not None
        if caught is None or len(caught[1]) > max(MERGE_AT, segment.live // 2):
            self._rebuild()  # no log to follow, or reading the changes would cost more than reading it all
            caught = (self._seq, [])
        seq, changed = caught
        for start in range(0, len(changed), MERGE_AT):  # a merge between chunks keeps the old change number
            self._patch(changed[start : start + MERGE_AT])
            if start + MERGE_AT >= len(changed):
                self._seq = seq
            if len(self._ids) > max(MERGE_MIN, min(MERGE_AT, self._live() // 4)):
                self._merge()
        self._seq = seq
        if self._verify:
            self._verify = False
            rows = self._store.lexical_totals(TABLES[0])[0]
            if rows != self._live():
                log.warning("lexical segment holds %d rows, the store %d; rebuilding it", self._live(), rows)
                self._rebuild()

    def _open(self) -> None:
        key = self.store_key()
        segment = None
        if self._folder is not None and key:
            segment = LexicalSegment.load(self._folder, key, self._store.change_seq())
        if segment is None:
            self._rebuild()
        else:
            self._use(segment)
            self._verify = True

    def _rebuild(self) -> None:
        """A segment from the whole store, saved (when it can be)."""
        dump = self._store.lexical_dump()
        self._use(self._saved(LexicalSegment.from_dump(dump, self.store_key())))

    def _merge(self) -> None:
        """The held changes merged into a new segment, as of the change caught up to."""
        assert self._segment is not None
        segment = self._segment.merged(self._seq, self._stale, self._ids, self._docs)
        self._use(self._saved(segment))

    def _use(self, segment: LexicalSegment) -> None:
        self._segment, self._seq, self._verify = segment, segment.seq, False
        self._rank = None
        self._reset_changes()

    def _saved(self, segment: LexicalSegment) -> LexicalSegment:
        """The segment saved and mapped back from its files (its pages then belong to the OS's cache, not to
        this process), or as it is when it cannot be saved."""
        if self._folder is None or self._store.read_only or not segment.store_key:
            return segment
        try:
            segment.save(self._folder)
        except OSError as exc:
            log.warning("lexical segment not saved (%s); kept in memory", exc)
            return segment
        return LexicalSegment.load(self._folder, segment.store_key, segment.seq) or segment

    def store_key(self) -> str:
        """The key naming the store (its meta), made on first use: a data dir's segments never serve another."""
        key = self._store.get_meta(STORE_KEY)
        if not key and not self._store.read_only:
            key = secrets.token_hex(8)
            self._store.set_meta(STORE_KEY, key)
        return key or ""

    def _live(self) -> int:
        """Rows that hold a memory, the segment's and the changed ones together."""
        assert self._segment is not None
        return self._segment.live - self._stale_held + sum(1 for i in self._ids.values() if i)

    def _patch(self, changed: Sequence[str]) -> None:
        """Hold the changed memories' rows as they are now, hiding the segment's versions of them."""
        assert self._segment is not None
        segment = self._segment
        docs = {table: self._store.lexical_documents(table, changed) for table in TABLES}
        for memory_id in changed:
            old = self._row_of.pop(memory_id, None)
            if old is None:
                old = segment.row_of(memory_id)
                old = old if old >= 0 and not self._stale[old] else None
            if old is not None:
                self._retire(old)
        for table in TABLES:
            for memory_id, (row, length, terms) in docs[table].items():
                self._hide(row)
                self._ids[row] = memory_id
                self._row_of[memory_id] = row
                self._docs[table][row] = (length, terms)
                extra = self._extra[table]
                for term, n in terms.items():
                    extra.setdefault(term, {})[row] = n

    def _retire(self, row: int) -> None:
        self._hide(row)
        self._ids[row] = ""
        for table in TABLES:
            doc = self._docs[table].pop(row, None)
            if doc is not None:
                extra = self._extra[table]
                for term in doc[1]:
                    held = extra[term]
                    del held[row]
                    if not held:
                        del extra[term]

    def _hide(self, row: int) -> None:
        """The segment's version of the row (if it has one) no longer counts."""
        assert self._segment is not None
        if row < len(self._stale) and not self._stale[row]:
            if self._stale_lent:
                self._stale, self._stale_lent = self._stale.copy(), False
            self._stale[row] = True
            self._stale_sorted = None
            if self._segment.id_at(row):
                self._stale_held += 1

    # --- searching ----------------------------------------------------------------------------------------------------
    def search(self, table: str, words: Sequence[str], limit: int, k1: float, b: float) -> list[tuple[str, float]]:
        """(memory id, BM25 score) of the best `limit` rows of `table` holding any of the words, best first
        (ties: by memory id): `fulltext.bm25`'s answer, from the segment and the changes since. Every posting of
        every cue term is scored, exactly: with numpy when they are few, by a compiled kernel above
        `LEXICAL_COMPILED_MIN_POSTINGS` (engine/index/bm25_kernel.py; the same floats)."""
        assert table in TABLES
        terms = self._store.lexical_terms(words)
        with self._lock:
            self._catch_up()
            rows_total, mean_length = self._totals.get(table) or self._totals.setdefault(
                table, self._store.lexical_totals(table)
            )
            if not terms or rows_total == 0:
                return []
            segment = self._segment
            assert segment is not None
            lists = self._term_postings(table, sorted(terms), b != 0.0, rows_total)
            stale = self._stale if self._stale_held else _NO_STALE  # (no posting's row is stale)
            if sum(t.end - t.start for t in lists) > config.LEXICAL_COMPILED_MIN_POSTINGS and _kernel() is not None:
                search = partial(_compiled, segment.tables[table], lists, limit, k1, b, mean_length, stale,
                                 self._ranks(), self._scratch(segment.width))
            else:
                search = partial(_score_every_posting, segment.tables[table], lists, stale, k1, b, mean_length)
            self._stale_lent = True  # (`_hide` copies it before changing it)
        found_rows, found_scores = search()  # outside the lock: the other table's search (and writes) need not wait
        with self._lock:
            keep = found_scores > 0
            rows, scores = self._best(found_rows[keep], found_scores[keep], limit)
            ids = self._memory_ids(rows)
        keep = ids != b""
        rows, scores, ids = rows[keep], scores[keep], ids[keep]
        order = np.lexsort((ids, -scores))[:limit]  # bytes order: UTF-8 sorts as code points do
        return [(ids[n].decode(), float(scores[n])) for n in order]

    def _term_postings(self, table: str, terms: Sequence[str], lengths: bool, rows_total: int) -> list[TermPostings]:
        """Each term's postings that count: its slice of the segment (stale rows masked when scored) and a copy
        of the rows changed since that hold it (a search reads them outside the lock), weighed by its idf over
        the live rows."""
        assert self._segment is not None
        arrays, held, docs = self._segment.tables[table], self._extra[table], self._docs[table]
        stale_rows = self._stale_rows() if self._stale_held else None
        out = []
        for term in terms:
            start, end = arrays.span(term)
            live = end - start
            if stale_rows is not None and len(stale_rows) and live:
                live -= int(np.count_nonzero(members_of(arrays.rows[start:end], stale_rows)))
            changed = held.get(term) or {}
            if live + len(changed) == 0:
                continue
            held_rows = np.fromiter(changed, dtype=np.int64, count=len(changed))
            held_counts = np.fromiter(changed.values(), dtype=np.int32, count=len(changed))
            held_lengths = np.array([docs[r][0] for r in changed], dtype=np.int32) if lengths else None
            out.append(TermPostings(start, end, held_rows, held_counts, held_lengths,
                                    idf(rows_total, live + len(changed))))
        return out

    def _scratch(self, width: int) -> np.ndarray:
        """The calling thread's score array for the kernel (zeros, one per segment row; the kernel leaves it
        zeroed): concurrent recalls (a server's threads) search at once."""
        acc: np.ndarray | None = getattr(self._scratch_of, "acc", None)
        if acc is None or len(acc) != width:
            acc = self._scratch_of.acc = np.zeros(width, dtype=np.float64)
        return acc

    def _memory_ids(self, rows: np.ndarray) -> np.ndarray:
        """The memory id of each row number as UTF-8 bytes (b"" where a row has none): an `S` array."""
        segment = self._segment
        assert segment is not None
        width = segment.width
        ids = segment.ids.fixed(np.minimum(rows, max(0, width - 1)))
        changed = rows >= width
        if self._ids:
            changed |= np.isin(rows, np.fromiter(self._ids, dtype=np.int64, count=len(self._ids)))
        if not changed.any():
            return ids
        out = ids.astype(object)
        for n in np.flatnonzero(changed).tolist():
            out[n] = self._ids.get(int(rows[n]), "").encode()
        return out.astype(bytes)

    def _best(self, rows: np.ndarray, scores: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """The best `limit` of (rows, scores) and every row tied with the last of them that can still be among
        them by memory id: rows of the segment are ranked by id without reading their ids (`_ranks`), so of
        those tied only the first few by id are kept; rows changed since are kept for their ids to decide."""
        if len(rows) <= limit:
            return rows, scores
        cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        above = scores > cut
        tied = np.flatnonzero(scores == cut)
        need = limit - int(np.count_nonzero(above))
        segment = tied[rows[tied] < len(self._stale)]
        segment = segment[~self._stale[rows[segment]]]
        if len(segment) > need:
            ranks = self._ranks()[rows[segment]]
            keep = np.zeros(len(rows), dtype=bool)
            keep[above] = True
            keep[tied] = True
            keep[segment] = False
            keep[segment[np.argpartition(ranks, need - 1)[:need]]] = True
            return rows[keep], scores[keep]
        keep = above
        keep[tied] = True
        return rows[keep], scores[keep]

    def _ranks(self) -> np.ndarray:
        """Each segment row's memory id rank in the ids' byte order (rows without a memory: last), made once a
        segment."""
        if self._rank is None:
            assert self._segment is not None
            rank = np.full(self._segment.width, np.iinfo(np.int64).max, dtype=np.int64)
            rank[np.asarray(self._segment.id_order)] = np.arange(self._segment.live, dtype=np.int64)
            self._rank = rank
        return self._rank

    def _stale_rows(self) -> np.ndarray:
        """The segment's stale row numbers, ascending (made again after each catch-up that hid rows)."""
        if self._stale_sorted is None:
            self._stale_sorted = np.flatnonzero(self._stale)
        return self._stale_sorted


@dataclass(frozen=True, slots=True)
class TermPostings:
    """One cue term's postings in one table: its slice of the segment's arrays (stale rows included: masked
    when scored), the rows changed since that hold it (their occurrences, and lengths when b != 0), its idf."""

    start: int
    end: int
    held_rows: np.ndarray
    held_counts: np.ndarray
    held_lengths: np.ndarray | None
    weight: float


@cache
def _kernel() -> ModuleType | None:
    """The compiled kernel's module, imported on a large store's first search (numba is slow to import), or None
    where numba cannot be imported: every search then scores with numpy (exact, slower)."""
    try:
        from engine.index import bm25_kernel
    except ImportError as exc:
        log.warning("numba is not usable (%s): large lexical searches score with numpy", exc)
        return None
    return bm25_kernel


def _compiled(arrays: TableArrays, lists: Sequence[TermPostings], limit: int, k1: float, b: float, mean_length: float,
              stale: np.ndarray, rank: np.ndarray, scratch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The segment's best `limit` rows by (score, id) from the compiled kernel, and every changed row's score
    from numpy (few): together a superset of the answer that `LexicalPostings._best` cuts."""
    kernel = _kernel()
    assert kernel is not None
    rows, scores = kernel.best_rows(
        arrays.rows, arrays.counts, arrays.lengths,
        np.array([t.start for t in lists], dtype=np.int64), np.array([t.end for t in lists], dtype=np.int64),
        np.array([t.weight for t in lists], dtype=np.float64), k1, b, mean_length, stale, rank, limit, scratch,
    )
    held = [(t.held_rows, t.held_counts, t.held_lengths, t.weight) for t in lists if len(t.held_rows)]
    if not held:
        return rows, scores
    more_rows, more_scores = _scores_of(held, k1, b, mean_length)
    return np.concatenate([rows, more_rows]), np.concatenate([scores, more_scores])


def _score_every_posting(arrays: TableArrays, lists: Sequence[TermPostings], stale: np.ndarray, k1: float, b: float,
                         mean_length: float) -> tuple[np.ndarray, np.ndarray]:
    """(rows, scores) of every row holding a term, exact, with numpy: the segment's live postings and the changed
    rows, term by term."""
    parts = []
    for t in lists:
        rows, counts = arrays.rows[t.start : t.end], arrays.counts[t.start : t.end]
        if len(stale) and len(rows):
            keep = ~stale[rows]
            rows, counts = rows[keep], counts[keep]
        sizes = arrays.lengths[rows] if b != 0.0 else None
        if len(t.held_rows):
            rows = np.concatenate([rows, t.held_rows])
            counts = np.concatenate([counts, t.held_counts])
            if sizes is not None and t.held_lengths is not None:
                sizes = np.concatenate([sizes, t.held_lengths])
        parts.append((rows, counts, sizes, t.weight))
    return _scores_of(parts, k1, b, mean_length)


def _scores_of(lists: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray | None, float]], k1: float, b: float,
               mean_length: float) -> tuple[np.ndarray, np.ndarray]:
    """(rows, scores) of every row in the lists of (rows, occurrences, lengths or None, idf), rows ascending, each
    row's score added to term by term (the order every path adds in): in a score array as wide as the highest
    row, or, when the rows are few and far apart (the changed rows beside a large segment), one per row."""
    parts = [p[0] for p in lists if len(p[0])]
    if not parts:
        return _NO_ROWS, _NO_SCORES
    total = sum(len(rows) for rows in parts)
    width = 1 + max(int(rows.max()) for rows in parts)
    found = None if width <= 8 * total else np.unique(np.concatenate(parts))
    scores = np.zeros(width if found is None else len(found), dtype=np.float64)
    for rows, counts, sizes, weight in lists:
        tf = counts.astype(np.float64)
        norm: np.ndarray | float = k1 if b == 0.0 or sizes is None else k1 * (1.0 - b + b * sizes / mean_length)
        scores[rows if found is None else np.searchsorted(found, rows)] += weight * tf * (k1 + 1.0) / (tf + norm)
    if found is not None:
        return found, scores
    matched = np.flatnonzero(scores)
    return matched, scores[matched]
