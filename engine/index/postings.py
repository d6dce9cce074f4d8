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
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from engine.index.lexical_segment import Document, LexicalSegment
from engine.store.interface import Storage
from engine.store.lexical import TABLES, idf

log = logging.getLogger(__name__)

# Rows changed since the segment that are held in memory before they are merged into a new one (fewer for a
# small store: a quarter of its rows, at least `MERGE_MIN`).
MERGE_AT = 20_000
MERGE_MIN = 1_000
# The store meta key naming the store a segment was built from (a data dir's segment never serves another).
STORE_KEY = "lexical_segment_key"


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
        self._reset_changes()

    def _reset_changes(self) -> None:
        """Forget the rows held beside the segment (it now describes them, or is being replaced)."""
        width = 0 if self._segment is None else self._segment.width
        self._stale = np.zeros(width, dtype=bool)  # the segment's rows changed since it was written
        self._stale_held = 0  # of those, rows that held a memory in the segment
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
            self._stale[row] = True
            if self._segment.id_at(row):
                self._stale_held += 1

    # --- searching ----------------------------------------------------------------------------------------------------
    def _postings(self, table: str, term: str, lengths: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(rows, occurrences, row lengths or None) of one term: the segment's live rows, then the changed ones."""
        assert self._segment is not None
        arrays = self._segment.tables[table]
        rows, counts = arrays.postings(term)
        if self._stale_held or self._ids:
            keep = ~self._stale[rows]
            rows, counts = rows[keep], counts[keep]
        sizes = arrays.lengths[rows] if lengths else None
        held: Mapping[int, int] | None = self._extra[table].get(term)
        if held:
            more = np.fromiter(held.keys(), dtype=np.int32, count=len(held))
            rows = np.concatenate([rows, more])
            counts = np.concatenate([counts, np.fromiter(held.values(), dtype=np.int32, count=len(held))])
            if sizes is not None:
                docs = self._docs[table]
                sizes = np.concatenate([sizes, np.array([docs[r][0] for r in held], dtype=np.int32)])
        return rows, counts, sizes

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

    def search(self, table: str, words: Sequence[str], limit: int, k1: float, b: float) -> list[tuple[str, float]]:
        """(memory id, BM25 score) of the best `limit` rows of `table` holding any of the words, best first
        (ties: by memory id): `fulltext.bm25`'s answer, from the segment and the changes since."""
        assert table in TABLES
        terms = self._store.lexical_terms(words)
        with self._lock:
            self._catch_up()
            rows_total, mean_length = self._totals.get(table) or self._totals.setdefault(
                table, self._store.lexical_totals(table)
            )
            if not terms or rows_total == 0:
                return []
            lists = [p for t in sorted(terms) if len((p := self._postings(table, t, b != 0.0))[0])]
            if not lists:
                return []
            width = 1 + max(int(p[0].max()) for p in lists)
            scores = np.zeros(width, dtype=np.float64)
            for rows, counts, sizes in lists:
                weight = idf(rows_total, len(rows))
                tf = counts.astype(np.float64)
                norm: np.ndarray | float = k1 if sizes is None else k1 * (1.0 - b + b * sizes / mean_length)
                scores[rows] += weight * tf * (k1 + 1.0) / (tf + norm)
            matched = np.flatnonzero(scores)
            if len(matched) > limit:  # the best `limit`, and every row tied with the last of them
                cut = np.partition(scores[matched], len(matched) - limit)[len(matched) - limit]
                matched = matched[scores[matched] >= cut]
            ids = self._memory_ids(matched)
        keep = ids != b""
        matched, ids = matched[keep], ids[keep]
        order = np.lexsort((ids, -scores[matched]))[:limit]  # bytes order: UTF-8 sorts as code points do
        return [(ids[n].decode(), float(scores[matched[n]])) for n in order]
