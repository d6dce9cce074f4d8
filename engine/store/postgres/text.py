"""The lexical index in PostgreSQL: posting lists (term, row, occurrences) and row lengths of the two lexical
tables (`engine.store.lexical.TABLES`), written in the same transactions as the memories, with the same
windows (engine/store/windows.py) and the same tokenizer (tokens.py) as the SQLite store, so BM25 scores
equal the SQLite store's on the same data. Revisions are history and are not indexed."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from engine import config
from engine.models import EdgeType, MemoryKind
from engine.store.lexical import TABLES, LexicalDump, TablePostings, collect, idf
from engine.store.postgres import changes
from engine.store.postgres.connection import PostgresConnection
from engine.store.postgres.tokens import TOKENIZER
from engine.store.windows import Links, Text, window_body, windows, within

MEMORY, WINDOW = 0, 1  # text_docs.tbl / text_postings.tbl of memory_text and window_text
ALL_TABLES = [MEMORY, WINDOW]
# Lists of row numbers are sent as ::bigint[] throughout: psycopg types a list of small ints smallint[], and
# a bigint column compared with a smallint array is not looked up in its index (a scan of every posting).


def _batches(cur: Any) -> Iterator[list[Any]]:
    while batch := cur.fetchmany(65536):
        yield batch


def table_number(table: str) -> int:
    assert table in TABLES
    return TABLES.index(table)


def followed_by(cur: Any, ids: Iterable[str]) -> dict[str, set[str]]:
    wanted = sorted(set(ids))
    adjacent: dict[str, set[str]] = {}
    if not wanted:
        return adjacent
    rows = cur.execute(  # two index lookups (an OR of the two ends scans every edge)
        "SELECT source, target FROM edges WHERE type = %s AND source = ANY(%s)"
        " UNION ALL SELECT source, target FROM edges WHERE type = %s AND target = ANY(%s)",
        (EdgeType.FOLLOWED_BY.value, wanted, EdgeType.FOLLOWED_BY.value, wanted),
    ).fetchall()
    for a, b in rows:
        adjacent.setdefault(a, set()).add(b)
        adjacent.setdefault(b, set()).add(a)
    return adjacent


class _Source:
    """Links and texts for window building, through the write's cursor (`windows.WindowSource`)."""

    def __init__(self, cur: Any) -> None:
        self.cur = cur

    def followed_by(self, ids: Iterable[str]) -> dict[str, set[str]]:
        return followed_by(self.cur, ids)

    def texts(self, ids: Sequence[str]) -> dict[str, Text]:
        rows = self.cur.execute(
            "SELECT id, content, created_at, context FROM memories WHERE kind != %s AND id = ANY(%s)",
            (MemoryKind.REVISION.value, list(ids)),
        ).fetchall()
        return {r[0]: (r[1], r[2], json.loads(r[3])) for r in rows}


def _rowids(cur: Any, ids: Sequence[str], create: bool) -> dict[str, int]:
    if create and ids:
        cur.execute(
            "INSERT INTO text_rows (rowid, id) SELECT nextval('text_row_numbers'), i FROM unnest(%s::text[]) AS i"
            " ON CONFLICT (id) DO NOTHING", (list(ids),)
        )
    if not ids:
        return {}
    return {r[1]: r[0] for r in cur.execute("SELECT rowid, id FROM text_rows WHERE id = ANY(%s)", (list(ids),))}


