"""The full-text (BM25) reads of the lexical tables (engine/store/sqlite/fulltext.py) and their purge."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

import numpy as np

from engine import config
from engine.store.lexical import TABLES, LexicalDump
from engine.store.sqlite import changes, fulltext
from engine.store.sqlite.connection import SqliteConnection


class TextSearch(SqliteConnection):
    """BM25 search, posting lists and marked matches, read under the connection's lock."""

    def purge_deleted_text(self) -> None:
        """Drop forgotten memories' terms from the text index's segments (see `fulltext.purge_deleted`)."""
        with self.transaction() as cur:
            fulltext.purge_deleted(cur)

    def lexical_search(self, table: str, words: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The best `limit` BM25 matches of any of the words in `memory_text` or `window_text` (see fulltext),
        with the saturation and length normalisation of `config.LEXICAL_BM25_K1` / `LEXICAL_BM25_B`."""
        with self._lock:
            return fulltext.bm25(
                self._conn.cursor(), table, words, limit, config.LEXICAL_BM25_K1, config.LEXICAL_BM25_B
            )

    def lexical_terms(self, words: Sequence[str]) -> list[str]:
        """The index terms (stems) of cue words, as the lexical tables' tokenizer makes them."""
        with self._lock:
            return fulltext.stems(self._conn.cursor(), words)

    def lexical_totals(self, table: str) -> tuple[int, float]:
        """(rows, mean length in tokens) of a lexical table."""
        with self._lock:
            return fulltext.totals(self._conn.cursor(), table)

    def lexical_dump(self) -> LexicalDump:
        """The whole lexical index (row ids, both tables' postings and row lengths), read in one read
        transaction with the change number it was read at."""
        with self._lock:
            cur = self._conn.cursor()
            cur.execute("BEGIN")
            try:
                seq = changes.latest(cur) if self._logged else 0
                rows = fulltext.row_ids(cur)
                tables = {table: fulltext.dump(cur, table) for table in TABLES}
            finally:
                cur.execute("COMMIT")
        return LexicalDump(seq, np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows], tables)

    def lexical_documents(self, table: str, ids: Sequence[str]) -> dict[str, tuple[int, int, dict[str, int]]]:
        """Each given memory's row of a lexical table, if it has one: (row number, length in tokens, {index
        term: occurrences}), what posting lists held in memory need to follow a change of those memories."""
        with self._lock:
            return fulltext.documents(self._conn.cursor(), table, ids)

    def lexical_marks(self, match: str, texts: Mapping[str, str]) -> dict[str, str]:
        """The given texts (memory id -> content) with the words matching an FTS5 expression in [brackets]."""
        with self._lock:
            try:
                return fulltext.marks(self._conn.cursor(), match, texts)
            except sqlite3.OperationalError:
                return {}
