"""Which record store an engine opens: SQLite files in a data dir (the default), or a PostgreSQL database
(`database=` / `HEBBS_DATABASE_URL`) that several engines and servers share.

A SQLite data dir has one owner (engine/lock.py). A PostgreSQL store has none: any number of engines write
to it at once. Each of them keeps its derived indexes, the vector index included, to itself, rebuilt from
the database when it opens, in its own folder: `data_dir` if given (one engine at a time), else a private
temporary folder removed on close.

Each tenant (engine/tenancy.py) has a store of its own: the tenant `default` is the data dir (or the database's
`public` schema) as it was before tenants, so existing stores open unchanged; tenant T is the data dir
`<data dir>/tenants/T` (or the schema `tenant_T`, its derived indexes under `<data dir>/tenants/T` or a
temporary folder).
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
from engine.tenancy import DEFAULT_TENANT, is_tenant_name, tenant_name

DATABASE_ENV = "HEBBS_DATABASE_URL"
TENANTS_DIRNAME = "tenants"


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


def tenant_folder(data_dir: Path, tenant: str) -> Path:
    """Where a tenant's files live under a data dir: the data dir itself for `default`."""
    return data_dir if tenant == DEFAULT_TENANT else data_dir / TENANTS_DIRNAME / tenant_name(tenant)


def tenant_schema(tenant: str) -> str | None:
    """The PostgreSQL schema of a tenant's tables: None (the database's own, `public`) for `default`."""
    return None if tenant == DEFAULT_TENANT else f"tenant_{tenant_name(tenant)}"


def known_tenants(data_dir: str | Path | None, database: str | None) -> list[str]:
    """The tenants that have a store: `default` first, then the others by name."""
    found: set[str] = set()
    if database is not None:
        from engine.store.postgres.connection import tenant_schemas

        found = {name.removeprefix("tenant_") for name in tenant_schemas(database)}
    else:
        folder = (Path(data_dir) if data_dir is not None else config.default_data_dir()) / TENANTS_DIRNAME
        if folder.is_dir():
            found = {p.name for p in folder.iterdir() if (p / config.RECORDS_FILENAME).exists()}
    return [DEFAULT_TENANT, *sorted(name for name in found - {DEFAULT_TENANT} if is_tenant_name(name))]


def open_storage(data_dir: str | Path | None, database: str | None, tenant: str = DEFAULT_TENANT
                 ) -> tuple[Owner, Storage, Path]:
    """(what the engine holds until closed, the tenant's record store, the folder of its derived indexes).
    Without a `data_dir` or `database`, `HEBBS_DATABASE_URL` if set, else the default data dir."""
    tenant = tenant_name(tenant)
    if database is None and data_dir is None:
        database = default_database()
    if database is not None:
        if not is_database_url(database):
            raise StoreError(f"not a PostgreSQL URL: {database!r} (expected postgresql://user@host:port/db)")
        from engine.store.postgres import PostgresStore

        owner: Owner = _Scratch() if data_dir is None else _lock(tenant_folder(Path(data_dir), tenant))
        folder = owner.path if isinstance(owner, _Scratch) else tenant_folder(Path(data_dir or ""), tenant)
        try:
            store: Storage = PostgresStore(database, schema=tenant_schema(tenant))
        except BaseException:
            owner.release()
            raise
        # This engine's vector index starts empty and is filled from the database (its sync state is this
        # process's own: engine/store/postgres/reads.py `VectorSync`).
        shutil.rmtree(folder / config.VECTOR_DIRNAME, ignore_errors=True)
        return owner, store, folder
    folder = tenant_folder(Path(data_dir) if data_dir is not None else config.default_data_dir(), tenant)
    owner = _lock(folder)
    try:
        store = open_record_store(folder / config.RECORDS_FILENAME)
    except BaseException as exc:
        owner.release()
        if isinstance(exc, OSError):
            raise StoreError(f"cannot open data directory {folder}: {exc}") from exc
        raise
    return owner, store, folder
