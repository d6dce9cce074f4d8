"""Disk, permission and database failures (SQLite, PostgreSQL, OS, Chroma) as one-line `StoreError`s.

The store's backend raises its own errors; every engine operation runs inside `store_errors()` so a caller
sees one readable line of what the data dir could not do, and why.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine import config
from engine.errors import HebbsError, StoreError


@contextmanager
def store_errors(data_dir: Path | None = None) -> Iterator[None]:
    """Disk, permission and database failures (SQLite, OS, Chroma) become one-line `StoreError`s; a damaged
    file is named, with what to do about it (`data_dir`: where the store's files are)."""
    try:
        yield
    except HebbsError:
        raise
    except (sqlite3.Error, OSError) as exc:
        raise as_store_error(exc, data_dir) from exc
    except Exception as exc:
        if type(exc).__module__.startswith("chromadb"):  # the vector index could not read or write
            raise as_store_error(exc, data_dir, vectors=True) from exc
        if type(exc).__module__.startswith("psycopg"):  # the PostgreSQL store (psycopg, psycopg_pool)
            raise database_error(exc) from exc
        raise


def database_error(exc: BaseException) -> StoreError:
    """A PostgreSQL failure as one line. A server that is away (restarting, unreachable) is said so: servers
    answer 503 meanwhile, and their connection pool reconnects by itself once it is back."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    name = type(exc).__name__
    if name in ("OperationalError", "PoolTimeout", "InterfaceError") or "connection" in text.lower():
        return StoreError(f"the database is unavailable (retry shortly): {text[:200]}")
    return StoreError(f"the database refused the operation: {text[:200]}")


DAMAGE_WORDS = ("not a database", "malformed", "corrupt", "file is encrypted", "database disk image")


def as_store_error(exc: BaseException, data_dir: Path | None = None, *, vectors: bool = False) -> StoreError:
    """A disk, permission or database failure as one line: what the data dir could not do, and why."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    lowered = text.lower()
    if any(word in lowered for word in DAMAGE_WORDS):
        return damaged_store_error(text, data_dir, vectors=vectors)
    if "readonly" in lowered or "read-only" in lowered or isinstance(exc, PermissionError):
        reason = "the data directory is read-only or not permitted for this user"
    elif "full" in lowered or getattr(exc, "errno", None) == errno.ENOSPC:
        reason = "the disk is full"
    else:
        reason = "the data directory could not be used"
    return StoreError(f"{reason}: {text[:200]}")


def damaged_store_error(text: str, data_dir: Path | None, *, vectors: bool) -> StoreError:
    """A damaged record store or vector index, named, with the remedy: the vector index is derived (every
    embedding is also in the record store), so deleting it is safe; the record store is the memories."""
    root = data_dir if data_dir is not None else Path("<data dir>")
    if vectors:
        return StoreError(f"the vector index {root / config.VECTOR_DIRNAME} is damaged ({text[:120]}): delete that "
                          "folder and it is rebuilt from the record store on the next open")
    return StoreError(f"the record store {root / config.RECORDS_FILENAME} is damaged ({text[:120]}): restore it "
                      "from a backup, or move it away to start an empty store (its memories are then gone)")
