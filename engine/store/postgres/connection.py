"""The PostgreSQL connection pool under the shared record store: schema, transactions, versions, metadata.

Every table class (memories, edges, structures, vector sync, text, bookkeeping) is a mixin over this pool.
Writes that change what recall reads take one advisory lock for their transaction (one per tenant's schema),
so the writers of every replica on the database commit one at a time (the text index's windows and statistics
stay consistent, as under SQLite's single writer), and bump the `changes` counter in the same transaction:
`version()` reads it, so every replica's in-memory caches see every other replica's commits. Reads run
concurrently.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from engine.errors import StoreError
from engine.store.postgres import changes

SCHEMA_VERSION = 1
WRITE_LOCK = 0x48454242  # the advisory lock every counted write takes ("HEBB")
SCHEMA_LOCK = 0x48454243
POOL_WAIT_SECONDS = 5.0
CHANNEL = "hebbs_changes"  # NOTIFY on every counted commit (`listen`)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS commits (one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), value BIGINT NOT NULL);
INSERT INTO commits (one, value) VALUES (TRUE, 0) ON CONFLICT DO NOTHING;
CREATE TABLE IF NOT EXISTS memories (
    id TEXT COLLATE "C" PRIMARY KEY,
    content TEXT NOT NULL,
    importance DOUBLE PRECISION NOT NULL,
    context TEXT NOT NULL,
    entity_id TEXT COLLATE "C",
    kind TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    last_accessed_at BIGINT,
    access_count BIGINT NOT NULL DEFAULT 0,
    structure TEXT NOT NULL DEFAULT '{}',
    embedding BYTEA NOT NULL,
    episode TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_timeline ON memories (entity_id, created_at, id);
CREATE INDEX IF NOT EXISTS memories_kind ON memories (kind);
CREATE INDEX IF NOT EXISTS memories_created ON memories (created_at, id);
-- Each memory's structure version: the stale-structure check (structures.STALE) reads this, not every structure.
CREATE INDEX IF NOT EXISTS memories_structure_version ON memories (((structure::jsonb) -> 'version'));
-- The memories whose structure keeps a plot: the plot index's build (structures.plots) reads these alone.
CREATE INDEX IF NOT EXISTS memories_plots ON memories (id) WHERE ((structure::jsonb) -> 'plot') IS NOT NULL;
CREATE TABLE IF NOT EXISTS edges (
    source TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    target TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    attrs TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (source, target, type)
);
CREATE INDEX IF NOT EXISTS edges_target ON edges (target);
CREATE TABLE IF NOT EXISTS pending_structures (
    id TEXT COLLATE "C" PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS pending_checks (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES memories (id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS ingested (
    memory_id TEXT COLLATE "C" PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    source TEXT COLLATE "C" NOT NULL,
    role TEXT NOT NULL,
    position INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    analysis TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS ingested_source ON ingested (source, role);
CREATE TABLE IF NOT EXISTS entities (
    id TEXT COLLATE "C" PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    mentions INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS entity_aliases (
    alias TEXT COLLATE "C" NOT NULL,
    entity_id TEXT COLLATE "C" NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (alias, entity_id)
);
CREATE INDEX IF NOT EXISTS entity_aliases_entity ON entity_aliases (entity_id);
CREATE TABLE IF NOT EXISTS replies (
    key TEXT COLLATE "C" PRIMARY KEY,
    operation TEXT NOT NULL,
    reply TEXT NOT NULL,
    stored_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS replies_age ON replies (stored_at);
CREATE SEQUENCE IF NOT EXISTS text_row_numbers;
CREATE TABLE IF NOT EXISTS text_rows (rowid BIGINT PRIMARY KEY, id TEXT COLLATE "C" NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS text_docs (
    tbl SMALLINT NOT NULL, rowid BIGINT NOT NULL, length INTEGER NOT NULL, PRIMARY KEY (tbl, rowid)
);
CREATE TABLE IF NOT EXISTS text_postings (
    tbl SMALLINT NOT NULL, term TEXT COLLATE "C" NOT NULL, rowid BIGINT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (tbl, term, rowid)
);
CREATE INDEX IF NOT EXISTS text_postings_row ON text_postings (tbl, rowid);
CREATE TABLE IF NOT EXISTS pending_contradictions (
    pending_id TEXT COLLATE "C" PRIMARY KEY,
    memory_a TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    memory_b TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    verdict TEXT NOT NULL,
    reason TEXT NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    similarity DOUBLE PRECISION NOT NULL,
    detail TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (memory_a, memory_b)
);
CREATE INDEX IF NOT EXISTS pending_contradictions_b ON pending_contradictions (memory_b);
CREATE TABLE IF NOT EXISTS tombstones (
    n BIGSERIAL PRIMARY KEY,
    memory_id TEXT COLLATE "C" NOT NULL,
    forgotten_at BIGINT NOT NULL,
    content_sha256 TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tombstones_time ON tombstones (forgotten_at);
CREATE TABLE IF NOT EXISTS reflect_sessions (
    session_id TEXT COLLATE "C" PRIMARY KEY,
    clusters TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
"""


