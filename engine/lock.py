"""One owner per data directory: an OS-level lock on the data directory itself (POSIX; `.owner.lock` on
Windows), with `<data dir>/.owner.lock` saying who holds it.

An embedded Chroma directory and its SQLite record store are not safe to share between processes (two
HNSW writers overwrite each other's segments). So the first process that opens a data dir owns it until
it closes the engine or exits; a second process gets `DataDirLockedError` naming the owner's pid and
command, and should talk to the owner instead (`hebbs --server URL`, `HEBBS_SERVER`).

The lock is `flock` on the folder, held open by the owner: the kernel drops it when the owner dies, so a
crash leaves no stale lock (the file's text only says who held it last), and deleting `.owner.lock` while
the owner runs does not free the store. Within one process the lock is shared and counted: a
notebook or a test may open the same data dir twice, or close and reopen it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from engine.errors import DataDirLockedError

LOCK_FILENAME = ".owner.lock"

try:  # POSIX
    import fcntl

    _POSIX = True

    def _try_lock(handle: IO[str]) -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(handle: IO[str]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _lock(handle: IO[str]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    _POSIX = False

    def _try_lock(handle: IO[str]) -> bool:
        try:
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True

    def _unlock(handle: IO[str]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]

    def _lock(handle: IO[str]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]


@dataclass
class _Held:
    handle: IO[str]
    count: int
    folder: int | None = None  # the locked directory's descriptor (POSIX)


_HELD: dict[Path, _Held] = {}
_GUARD = threading.Lock()


def owner_description() -> str:
    """`pid 123 (hebbs)`: what a refused process is told about the owner. The program's name only: its
    arguments may hold memory content or paths (`hebbs remember "..."`), and the file is readable."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else Path(sys.executable).name
    return f"pid {os.getpid()} ({program[:80]})"


def exclusive(handle: IO[str]) -> None:
    """Wait for an exclusive lock on an open file (released when the handle is closed)."""
    _lock(handle)


class DataDirLock:
    """The lock on one data dir, held from `acquire()` to `release()` (or process exit)."""

    def __init__(self, data_dir: str | Path) -> None:
        self.path = Path(data_dir).resolve() / LOCK_FILENAME
        self._held = False

    def acquire(self) -> DataDirLock:
        with _GUARD:
            held = _HELD.get(self.path)
            if held is not None:
                held.count += 1
            else:
                folder = self._lock_folder()
                try:
                    _HELD[self.path] = _Held(self._lock_file(folder is None), 1, folder)
                except BaseException:
                    if folder is not None:
                        os.close(folder)
                    raise
            self._held = True
        return self

    def _lock_folder(self) -> int | None:
        """POSIX: `flock` the data dir itself, held open by the owner. Deleting `.owner.lock` cannot undo
        that lock (the folder can only go with everything in it), so a second process is refused even then."""
        if not _POSIX:
            return None
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            self._refuse(self._owner_text())
        return fd

    def _owner_text(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8", errors="replace").strip()[:200] or "another process"
        except OSError:
            return "another process"

    def _refuse(self, owner: str) -> None:
        raise DataDirLockedError(
            f"data dir {self.path.parent} is in use by {owner}; stop it, or send commands to its server "
            "with --server URL (env HEBBS_SERVER)"
        )

    def _lock_file(self, locked_here: bool) -> IO[str]:
        """`.owner.lock`, which says who owns the dir (pid and program name; mode 0600). Where the folder
        cannot be locked (Windows) the file's own lock is the lock."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        handle = os.fdopen(fd, "a+", encoding="utf-8")
        if locked_here and not _try_lock(handle):
            handle.seek(0)
            owner = handle.read().strip() or "another process"
            handle.close()
            self._refuse(owner)
        handle.seek(0)
        handle.truncate()
        handle.write(owner_description() + "\n")
        handle.flush()
        return handle

    def release(self) -> None:
        """Drop this holder's share; the OS lock goes with the last one. Safe to call twice."""
        with _GUARD:
            if not self._held:
                return
            self._held = False
            held = _HELD.get(self.path)
            if held is None:
                return
            held.count -= 1
            if held.count == 0:
                del _HELD[self.path]
                if held.folder is None:
                    _unlock(held.handle)
                held.handle.close()
                if held.folder is not None:
                    os.close(held.folder)  # drops the folder's flock

    def __enter__(self) -> DataDirLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def cache_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` while a model file is written into the cache, so two processes that both
    find it missing (make setup beside a first recall) do not write it twice."""
    with path.open("a") as handle:
        _lock(handle)
        try:
            yield
        finally:
            _unlock(handle)
