"""The one service object both transports share: the engine, the API keys and the read/write lock.

REST and gRPC handlers are thin: they turn their wire format into an operation name and a mapping,
call `HebbsService.call`, and turn the response (or the `HebbsError`) back into their wire format with
`interfaces.errors`. Reads run in parallel; writes run one at a time and never while a read is running,
so no request ever sees a memory half-written to the record store and the indexes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from engine.api import REQUESTS, parse_request
from engine.errors import StoreError
from engine.facade import MemoryEngine
from interfaces.auth import AuthenticationError, KeyRing

try:
    VERSION = version("hebbs-workbench")
except PackageNotFoundError:  # pragma: no cover - running from a plain checkout
    VERSION = "0"

# Operations that change the store; everything else is a read (a recall's access count is one atomic
# UPDATE in the record store, so concurrent recalls need no writer lock to count exactly).
WRITE_OPERATIONS = frozenset({"remember", "remember_many", "revise", "forget", "add_edges", "ingest"})
assert set(REQUESTS) >= WRITE_OPERATIONS


class ReadWriteLock:
    """Many readers or one writer; a waiting writer blocks new readers, so writes are not starved."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


class HebbsService:
    """What `hebbs serve` runs: one engine over one data dir, guarded by API keys (unless `auth` is off)."""

    def __init__(self, engine: MemoryEngine, *, auth: bool = True) -> None:
        self.engine = engine
        self.auth = auth
        self.keys = KeyRing(engine.data_dir)
        self.started = time.monotonic()
        self._lock = ReadWriteLock()
        self._closed = False

    def authorize(self, key: str | None) -> None:
        """Raises `AuthenticationError` unless auth is off or `key` is a stored key. Never logs the key."""
        if not self.auth:
            return
        if not key:
            raise AuthenticationError("missing API key: send 'Authorization: Bearer <key>'")
        if not self.keys.verify(key):
            raise AuthenticationError("invalid API key")

    def call(self, op: str, payload: Mapping[str, Any]) -> Any:
        """Parse `payload` as the request of `op`, run it under the right lock, and return the response."""
        request = parse_request(op, payload)
        with self.writing() if op in WRITE_OPERATIONS else self._lock.reading():
            if self._closed:
                raise StoreError("the server is shutting down; retry against its successor")
            return self.engine.handle(request)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold a reader's share: for a read made outside `call` (the entity list)."""
        with self._lock.reading():
            if self._closed:
                raise StoreError("the server is shutting down; retry against its successor")
            yield

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the writer lock: for a write made outside `call` (uploads) and for shutdown."""
        with self._lock.writing():
            yield

    def uptime_seconds(self) -> float:
        return time.monotonic() - self.started

    def close(self) -> None:
        """Wait for in-flight requests (takes the writer lock), then close the engine and its data-dir lock."""
        with self._lock.writing():
            if not self._closed:
                self._closed = True
                self.engine.close()