def connect_pool(url: str, schema: str | None = None) -> Any:
    """A psycopg connection pool on `url`, opened and checked (a clear StoreError if the server is away).
    `schema`: every connection's tables are that schema's, and only its (a tenant's: engine/tenancy.py)."""
    try:
        import psycopg
        from psycopg_pool import ConnectionPool
    except ImportError as exc:  # pragma: no cover - the [postgres] extra is not installed
        raise StoreError("a postgresql:// database needs psycopg: pip install 'hebbs-workbench[postgres]'") from exc
    try:  # one direct connection first: a server that is away fails here at once, not after the pool's retries
        psycopg.connect(url, connect_timeout=10).close()
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to the database {redact(url)}: {' '.join(str(exc).split())}") from exc
    # A request waits at most POOL_WAIT_SECONDS for a connection: while the server is away it then fails (503)
    # instead of hanging; the pool keeps trying to reconnect meanwhile, and checks each connection it lends.
    pool = ConnectionPool(url, min_size=1, max_size=8, open=False, kwargs={"autocommit": True},
                          check=ConnectionPool.check_connection, timeout=POOL_WAIT_SECONDS,
                          configure=None if schema is None else lambda conn: _use_schema(conn, schema))
    try:
        pool.open(wait=True, timeout=10)
    except Exception as exc:
        pool.close()
        raise StoreError(f"cannot connect to the database {redact(url)}: {exc}") from exc
    return pool


def _use_schema(conn: Any, schema: str) -> None:
    """Make `schema` the connection's only schema: a name that is not in it is an error, never a table of the
    database's default schema, which is another tenant's."""
    from psycopg import sql

    conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))


