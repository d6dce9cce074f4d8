"""Replies kept under an idempotency key, in the record store's own file: a client that retries a write
(its connection dropped, the server restarted) with the same key gets the first reply instead of storing
the memories twice. Bounded: only the newest `config.IDEMPOTENCY_KEYS_KEPT` keys are kept."""

from __future__ import annotations

import time

from engine import config
from engine.store.interface import Storage

_TABLES = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    operation TEXT NOT NULL,
    reply TEXT NOT NULL,
    stored_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS replies_age ON replies (stored_at)
"""


class Replies:
    def __init__(self, store: Storage) -> None:
        self.store = store
        self._ready = False

    def _ensure(self) -> None:
        if not self._ready:
            self.store.ensure_tables(_TABLES)
            self._ready = True

    def get(self, key: str) -> tuple[str, str] | None:
        """(operation, reply) stored under `key`, or None."""
        if not self.store.read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'replies'"):
            return None
        rows = self.store.read("SELECT operation, reply FROM replies WHERE key = ?", (key,))
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def put(self, key: str, operation: str, reply: str) -> None:
        """Keep `reply` under `key`, dropping the oldest keys beyond the bound."""
        self._ensure()
        with self.store.transaction(counted=False) as cur:
            cur.execute("INSERT OR REPLACE INTO replies (key, operation, reply, stored_at) VALUES (?, ?, ?, ?)",
                        (key, operation, reply, time.time()))
            cur.execute("DELETE FROM replies WHERE key NOT IN (SELECT key FROM replies ORDER BY stored_at DESC "
                        "LIMIT ?)", (config.IDEMPOTENCY_KEYS_KEPT,))
