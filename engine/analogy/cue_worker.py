"""The cue's spaCy parse in a process of its own, so that it truly runs beside the cue's embedding.

spaCy holds the GIL for most of a short cue's 5-9 ms parse, so in a thread beside the embedding it doubles
the embedding's time; in a child process it runs on the other core. One child per process serves every
engine: it is spawned (never forked: the parent runs onnxruntime and Chroma threads) on an engine's first
analogical recall, loads spaCy and the episode extractor once, and answers one cue at a time over a pipe
with the cue's structure dict (small, pickled: equal to the in-process one, floats and all). The child is
`python -m engine.analogy.cue_worker FD` on one end of a socket pair, not a multiprocessing spawn: a spawned
child would run the user's own `__main__` module again (a script without a main guard would open its
engine twice).

Nothing waits for it: until the child reports ready, while another recall holds it, or if it cannot start,
dies or stalls, the cue is parsed in this process as before (`parse` returns None). Engines `acquire` it and
`release` it at `close()`; the last release stops the child. A child whose parent dies reads end-of-file on
its pipe and exits, so no process outlives its parent.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import config

if TYPE_CHECKING:  # imported where used: a process that never recalls analogically does not pay for them
    from multiprocessing.connection import Connection

_READY = "ready"
# The child's BLAS on one thread: a cue's matrices are small, and a second BLAS thread spinning for work would
# take the core the parent's embedding runs on.
_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _serve(conn: Connection) -> None:
    """The child: load the extractor, then answer each cue with its structure until told to stop."""
    from engine.analogy.text import EpisodeExtractor

    extractor = EpisodeExtractor()
    try:
        extractor.extract(["warm up"])  # loads spaCy and the extractor's lexicon before the first cue
        conn.send(_READY)
        while True:
            cue = conn.recv()
            if cue is None:
                return
            try:
                conn.send(("ok", extractor.extract([cue])[0]))
            except Exception as exc:  # the parent parses it itself and reports its own error
                conn.send(("error", repr(exc)))
    except (EOFError, OSError, KeyboardInterrupt):  # the parent went away
        return


class CueWorker:
    """A spawned child that parses cues (see the module doc). Thread-safe; one request at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the fields below and the pipe (one cue in flight)
        self._users = 0
        self._process: Any = None
        self._conn: Connection | None = None
        self._ready = False
        self.failures = 0  # children that died or stalled; after `config.CUE_WORKER_MAX_FAILURES`, no more

    @property
    def running(self) -> bool:
        return self._process is not None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else int(self._process.pid)

    def acquire(self) -> None:
        """One more engine uses the worker: start the child if none runs (it loads meanwhile)."""
        with self._lock:
            self._users += 1
            if self._process is None and self.failures < config.CUE_WORKER_MAX_FAILURES:
                self._start()

    def release(self) -> None:
        """An engine is done with the worker; the last one stops the child."""
        with self._lock:
            self._users = max(0, self._users - 1)
            if self._users == 0:
                self._stop()

    def shutdown(self) -> None:
        """Stop the child whoever still uses it (interpreter exit)."""
        with self._lock:
            self._stop()

    def parse(self, cue: str) -> dict[str, Any] | None:
        """The cue's structure from the child, or None when it is not ready, busy or broken (parse here)."""
        if not self._lock.acquire(blocking=False):
            return None  # another recall's cue is in the child: parsing here beats queueing behind it
        try:
            conn = self._conn
            if conn is None:
                return None
            try:
                if not self._ready:
                    if not conn.poll(0):
                        return None  # still loading spaCy
                    if conn.recv() != _READY:
                        raise EOFError("unexpected first message")
                    self._ready = True
                conn.send(cue)
                if not conn.poll(config.CUE_WORKER_TIMEOUT_SECONDS):
                    raise TimeoutError("the cue parse worker stalled")
                status, answer = conn.recv()
            except (EOFError, OSError, TimeoutError, ValueError):
                self.failures += 1
                self._stop()
                if self._users and self.failures < config.CUE_WORKER_MAX_FAILURES:
                    self._start()  # a fresh child for the next cues; this one is parsed here
                return None
            return answer if status == "ok" else None
        finally:
            self._lock.release()

    def _start(self) -> None:
        import socket
        import subprocess
        from multiprocessing.connection import Connection

        parent, child = socket.socketpair()
        root = str(Path(__file__).resolve().parents[2])  # the directory holding the `engine` package
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
               **_ONE_THREAD}
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "engine.analogy.cue_worker", str(child.fileno())],
                pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=env, close_fds=True,
            )
        except Exception:  # cannot start (resource limits, a frozen interpreter): parse in this process
            parent.close()
            child.close()
            self.failures += 1
            return
        child.close()  # the child's end lives in the child only: its death shows here as end-of-file
        self._process, self._conn, self._ready = process, Connection(parent.detach()), False

    def _stop(self) -> None:
        process, conn = self._process, self._conn
        self._process, self._conn, self._ready = None, None, False
        if conn is not None:
            with contextlib.suppress(OSError, ValueError):  # a dead child's pipe
                conn.send(None)
            conn.close()
        if process is not None:
            import subprocess

            try:
                process.wait(config.CUE_WORKER_STOP_SECONDS)
            except subprocess.TimeoutExpired:  # still loading spaCy, or stuck: it holds nothing to save
                process.kill()
                process.wait()


WORKER = CueWorker()


atexit.register(WORKER.shutdown)

if __name__ == "__main__":
    from multiprocessing.connection import Connection as _Connection

    _serve(_Connection(int(sys.argv[1])))
