"""Replies kept under an idempotency key in the record store: a client that retries a write (its connection
dropped, the server restarted) with the same key gets the first reply instead of storing the memories twice.
Bounded: only the newest `IDEMPOTENCY_KEYS_KEPT` keys are kept."""

from __future__ import annotations

from engine.store.errors import store_errors
from engine.store.interface import Storage

IDEMPOTENCY_KEYS_KEPT = 10_000  # the newest idempotency keys remembered (oldest forgotten first)

class Replies:
    def __init__(self, store: Storage) -> None:
        self.store = store

    def get(self, key: str) -> tuple[str, str] | None:
        """(operation, reply) stored under `key`, or None."""
        with store_errors():
            return self.store.get_reply(key)

    def put(self, key: str, operation: str, reply: str) -> None:
        """Keep `reply` under `key`, dropping the oldest keys beyond the bound."""
        self.store.put_reply(key, operation, reply, IDEMPOTENCY_KEYS_KEPT)
