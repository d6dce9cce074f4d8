"""Which record store an engine opens: SQLite files in a data dir (the default), or a PostgreSQL database
(`database=` / `HEBBS_DATABASE_URL`) that several engines and servers share.

A SQLite data dir has one owner (engine/lock.py). A PostgreSQL store has none: any number of engines write
to it at once. Each of them keeps its derived indexes, the vector index included, to itself, rebuilt from
the database when it opens, in its own folder: `data_dir` if given (one engine at a time), else a private
temporary folder removed on close.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Protocol

from engine import config
from engine.errors import StoreError
from engine.lock import DataDirLock
from engine.store.interface import Storage
from engine.store.records import make_private_dir, open_record_store

DATABASE_ENV = "HEBBS_DATABASE_URL"


class Owner(Protocol):
    def release(self) -> None: ...


class _NoOwner:
    """What a read-only engine holds instead of the data dir's lock."""

    def release(self) -> None:
        return None


class _Scratch:
    """A private temporary folder for one engine's derived indexes, removed on release."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="hebbs-replica-"))

    def release(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def is_database_url(value: str | None) -> bool:
    return bool(value) and str(value).startswith(("postgresql://", "postgres://"))


def default_database() -> str | None:
    """`HEBBS_DATABASE_URL` if set."""
    return os.environ.get(DATABASE_ENV) or None


def _lock(folder: Path) -> Owner:
    try:
        make_private_dir(folder)
        # One owner per data dir: a second process is refused here, before it touches Chroma. A folder this
        # process cannot write is opened for reading only and owns nothing.
        return DataDirLock(folder).acquire() if os.access(folder, os.W_OK) else _NoOwner()
    except OSError as exc:
        raise StoreError(f"cannot open data directory {folder}: {exc}") from exc


def open_storage(data_dir: str | Path | None, database: str | None) -> tuple[Owner, Storage, Path]:
    """(what the engine holds until closed, the record store, the folder of its derived indexes). Without a
    `data_dir` or `database`, `HEBBS_DATABASE_URL` if set, else the default data dir."""
    if database is None and data_dir is None:
        database = default_database()
    if database is not None:
        if not is_database_url(database):
            raise StoreError(f"not a PostgreSQL URL: {database!r} (expected postgresql://user@host:port/db)")
        from engine.store.postgres import PostgresStore

        owner: Owner = _Scratch() if data_dir is None else _lock(Path(data_dir))
        folder = owner.path if isinstance(owner, _Scratch) else Path(data_dir or "")
        try:
            store: Storage = PostgresStore(database)
        except BaseException:
            owner.release()
            raise
        # This engine's vector index starts empty and is filled from the database (its sync state is this
        # process's own: engine/store/postgres/reads.py `VectorSync`).
        shutil.rmtree(folder / config.VECTOR_DIRNAME, ignore_errors=True)
        return owner, store, folder
    folder = Path(data_dir) if data_dir is not None else config.default_data_dir()
    owner = _lock(folder)
    try:
        store = open_record_store(folder / config.RECORDS_FILENAME)
    except BaseException as exc:
        owner.release()
        if isinstance(exc, OSError):
            raise StoreError(f"cannot open data directory {folder}: {exc}") from exc
        raise
    return owner, store, folder