def _write(cur: Any, table: int, rows: Sequence[tuple[int, str]], *, fresh: bool = False) -> None:
    """Replace the postings and lengths of some rows of one table with those of their new bodies (`fresh`:
    rows numbered in this transaction, with nothing to replace). Both go in by COPY, not row by row."""
    if not rows:
        return
    if not fresh:
        numbers = [r for r, _ in rows]
        cur.execute("DELETE FROM text_postings WHERE tbl = %s AND rowid = ANY(%s::bigint[])", (table, numbers))
        cur.execute("DELETE FROM text_docs WHERE tbl = %s AND rowid = ANY(%s::bigint[])", (table, numbers))
    counts = TOKENIZER.terms([body for _, body in rows])
    with cur.copy("COPY text_docs (tbl, rowid, length) FROM STDIN") as copy:
        for (r, _), c in zip(rows, counts, strict=True):
            copy.write_row((table, r, sum(c.values())))
    with cur.copy("COPY text_postings (tbl, term, rowid, n) FROM STDIN") as copy:
        for (r, _), c in zip(rows, counts, strict=True):
            for term, n in c.items():
                copy.write_row((table, term, r, n))


def index(cur: Any, ids: Sequence[str]) -> None:
    """(Re)write the rows of the given memories and the windows around them."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return
    source = _Source(cur)
    texts = source.texts(ids)
    live = [i for i in ids if i in texts]
    remove(cur, [i for i in ids if i not in texts])
    rowids = _rowids(cur, live, create=True)
    _write(cur, MEMORY, [(rowids[i], texts[i][0]) for i in live])
    refresh_around(cur, live)


def index_new(cur: Any, contents: Sequence[tuple[str, str, int, dict[str, Any]]], linked: Iterable[str]) -> None:
    """Rows of memories inserted in this transaction (see `fulltext.index_new`): one that no followed_by edge
    of the transaction touches is its own whole window."""
    ids = [c[0] for c in contents]
    if not ids:
        return
    rowids = _rowids(cur, ids, create=True)
    _write(cur, MEMORY, [(rowids[c[0]], c[1]) for c in contents], fresh=True)
    linked = set(linked)
    _write(cur, WINDOW, [(rowids[i], window_body({i: (text, at, context)}, i, [i]))
                         for i, text, at, context in contents if i not in linked], fresh=True)
    refresh_around(cur, [i for i in ids if i in linked])


def refresh_windows(cur: Any, ids: Iterable[str], links: Links | None = None) -> None:
    ids = sorted(set(ids))
    if not ids:
        return
    members, texts = windows(links or Links(_Source(cur)), ids)
    rowids = _rowids(cur, list(members), create=True)
    _write(cur, WINDOW, [(rowids[i], window_body(texts, i, ms)) for i, ms in members.items()])
    changes.note(cur, members)


def refresh_around(cur: Any, ids: Sequence[str]) -> None:
    if ids:
        links = Links(_Source(cur))
        refresh_windows(cur, within(links, ids, config.WINDOW_RADIUS), links)


def neighbourhood(cur: Any, ids: Sequence[str]) -> set[str]:
    return within(Links(_Source(cur)), ids, config.WINDOW_RADIUS) - set(ids)


def remove(cur: Any, ids: Sequence[str]) -> None:
    rowids = list(_rowids(cur, list(ids), create=False).values())
    if not rowids:
        return
    # Both tables' numbers named, so the (tbl, rowid) indexes serve the deletes (not a scan of every posting).
    cur.execute("DELETE FROM text_postings WHERE tbl = ANY(%s::smallint[]) AND rowid = ANY(%s::bigint[])",
                (ALL_TABLES, rowids))
    cur.execute("DELETE FROM text_docs WHERE tbl = ANY(%s::smallint[]) AND rowid = ANY(%s::bigint[])",
                (ALL_TABLES, rowids))
    cur.execute("DELETE FROM text_rows WHERE rowid = ANY(%s::bigint[])", (rowids,))


class TextSearch(PostgresConnection):
    """BM25 search, posting lists and marked matches (`FullTextStorage`)."""

    def purge_deleted_text(self) -> None:
        """Forgotten memories' postings were deleted with them; VACUUM reclaims the space in its time."""
        return None

    def lexical_terms(self, words: Sequence[str]) -> list[str]:
        return TOKENIZER.stems(words)

    def lexical_totals(self, table: str) -> tuple[int, float]:
        rows, tokens = self._query(
            "SELECT count(*), coalesce(sum(length), 0) FROM text_docs WHERE tbl = %s", (table_number(table),)
        )[0]
        return (0, 0.0) if not rows else (int(rows), int(tokens) / int(rows))

    def lexical_dump(self) -> LexicalDump:
        """Read in one REPEATABLE READ transaction with the change number of the same snapshot; terms sorted
        by their bytes (COLLATE "C"), as the SQLite store sorts them."""
        with self._pool.connection() as conn:
            conn.autocommit = False
            try:
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM changes").fetchone()[0])
                rows = conn.execute("SELECT rowid, id FROM text_rows ORDER BY rowid").fetchall()
                tables: dict[str, TablePostings] = {}
                for table in TABLES:
                    number = table_number(table)
                    with conn.cursor(name=f"postings_{number}") as cur:
                        cur.execute("SELECT term, rowid, n FROM text_postings WHERE tbl = %s"
                                    " ORDER BY term COLLATE \"C\", rowid", (number,))
                        terms, starts, numbers, counts = collect(_batches(cur))
                    sizes = np.array(conn.execute("SELECT rowid, length FROM text_docs WHERE tbl = %s ORDER BY rowid",
                                                  (number,)).fetchall(), dtype=np.int64).reshape(-1, 2)
                    tables[table] = TablePostings(terms, starts, numbers, counts, sizes[:, 0], sizes[:, 1])
            finally:
                conn.rollback()
                conn.autocommit = True
        return LexicalDump(seq, np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows], tables)

    def lexical_search(self, table: str, words: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """Okapi BM25 in SQL over the posting lists (see `fulltext.bm25`), ties by memory id."""
        number = table_number(table)
        terms = TOKENIZER.stems(words)
        rows, mean_length = self.lexical_totals(table)
        if not terms or rows == 0:
            return []
        df = dict(self._query("SELECT term, count(*) FROM text_postings WHERE tbl = %s AND term = ANY(%s)"
                              " GROUP BY term", (number, terms)))
        weights = [(t, idf(rows, int(df[t]))) for t in terms if df.get(t)]
        if not weights:
            return []
        k1, b = config.LEXICAL_BM25_K1, config.LEXICAL_BM25_B
        found = self._query(
            "SELECT r.id, sum(q.w * p.n * %s / (p.n + %s * (1.0 - %s + %s * d.length / %s))) AS s"
            " FROM unnest(%s::text[], %s::float8[]) AS q(term, w)"
            " JOIN text_postings p ON p.tbl = %s AND p.term = q.term"
            " JOIN text_docs d ON d.tbl = p.tbl AND d.rowid = p.rowid"
            " JOIN text_rows r ON r.rowid = p.rowid"
            " GROUP BY r.id ORDER BY s DESC, r.id LIMIT %s",
            (k1 + 1.0, k1, b, b, mean_length or 1.0, [t for t, _ in weights], [w for _, w in weights], number,
             limit),
        )
        return [(r[0], float(r[1])) for r in found]

    def lexical_documents(self, table: str, ids: Sequence[str]) -> dict[str, tuple[int, int, dict[str, int]]]:
        number = table_number(table)
        rows = self._query(
            "SELECT r.id, r.rowid, d.length FROM text_rows r JOIN text_docs d ON d.tbl = %s AND d.rowid = r.rowid"
            " WHERE r.id = ANY(%s)", (number, list(ids)),
        )
        found: dict[str, tuple[int, int, dict[str, int]]] = {r[0]: (int(r[1]), int(r[2]), {}) for r in rows}
        by_row = {row: memory_id for memory_id, (row, _, _) in found.items()}
        for row, term, n in self._query("SELECT rowid, term, n FROM text_postings WHERE tbl = %s"
                                        " AND rowid = ANY(%s::bigint[])", (number, list(by_row))):
            found[by_row[row]][2][term] = int(n)
        return found

    def lexical_marks(self, match: str, texts: Mapping[str, str]) -> dict[str, str]:
        return TOKENIZER.marks(match, texts)
