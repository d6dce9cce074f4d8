"""The change log in PostgreSQL (what it is for and what counts as a change: engine/store/sqlite/changes.py).

One row per memory id with the number of its latest change. Numbers come from a sequence, drawn by triggers
inside counted write transactions, which all hold the writers' advisory lock until they commit
(connection.py): so numbers grow in commit order, and a reader that has seen number n never later meets a
newly visible change numbered below n. Window rewrites, which no trigger sees, are logged by `note`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

Query = Callable[[str, Sequence[Any]], list[Any]]

_LOG = ("INSERT INTO changes (id, seq) VALUES ({id}, nextval('change_numbers'))"
        " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq")

SCHEMA = f"""
CREATE SEQUENCE IF NOT EXISTS change_numbers;
CREATE TABLE IF NOT EXISTS changes (id TEXT COLLATE "C" PRIMARY KEY, seq BIGINT NOT NULL UNIQUE);
CREATE OR REPLACE FUNCTION log_memory_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN {_LOG.format(id="OLD.id")}; ELSE {_LOG.format(id="NEW.id")}; END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION log_edge_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        {_LOG.format(id="OLD.source")}; {_LOG.format(id="OLD.target")};
    ELSE
        {_LOG.format(id="NEW.source")}; {_LOG.format(id="NEW.target")};
    END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER changes_memory_in_out AFTER INSERT OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION log_memory_change();
CREATE OR REPLACE TRIGGER changes_memory_set
    AFTER UPDATE OF content, context, entity_id, kind, created_at, embedding ON memories
    FOR EACH ROW EXECUTE FUNCTION log_memory_change();
CREATE OR REPLACE TRIGGER changes_edge_in_out AFTER INSERT OR DELETE ON edges
    FOR EACH ROW EXECUTE FUNCTION log_edge_change();
"""


def note(cur: Any, ids: Iterable[str]) -> None:
    """Log a change of memories that no trigger sees (their lexical window rows were rewritten)."""
    cur.execute(
        "INSERT INTO changes (id, seq) SELECT i, nextval('change_numbers') FROM unnest(%s::text[]) AS i"
        " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq", (sorted(set(ids)),)
    )


def latest(query: Query) -> int:
    return int(query("SELECT coalesce(max(seq), 0) FROM changes", ())[0][0])


def since(query: Query, seq: int) -> tuple[int, list[str]]:
    """(latest number, ids changed after `seq` in the order of their last change), in one read."""
    rows = query("SELECT id, seq FROM changes WHERE seq > %s ORDER BY seq", (seq,))
    return (int(rows[-1][1]) if rows else seq), [r[0] for r in rows]
