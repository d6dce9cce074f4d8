"""The change log: which memories changed, numbered in commit order, so in-memory indexes catch up.

Recall's derived structures (the candidate table, the lexical posting lists) are built once and then
follow the store: after any commit, by this process or another, they ask which memories changed since the
change number they hold (`changes_since`) and re-read just those, never the whole store.

One row per memory id: (id, seq), seq unique and increasing. A change gives the id the next seq (replacing
its row), so the log holds at most one row per id ever stored, and a reader far behind reads each changed id
once. A forgotten memory keeps its row (the reader must learn that it went). What counts as a change:
anything of a memory that the candidate table or lexical search reads: the memory inserted, deleted, or its
content, context, entity, kind, creation time or embedding updated (access counts, importance, structures
and sync marks are not); an edge touching it added or removed (both ends); its lexical window rewritten
(`note`, called by the full-text index). Triggers write the first two, so no write path can miss them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

# A bare max() over the indexed column is one index lookup; wrapped in coalesce() inside the SELECT it scans.
_LATEST = "coalesce((SELECT max(seq) FROM changes), 0)"
_NEXT = f"({_LATEST} + 1)"


def _logged(row: str) -> str:
    return f"INSERT OR REPLACE INTO changes (id, seq) VALUES ({row}, {_NEXT});"


_TRIGGERS = {
    "changes_memory_in": f"AFTER INSERT ON memories BEGIN {_logged('new.id')} END",
    "changes_memory_out": f"AFTER DELETE ON memories BEGIN {_logged('old.id')} END",
    "changes_memory_set": "AFTER UPDATE OF content, context, entity_id, kind, created_at, embedding ON memories"
                          f" BEGIN {_logged('new.id')} END",
    "changes_edge_in": f"AFTER INSERT ON edges BEGIN {_logged('new.source')} {_logged('new.target')} END",
    "changes_edge_out": f"AFTER DELETE ON edges BEGIN {_logged('old.source')} {_logged('old.target')} END",
}
# The triggers are created anew on every open (in one transaction: no write slips between), so a store always
# has this version's.
_TABLE = "CREATE TABLE IF NOT EXISTS changes (id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE);\n"
SCHEMA = "BEGIN IMMEDIATE;\n" + _TABLE + "".join(
    f"DROP TRIGGER IF EXISTS {name};\nCREATE TRIGGER {name} {body};\n" for name, body in _TRIGGERS.items()
) + "COMMIT;\n"


def note(cur: sqlite3.Cursor, ids: Iterable[str]) -> None:
    """Log a change of memories that no trigger sees (their lexical window rows were rewritten)."""
    cur.executemany(f"INSERT OR REPLACE INTO changes (id, seq) VALUES (?, {_NEXT})", [(i,) for i in ids])


def latest(cur: sqlite3.Cursor) -> int:
    return int(cur.execute(f"SELECT {_LATEST}").fetchone()[0])


def since(cur: sqlite3.Cursor, seq: int) -> tuple[int, list[str]]:
    """(latest seq, ids changed after `seq` in the order of their last change), in one read."""
    rows = cur.execute("SELECT id, seq FROM changes WHERE seq > ? ORDER BY seq", (seq,)).fetchall()
    return (int(rows[-1][1]) if rows else seq), [r[0] for r in rows]


def kept(cur: sqlite3.Cursor) -> bool:
    """Whether the store has the log (a read-only store written before it existed has not)."""
    return cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'changes'").fetchone() is not None