def tenant_schemas(url: str) -> list[str]:
    """The database's tenant schemas (`tenant_<name>`: engine/store/opening.py `tenant_schema`)."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=10) as conn:
            rows = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'tenant\\_%'").fetchall()
    except psycopg.Error as exc:
        raise StoreError(f"cannot read the tenants of the database {redact(url)}: {' '.join(str(exc).split())}"
                         ) from exc
    return sorted(row[0] for row in rows)


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    head, sep, tail = url.partition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, user = head.rpartition("//")
    return f"{scheme}//{user.split(':', 1)[0]}:***@{tail}"


class PostgresConnection:
    """The pool, the schema, and the transactions every table class writes through."""

    read_only = False
    shared = True

    def __init__(self, url: str, schema: str | None = None) -> None:
        self.url, self.schema = url, schema
        # NOTIFY channels are the database's, not a schema's: each tenant's replicas listen on their own.
        self._channel = CHANNEL if schema is None else f"{CHANNEL}_{schema}"
        # Each tenant's writers take turns among themselves only: its change numbers are its own schema's.
        self._write_lock = WRITE_LOCK if schema is None else (
            (zlib.crc32(schema.encode()) & 0x7FFFFFFF) << 32 | WRITE_LOCK)
        self._pool = connect_pool(url, schema)
        self._lock = threading.RLock()  # this process's counted writes, and `version` against them
        self._generation = 0  # this process's counted commits
        self._committed = threading.local()
        self._closed = threading.Event()
        self._listener: threading.Thread | None = None
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                if schema is not None:
                    from psycopg import sql

                    conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
                conn.execute(SCHEMA)
                conn.execute(changes.SCHEMA)
                conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', %s) ON CONFLICT DO NOTHING",
                             (str(SCHEMA_VERSION),))
        except BaseException:
            self._pool.close()
            raise

    def close(self) -> None:
        self._closed.set()
        if self._listener is not None:
            self._listener.join(timeout=5)
        self._pool.close()

    def listen(self, callback: Callable[[], None]) -> None:
        """Call `callback` on a thread of its own after each notified commit of another connection (LISTEN on
        a dedicated connection; reconnects while the server is away). Notifications are hints: the reader
        catches up from the change log, so one that is missed delays nothing beyond the next request."""
        import psycopg
        from psycopg import sql

        def run() -> None:
            while not self._closed.is_set():
                try:
                    with psycopg.connect(self.url, autocommit=True) as conn:
                        conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                        callback()  # whatever was committed while this connection was away
                        while not self._closed.is_set():
                            if any(True for _ in conn.notifies(timeout=0.5, stop_after=1)):
                                callback()
                except psycopg.Error:
                    self._closed.wait(1.0)

        self._listener = threading.Thread(target=run, name="hebbs-listen", daemon=True)
        self._listener.start()

    @contextmanager
    def transaction(self, *, counted: bool = True, durable: bool = True) -> Iterator[Any]:
        """One write transaction. `counted`: it may change what recall reads, so it takes the writers' lock
        and moves every replica's `version`; `counted=False` (access counts, sync marks) does neither.
        `durable=False`: the commit does not wait for the server's WAL flush (`synchronous_commit = off` for
        this transaction; a server crash can lose the last fraction of a second of them, never corrupt
        anything): only for bookkeeping whose loss costs nothing, a recall's access counts."""
        if not counted:
            with self._pool.connection() as conn, conn.transaction():
                cur = conn.cursor()
                if not durable:
                    cur.execute("SET LOCAL synchronous_commit = off")
                yield cur
            return
        assert durable, "a counted write is always durable"
        from psycopg import sql

        with self._lock:
            with self._pool.connection() as conn, conn.transaction():
                cur = conn.cursor()
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (self._write_lock,))
                yield cur
                cur.execute("UPDATE commits SET value = value + 1")
                cur.execute(sql.SQL("NOTIFY {}").format(sql.Identifier(self._channel)))  # delivered on commit
            self._generation += 1
            self._committed.generation = self._generation

    def last_commit(self) -> int | None:
        return getattr(self._committed, "generation", None)

    def version(self) -> tuple[int, int]:
        """(this process's counted commits, every other writer's): the second part is the database's change
        counter less this process's own commits, so it moves only when another replica commits."""
        with self._lock:
            total = int(self._query("SELECT value FROM commits")[0][0])
            return self._generation, total - self._generation

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._pool.connection() as conn:
            return conn.execute(sql, params).fetchall()

    def _query_ids(self, select: str, ids: Sequence[str]) -> list[Any]:
        """`select` (a statement without WHERE) restricted to rows whose id is among `ids`."""
        ids = list(ids)
        return self._query(f"{select} WHERE id = ANY(%s)", (ids,)) if ids else []

    def change_seq(self) -> int:
        return changes.latest(self._query)

    def changes_since(self, seq: int) -> tuple[int, list[str]] | None:
        return changes.since(self._query, seq)

    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = %s", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as cur:
            cur.execute("INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE"
                        " SET value = excluded.value", (key, value))

    def checkpoint(self) -> None:
        """PostgreSQL recycles its write-ahead log itself; a CHECKPOINT needs privileges a client may lack."""
        return None
