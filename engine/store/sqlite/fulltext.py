"""The lexical index: SQLite FTS5 tables in the record store, written in the same transactions as memories.

Two tables, both with Porter stemming:
- `memory_text`: each memory's own content.
- `window_text`: each memory's context window, its content together with its neighbours in the same
  episode (memories linked by `followed_by` within `config.WINDOW_RADIUS` steps whose context names the
  same conversation, session or document), in time order. A turn that only makes sense beside its
  neighbours ("yes, last Tuesday") is still found by the words around it. A conversation message's window
  starts with the day it was said ("8 May 2023"), so a cue that names the month or year matches it.

Ranking is Okapi BM25 computed here (`bm25`) with the saturation and length normalisation of
`config.LEXICAL_BM25_K1` / `LEXICAL_BM25_B` (FTS5's built-in bm25() fixes them at 1.2 / 0.75): FTS5 keeps
the inverted index, temp-schema fts5vocab views give each row's term counts and each term's row count, and
FTS5's own size records give row lengths, so nothing extra is stored and the scores follow every write.

The record store calls these functions with its open cursor, so the text index can never disagree with
the memories it indexes: a crash rolls both back together. A store written before this index existed is
filled on open (`rebuild`). Revisions are history and are not indexed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from engine import config
from engine.models import EdgeType, MemoryKind
from engine.store.lexical import TABLES, TablePostings, collect, idf
from engine.store.sqlite import changes
from engine.store.windows import Links, Text, window_body, windows, within

VERSION = "2"  # 2: BM25 views; conversation windows carry their date line
META_KEY = "fulltext_version"

SCHEMA = """
CREATE TABLE IF NOT EXISTS fulltext_rows (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_text USING fts5(body, tokenize='porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS window_text USING fts5(body, tokenize='porter unicode61')
"""


def _chunks(items: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _rowids(cur: sqlite3.Cursor, ids: Sequence[str], create: bool) -> dict[str, int]:
    if create:
        cur.executemany("INSERT OR IGNORE INTO fulltext_rows (id) VALUES (?)", [(i,) for i in ids])
    found: dict[str, int] = {}
    for chunk in _chunks(ids):
        found.update((r[1], r[0]) for r in cur.execute(
            f"SELECT rowid, id FROM fulltext_rows WHERE id IN ({_marks(len(chunk))})", chunk
        ))
    return found


def _texts(cur: sqlite3.Cursor, ids: Sequence[str]) -> dict[str, Text]:
    """(content, created_at, context) of the given memories that exist and are not revisions."""
    found: dict[str, Text] = {}
    for chunk in _chunks(ids):
        rows = cur.execute(
            f"SELECT id, content, created_at, context FROM memories WHERE kind != ? AND id IN ({_marks(len(chunk))})",
            (MemoryKind.REVISION.value, *chunk),
        )
        for r in rows:
            found[r[0]] = (r[1], r[2], json.loads(r[3]))
    return found


def followed_by(cur: sqlite3.Cursor, ids: Iterable[str]) -> dict[str, set[str]]:
    """Both directions of the `followed_by` edges touching the given memories."""
    adjacent: dict[str, set[str]] = {}
    wanted = sorted(set(ids))
    for chunk in _chunks(wanted, 400):
        marks = _marks(len(chunk))
        rows = cur.execute(
            f"SELECT source, target FROM edges WHERE type = ? AND (source IN ({marks}) OR target IN ({marks}))",
            (EdgeType.FOLLOWED_BY.value, *chunk, *chunk),
        )
        for a, b in rows:
            adjacent.setdefault(a, set()).add(b)
            adjacent.setdefault(b, set()).add(a)
    return adjacent


class _Source:
    """The links and texts window building reads, through the write's cursor (`windows.WindowSource`)."""

    def __init__(self, cur: sqlite3.Cursor) -> None:
        self.cur = cur

    def followed_by(self, ids: Iterable[str]) -> dict[str, set[str]]:
        return followed_by(self.cur, ids)

    def texts(self, ids: Sequence[str]) -> dict[str, Text]:
        return _texts(self.cur, ids)


def index(cur: sqlite3.Cursor, ids: Sequence[str]) -> None:
    """(Re)write the text rows of the given memories and the windows of every memory whose window they are in."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return
    texts = _texts(cur, ids)
    live = [i for i in ids if i in texts]
    remove(cur, [i for i in ids if i not in texts])
    rowids = _rowids(cur, live, create=True)
    cur.executemany("DELETE FROM memory_text WHERE rowid = ?", [(rowids[i],) for i in live])
    cur.executemany(
        "INSERT INTO memory_text (rowid, body) VALUES (?, ?)", [(rowids[i], texts[i][0]) for i in live]
    )
    refresh_around(cur, live)


def index_new(
    cur: sqlite3.Cursor, contents: Sequence[tuple[str, str, int, dict[str, Any]]], linked: Iterable[str]
) -> None:
    """Text rows of memories inserted in this transaction: (id, content, created_at in microseconds,
    context) of each (revisions left out).

    Same rows as `index`, written straight from the contents in hand: a new memory can only have the
    edges of its own transaction, so one that no `followed_by` edge of it touches (`linked`: the ends of
    those edges) is its whole window. The linked ones, and the windows around them, go through the general
    refresh. Falls back to `index` if any id already has text rows (nothing to assume then)."""
    ids = [c[0] for c in contents]
    if not ids:
        return
    if _rowids(cur, ids, create=False):
        index(cur, ids)
        return
    # Fresh row numbers above any in use (an FTS5 table answers ORDER BY rowid DESC without a scan).
    start = 1 + max(
        (row[0] for table in ("fulltext_rows", *TABLES)
         for row in cur.execute(f"SELECT rowid FROM {table} ORDER BY rowid DESC LIMIT 1")),
        default=0,
    )
    rows = [(start + n, c) for n, c in enumerate(contents)]
    cur.executemany("INSERT INTO fulltext_rows (rowid, id) VALUES (?, ?)", [(r, c[0]) for r, c in rows])
    cur.executemany("INSERT INTO memory_text (rowid, body) VALUES (?, ?)", [(r, c[1]) for r, c in rows])
    linked = set(linked)
    cur.executemany(
        "INSERT INTO window_text (rowid, body) VALUES (?, ?)",
        [(r, window_body({i: (text, at, context)}, i, [i])) for r, (i, text, at, context) in rows if i not in linked],
    )
    refresh_around(cur, [i for i in ids if i in linked])


def refresh_windows(cur: sqlite3.Cursor, ids: Iterable[str], links: Links | None = None) -> None:
    """Recompute the window rows of the given memories (after their neighbourhood changed); `links`: the
    adjacency this transaction already fetched, if any."""
    ids = sorted(set(ids))
    if not ids:
        return
    members, texts = windows(links or Links(_Source(cur)), ids)
    rowids = _rowids(cur, list(members), create=True)
    cur.executemany("DELETE FROM window_text WHERE rowid = ?", [(rowids[i],) for i in members])
    cur.executemany(
        "INSERT INTO window_text (rowid, body) VALUES (?, ?)",
        [(rowids[i], window_body(texts, i, ms)) for i, ms in members.items()],
    )
    changes.note(cur, members)


def refresh_around(cur: sqlite3.Cursor, ids: Sequence[str]) -> None:
    """Recompute the windows of the given memories and of every memory whose window may include them
    (after their text or their followed_by links changed); each link is fetched once."""
    if ids:
        links = Links(_Source(cur))
        refresh_windows(cur, within(links, ids, config.WINDOW_RADIUS), links)


def neighbourhood(cur: sqlite3.Cursor, ids: Sequence[str]) -> set[str]:
    """The memories whose windows may include the given ones: call before deleting them."""
    return within(Links(_Source(cur)), ids, config.WINDOW_RADIUS) - set(ids)


def remove(cur: sqlite3.Cursor, ids: Sequence[str]) -> None:
    rowids = _rowids(cur, list(ids), create=False)
    for table in TABLES:
        cur.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(r,) for r in rowids.values()])
    cur.executemany("DELETE FROM fulltext_rows WHERE id = ?", [(i,) for i in rowids])


def purge_deleted(cur: sqlite3.Cursor) -> None:
    """Merge each table's index segments into one, which drops the entries of deleted rows: FTS5 keeps a
    deleted row's terms in old segments until a merge (its own 'secure-delete' option needs SQLite 3.42).
    With the connection's secure_delete on, the freed segment pages are zeroed. Forget calls this."""
    for table in ("memory_text", "window_text"):
        cur.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")


def rebuild(cur: sqlite3.Cursor) -> None:
    """Fill the index from the memories (a store written before it existed, or a repair)."""
    for table in (*TABLES, "fulltext_rows"):
        cur.execute(f"DELETE FROM {table}")
    ids = [r[0] for r in cur.execute("SELECT id FROM memories WHERE kind != ?", (MemoryKind.REVISION.value,))]
    for chunk in _chunks(ids, 5000):
        index(cur, list(chunk))


def _varints(blob: bytes) -> list[int]:
    """SQLite's variable-length integers (big-endian 7-bit groups, the high bit says another byte follows;
    a ninth byte carries 8 bits), as FTS5 writes its row counts and document sizes."""
    out, value, count = [], 0, 0
    for byte in blob:
        count += 1
        if count == 9:
            out.append((value << 8) | byte)
            value, count = 0, 0
        elif byte & 0x80:
            value = (value << 7) | (byte & 0x7F)
        else:
            out.append((value << 7) | byte)
            value, count = 0, 0
    return out


def _first_varint(blob: bytes | None) -> int:
    """The first integer of a blob of varints (a one-column table's document size); 0 for none."""
    values = _varints(blob or b"")
    return values[0] if values else 0


def prepare(conn: sqlite3.Connection) -> None:
    """What BM25 scoring needs on a connection: the `fts_size` SQL function (a document's length from
    FTS5's size record) and `scratch`, an in-memory database for the tokenizer's scratch tables (cue words,
    the marked results: written on every recall, so never to a temp file on disk, which cost half a
    millisecond a recall and would hold memory text outside the data dir). The vocabulary views are created on
    first use (`_views`), in the temp schema, so read-only stores work too."""
    conn.create_function("fts_size", 1, _first_varint, deterministic=True)
    conn.execute("ATTACH DATABASE ':memory:' AS scratch")


_STEMS: dict[str, tuple[str, ...]] = {}  # cue word -> its index terms (one tokenizer for every store)
_STEMS_KEPT = 65_536


def _views(cur: sqlite3.Cursor) -> None:
    """Temp-schema fts5vocab views over each table (terms per document, documents per term) and a scratch
    table with the same tokenizer that turns cue words into the index's stemmed terms."""
    create = "CREATE VIRTUAL TABLE IF NOT EXISTS temp"
    cur.execute("CREATE VIRTUAL TABLE IF NOT EXISTS scratch.cue_terms USING fts5(body, tokenize='porter unicode61')")
    cur.execute(f"{create}.cue_terms_instance USING fts5vocab(scratch, cue_terms, instance)")
    for table in TABLES:
        cur.execute(f"{create}.{table}_instance USING fts5vocab(main, {table}, instance)")
        cur.execute(f"{create}.{table}_row USING fts5vocab(main, {table}, row)")


def stems(cur: sqlite3.Cursor, words: Sequence[str]) -> list[str]:
    """The index terms of the given words (Porter stems, as the tables' own tokenizer makes them), in order,
    without repeats. Computed by SQLite's tokenizer itself, so a cue and the index can never disagree; each word
    once (cues share most of their words, and the round trip cost about a millisecond a cue)."""
    known = {w: _STEMS.get(w) for w in dict.fromkeys(words)}  # (read once: another store's thread may clear it)
    missing = [w for w, found in known.items() if found is None]
    if missing:
        _views(cur)
        cur.execute("DELETE FROM scratch.cue_terms")
        cur.executemany("INSERT INTO scratch.cue_terms (rowid, body) VALUES (?, ?)", list(enumerate(missing, start=1)))
        terms: dict[int, list[str]] = {}
        for doc, term in cur.execute("SELECT doc, term FROM temp.cue_terms_instance ORDER BY doc, offset"):
            terms.setdefault(doc, []).append(term)
        cur.execute("DELETE FROM scratch.cue_terms")
        made = {word: tuple(terms.get(n, ())) for n, word in enumerate(missing, start=1)}
        if len(_STEMS) + len(made) > _STEMS_KEPT:
            _STEMS.clear()
        _STEMS.update(made)
        known.update(made)
    return list(dict.fromkeys(term for word in words for term in known[word] or ()))


def totals(cur: sqlite3.Cursor, table: str) -> tuple[int, float]:
    """(rows, mean length in tokens) of a table, read from FTS5's own averages record (no scan)."""
    row = cur.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    values = _varints(row[0]) if row else []
    if len(values) < 2 or values[0] == 0:
        return 0, 0.0
    return values[0], values[1] / values[0]


def bm25(
    cur: sqlite3.Cursor, table: str, words: Sequence[str], limit: int, k1: float, b: float
) -> list[tuple[str, float]]:
    """(memory id, BM25 score) of the best `limit` rows of `table` holding any of the words, best first.

    Okapi BM25 with the given saturation `k1` and length normalisation `b` (FTS5's built-in bm25() fixes
    them at 1.2 and 0.75): sum over the cue's distinct terms of idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b *
    length / mean length)). Term counts per row come from an fts5vocab view, document frequencies and the
    row count from FTS5's own records, so the scores follow every write and forget of the table."""
    assert table in TABLES
    _views(cur)
    terms = stems(cur, words)
    rows, mean_length = totals(cur, table)
    if not terms or rows == 0:
        return []
    df = dict(cur.execute(
        f"SELECT term, doc FROM temp.{table}_row WHERE term IN ({_marks(len(terms))})", terms
    ).fetchall())
    weights = [(t, idf(rows, int(df[t]))) for t in terms if df.get(t)]
    if not weights:
        return []
    values = ",".join("(?, ?)" for _ in weights)
    if b == 0.0:
        norm, join = "?", ""
        args: list[Any] = [k1]
    else:
        norm = "? * (1.0 - ? + ? * fts_size(d.sz) / ?)"
        join = f" JOIN {table}_docsize d ON d.id = tf.doc"
        args = [k1, b, b, mean_length]
    sql = (
        f"WITH q(term, w) AS (VALUES {values}),"
        f" tf AS (SELECT v.doc AS doc, q.w AS w, count(*) AS n FROM q JOIN temp.{table}_instance v"
        f" ON v.term = q.term GROUP BY v.term, v.doc)"
        f" SELECT f.id, sum(tf.w * tf.n * ? / (tf.n + {norm})) AS s FROM tf{join}"
        f" JOIN fulltext_rows f ON f.rowid = tf.doc GROUP BY tf.doc ORDER BY s DESC, f.id LIMIT ?"
    )
    params = [x for pair in weights for x in pair] + [k1 + 1.0, *args, limit]
    return [(r[0], float(r[1])) for r in cur.execute(sql, params)]


def documents(cur: sqlite3.Cursor, table: str, ids: Sequence[str]) -> dict[str, tuple[int, int, dict[str, int]]]:
    """(row number, length in tokens, {index term: occurrences}) of the given memories' rows of `table` (those
    that have one): the rows' bodies tokenized again by the tables' own tokenizer, in the scratch table
    `stems` uses, so the counts are the ones the posting lists hold."""
    assert table in TABLES
    _views(cur)
    by_row = {r: i for i, r in _rowids(cur, list(dict.fromkeys(ids)), create=False).items()}
    bodies: list[tuple[int, str]] = []
    sizes: dict[int, int] = {}
    for chunk in _chunks(list(by_row)):  # type: ignore[arg-type]
        marks_ = _marks(len(chunk))
        bodies += cur.execute(f"SELECT rowid, body FROM {table} WHERE rowid IN ({marks_})", chunk).fetchall()
        sizes.update(cur.execute(f"SELECT id, fts_size(sz) FROM {table}_docsize WHERE id IN ({marks_})", chunk))
    counts: dict[int, dict[str, int]] = {}
    # One savepoint around the scratch rows: outside a transaction each insert was its own, and FTS5 wrote a
    # segment per row (ten times slower for a batch of thousands).
    cur.execute("SAVEPOINT tokenize")
    try:
        cur.execute("DELETE FROM scratch.cue_terms")
        cur.executemany("INSERT INTO scratch.cue_terms (rowid, body) VALUES (?, ?)", bodies)
        vocabulary = "SELECT doc, term, count(*) FROM temp.cue_terms_instance GROUP BY doc, term"
        for row, term, n in cur.execute(vocabulary):
            counts.setdefault(row, {})[term] = n
    finally:
        cur.execute("DELETE FROM scratch.cue_terms")
        cur.execute("RELEASE tokenize")
    return {by_row[r]: (r, sizes.get(r, 0), counts.get(r, {})) for r, _ in bodies}


def row_ids(cur: sqlite3.Cursor) -> list[tuple[int, str]]:
    """(row number, memory id) of every indexed memory, by row number."""
    return cur.execute("SELECT rowid, id FROM fulltext_rows ORDER BY rowid").fetchall()


def dump(cur: sqlite3.Cursor, table: str) -> TablePostings:
    """Every posting list and row length of `table` in one pass over its fts5vocab view (sorted by term in
    byte order, as SQLite compares text, then row), streamed in batches."""
    assert table in TABLES
    _views(cur)
    cur.execute(f"SELECT term, doc, count(*) FROM temp.{table}_instance GROUP BY term, doc ORDER BY term, doc")
    terms, starts, rows, counts = collect(iter(lambda: cur.fetchmany(65536), []))
    sizes = np.array(doc_sizes(cur, table), dtype=np.int64).reshape(-1, 2)
    return TablePostings(terms, starts, rows, counts, sizes[:, 0], sizes[:, 1])


def doc_sizes(cur: sqlite3.Cursor, table: str) -> list[tuple[int, int]]:
    """(row number, length in tokens) of every row of `table`, from FTS5's size records."""
    assert table in TABLES
    return cur.execute(f"SELECT id, fts_size(sz) FROM {table}_docsize ORDER BY id").fetchall()


def marks(cur: sqlite3.Cursor, match: str, texts: Mapping[str, str]) -> dict[str, str]:
    """Memory id -> its text with the words matching the expression in [brackets], for the given texts (memory
    id -> content: the recall hands the contents it returns, so nothing is read again).

    Matched in a scratch table holding just those texts (same tokenizer as `memory_text`): a MATCH on
    `memory_text` itself evaluates the expression over the whole index before keeping the few rows asked for,
    a cost that grew with the store."""
    if not texts:
        return {}
    cur.execute("CREATE VIRTUAL TABLE IF NOT EXISTS scratch.marks_text USING fts5(body, tokenize='porter unicode61')")
    by_row = dict(enumerate(texts, start=1))
    cur.execute("DELETE FROM scratch.marks_text")
    try:
        cur.executemany("INSERT INTO scratch.marks_text (rowid, body) VALUES (?, ?)",
                        [(n, texts[i]) for n, i in by_row.items()])
        rows = cur.execute(
            "SELECT rowid, highlight(marks_text, 0, '[', ']') FROM scratch.marks_text WHERE marks_text MATCH ?",
            (match,),
        ).fetchall()
    finally:
        cur.execute("DELETE FROM scratch.marks_text")
    return {by_row[r[0]]: r[1] for r in rows}
