"""`WalCheckpointer`: the write-ahead log is copied into the database file on a thread of its own, not inside
whichever commit pushes it past SQLite's threshold.

SQLite's automatic checkpoint runs in the commit that takes the log past `wal_autocheckpoint` pages: at a
million memories that commit waited 15-30 ms for the copy and its fsync, and since a recall commits its
results' access counts, one recall in fifty or so paid it (the access write's p99 was 33 ms against a p50 of
1.2 ms). Here a commit only wakes the checkpointer, which copies what is committed (a PASSIVE checkpoint: it
never blocks a reader or a writer) at most once per `period` seconds, on its own connection. SQLite's own
automatic checkpoint stays as the safety net at a higher threshold (`FALLBACK_PAGES`): if this thread ever
falls behind, a commit does the copy as before, so the log cannot grow without bound.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger(__name__)

# At most one checkpoint per this many seconds while writes come in (a write-heavy minute costs sixty copies of
# the pages written since the one before, not one per commit).
CHECKPOINT_PERIOD = 1.0
# SQLite's own checkpoint in a commit, when the log still holds this many pages (SQLite's default is 1,000).
FALLBACK_PAGES = 10_000
# The thread (and its connection) ends after this many seconds without a commit; the next commit starts another.
# (An engine that is never closed leaves no thread behind for long.)
IDLE_SECONDS = 60.0


class WalCheckpointer:
    """Started by the first commit it is told of, ended by `close` (the connection's close checkpoints last) or
    after `idle` seconds without a commit."""

    def __init__(self, path: Path, period: float = CHECKPOINT_PERIOD, idle: float = IDLE_SECONDS) -> None:
        self._path = path
        self._period = period
        self._idle = idle
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.checkpoints = 0  # completed checkpoints (for tests and diagnostics)

    def committed(self) -> None:
        """A commit happened: copy it into the database file soon."""
        with self._lock:  # (with `_run`'s idle exit: a wake is never left without a thread to take it)
            self._wake.set()
            if self._thread is None and not self._closing.is_set():
                self._thread = threading.Thread(target=self._run, name="hebbs-wal-checkpoint", daemon=True)
                self._thread.start()

    def close(self) -> None:
        with self._lock:
            self._closing.set()
            self._wake.set()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        conn = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None, timeout=30)
        try:
            while True:
                if not self._wake.wait(self._idle):
                    with self._lock:
                        if not self._wake.is_set():
                            self._thread = None
                            return
                if self._closing.is_set():
                    return
                self._wake.clear()
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.checkpoints += 1
                except sqlite3.Error as exc:  # a checkpoint is an optimisation: the next one or a commit's does it
                    log.warning("background WAL checkpoint failed (%s); the next commit's checkpoint covers it", exc)
                if self._closing.wait(self._period):
                    return
        finally:
            conn.close()
