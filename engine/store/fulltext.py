"""The lexical index: SQLite FTS5 tables in the record store, written in the same transactions as memories.

Two tables, both with Porter stemming:
- `memory_text`: each memory's own content.
- `window_text`: each memory's context window, its content together with its neighbours in the same
  episode (memories linked by `followed_by` within `config.WINDOW_RADIUS` steps whose context names the
  same conversation, session or document), in time order. A turn that only makes sense beside its
  neighbours ("yes, last Tuesday") is still found by the words around it.

The record store calls these functions with its open cursor, so the text index can never disagree with
the memories it indexes: a crash rolls both back together. A store written before this index existed is
filled on open (`rebuild`). Revisions are history and are not indexed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from engine import config
from engine.models import EdgeType, MemoryKind

VERSION = "1"
META_KEY = "fulltext_version"

SCHEMA = """
CREATE TABLE IF NOT EXISTS fulltext_rows (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_text USING fts5(body, tokenize='porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS window_text USING fts5(body, tokenize='porter unicode61')
"""

TABLES = ("memory_text", "window_text")


def _chunks(items: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _marks(n: int) -> str:
    return ",".join("?" * n)


def episode_key(context: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two linked memories part of one episode: the same values of `config.EPISODE_KEYS`."""
    return tuple(json.dumps(context.get(k), sort_keys=True, separators=(",", ":")) for k in config.EPISODE_KEYS)


def _rowids(cur: sqlite3.Cursor, ids: Sequence[str], create: bool) -> dict[str, int]:
    if create:
        cur.executemany("INSERT OR IGNORE INTO fulltext_rows (id) VALUES (?)", [(i,) for i in ids])
    found: dict[str, int] = {}
    for chunk in _chunks(ids):
        found.update((r[1], r[0]) for r in cur.execute(
            f"SELECT rowid, id FROM fulltext_rows WHERE id IN ({_marks(len(chunk))})", chunk
        ))
    return found


def _texts(cur: sqlite3.Cursor, ids: Sequence[str]) -> dict[str, tuple[str, int, dict[str, Any]]]:
    """(content, created_at, context) of the given memories that exist and are not revisions."""
    found: dict[str, tuple[str, int, dict[str, Any]]] = {}
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


class Links:
    """`followed_by` adjacency fetched on demand and kept for one transaction: a window refresh walks the
    same neighbourhood more than once (who is affected, then each affected memory's window), and a bulk
    `add_edges` of a long chain would otherwise query every link several times."""

    def __init__(self, cur: sqlite3.Cursor) -> None:
        self.cur = cur
        self.adjacent: dict[str, set[str]] = {}  # complete neighbour sets of the memories fetched so far

    def of(self, ids: Iterable[str]) -> dict[str, set[str]]:
        missing = [i for i in set(ids) if i not in self.adjacent]
        if missing:
            found = followed_by(self.cur, missing)
            for i in missing:
                self.adjacent[i] = found.get(i, set())
        return self.adjacent


def _within(cur: sqlite3.Cursor, ids: Iterable[str], radius: int, links: Links | None = None) -> set[str]:
    """The memories within `radius` followed_by steps of the given ones (themselves included)."""
    links = links or Links(cur)
    reached = set(ids)
    frontier = set(reached)
    for _ in range(radius):
        if not frontier:
            break
        adjacent = links.of(frontier)
        frontier = {n for i in frontier for n in adjacent[i]} - reached
        reached |= frontier
    return reached


def windows(cur: sqlite3.Cursor, ids: Sequence[str], links: Links | None = None) -> dict[str, list[str]]:
    """Each memory's window: itself and its same-episode followed_by neighbours, in time order."""
    return _windows(cur, ids, links or Links(cur))[0]


def _windows(
    cur: sqlite3.Cursor, ids: Sequence[str], links: Links
) -> tuple[dict[str, list[str]], dict[str, tuple[str, int, dict[str, Any]]]]:
    """`windows` and the texts of every memory in them."""
    radius = config.WINDOW_RADIUS
    area = _within(cur, ids, radius, links)
    texts = _texts(cur, sorted(area))
    keys = {i: episode_key(t[2]) for i, t in texts.items()}
    # `_within` fetched the links of every memory closer than `radius` to one of `ids`: all a window needs.
    adjacent = links.adjacent
    out: dict[str, list[str]] = {}
    for i in ids:
        if i not in texts:
            continue
        key = keys[i]
        members, frontier = {i}, {i}
        for _ in range(radius):
            frontier = {
                n for m in frontier for n in adjacent.get(m, ())
                if n in texts and n not in members and keys[n] == key
            }
            members |= frontier
        out[i] = sorted(members, key=lambda m: (texts[m][1], m))
    return out, texts


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
    links = Links(cur)
    refresh_windows(cur, _within(cur, live, config.WINDOW_RADIUS, links), links)


def index_new(cur: sqlite3.Cursor, contents: Sequence[tuple[str, str]], linked: Iterable[str]) -> None:
    """Text rows of memories inserted in this transaction: (id, content) of each (revisions left out).

    Same rows as `index`, written straight from the contents in hand: a new memory can only have the
    edges of its own transaction, so one that no `followed_by` edge of it touches (`linked`: the ends of
    those edges) is its whole window. The linked ones, and the windows around them, go through the general
    refresh. Falls back to `index` if any id already has text rows (nothing to assume then)."""
    ids = [i for i, _ in contents]
    if not ids:
        return
    if _rowids(cur, ids, create=False):
        index(cur, ids)
        return
    start = 1 + max(
        int(cur.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()[0])
        for table in ("fulltext_rows", *TABLES)
    )
    rows = [(start + n, i, content) for n, (i, content) in enumerate(contents)]
    cur.executemany("INSERT INTO fulltext_rows (rowid, id) VALUES (?, ?)", [(r, i) for r, i, _ in rows])
    cur.executemany("INSERT INTO memory_text (rowid, body) VALUES (?, ?)", [(r, c) for r, _, c in rows])
    linked = set(linked)
    cur.executemany(
        "INSERT INTO window_text (rowid, body) VALUES (?, ?)", [(r, c) for r, i, c in rows if i not in linked]
    )
    touched = [i for i in ids if i in linked]
    if touched:
        links = Links(cur)
        refresh_windows(cur, _within(cur, touched, config.WINDOW_RADIUS, links), links)


def refresh_windows(cur: sqlite3.Cursor, ids: Iterable[str], links: Links | None = None) -> None:
    """Recompute the window rows of the given memories (after their neighbourhood changed); `links`: the
    adjacency this transaction already fetched, if any."""
    ids = sorted(set(ids))
    if not ids:
        return
    members, texts = _windows(cur, ids, links or Links(cur))
    rowids = _rowids(cur, list(members), create=True)
    cur.executemany("DELETE FROM window_text WHERE rowid = ?", [(rowids[i],) for i in members])
    cur.executemany(
        "INSERT INTO window_text (rowid, body) VALUES (?, ?)",
        [(rowids[i], "\n".join(texts[m][0] for m in ms)) for i, ms in members.items()],
    )


def neighbourhood(cur: sqlite3.Cursor, ids: Sequence[str], links: Links | None = None) -> set[str]:
    """The memories whose windows may include the given ones: call before deleting them."""
    return _within(cur, ids, config.WINDOW_RADIUS, links) - set(ids)


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


def search(cur: sqlite3.Cursor, table: str, match: str, limit: int) -> list[tuple[str, float]]:
    """(memory id, BM25 score (higher is better)) of the best `limit` rows of `table` for an FTS5 MATCH
    expression. No highlight() here: marking matched words costs more than ranking, so only the memories
    a recall returns are marked (`marks`)."""
    assert table in TABLES
    rows = cur.execute(
        f"SELECT f.id, -bm25({table}) FROM {table}"
        f" JOIN fulltext_rows f ON f.rowid = {table}.rowid"
        f" WHERE {table} MATCH ? ORDER BY bm25({table}) LIMIT ?",
        (match, limit),
    )
    return [(r[0], float(r[1])) for r in rows]


def marks(cur: sqlite3.Cursor, match: str, ids: Sequence[str]) -> dict[str, str]:
    """Memory id -> its content with the words matching the expression in [brackets], for the given ids."""
    rowids = _rowids(cur, list(ids), create=False)
    if not rowids:
        return {}
    by_rowid = {r: i for i, r in rowids.items()}
    rows = cur.execute(
        f"SELECT rowid, highlight(memory_text, 0, '[', ']') FROM memory_text"
        f" WHERE memory_text MATCH ? AND rowid IN ({_marks(len(by_rowid))})",
        (match, *by_rowid),
    )
    return {by_rowid[r[0]]: r[1] for r in rows}
