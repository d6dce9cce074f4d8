"""Disk, permission and database failures (SQLite, OS, Chroma) as one-line `StoreError`s.

The store's backend raises its own errors; every engine operation runs inside `store_errors()` so a caller
sees one readable line of what the data dir could not do, and why.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from engine.errors import HebbsError, StoreError


@contextmanager
def store_errors() -> Iterator[None]:
    """Disk, permission and database failures (SQLite, OS, Chroma) become one-line `StoreError`s."""
    try:
        yield
    except HebbsError:
        raise
    except (sqlite3.Error, OSError) as exc:
        raise as_store_error(exc) from exc
    except Exception as exc:
        if type(exc).__module__.startswith("chromadb"):  # the vector index could not read or write
            raise as_store_error(exc) from exc
        raise


def as_store_error(exc: BaseException) -> StoreError:
    """A disk, permission or database failure as one line: what the data dir could not do, and why."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    lowered = text.lower()
    if "readonly" in lowered or "read-only" in lowered or isinstance(exc, PermissionError):
        reason = "the data directory is read-only or not permitted for this user"
    elif "full" in lowered or getattr(exc, "errno", None) == errno.ENOSPC:
        reason = "the disk is full"
    else:
        reason = "the data directory could not be used"
    return StoreError(f"{reason}: {text[:200]}")
