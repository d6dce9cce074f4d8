"""Shared fixtures: the real engine (real Chroma, real model) in a temp dir, with a manual clock.

The embedding model is loaded once per test session and shared by every engine. A real PostgreSQL server
(`postgres`) is started on loopback the first time a test asks for one, once per session, and stopped at the
end; each test that uses it gets a database of its own (`database_url`). `store` runs a test on both record
stores: SQLite in a temp dir and PostgreSQL.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine import MemoryEngine
from engine.clock import ManualClock
from engine.embedding import Embedder, create_embedder
from engine.store.postgres.local_server import LocalServer

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    model = create_embedder()  # the configured default backend (onnx unless HEBBS_EMBEDDING_BACKEND says)
    model.encode(["warm up"])  # load once, here, not inside the first test
    return model


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def engine(data_dir: Path, embedder: Embedder, clock: ManualClock) -> Iterator[MemoryEngine]:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as eng:
        yield eng


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalServer]:
    """One real PostgreSQL server on loopback for the session, in a temp folder, removed at the end."""
    server = LocalServer().start()
    try:
        yield server
    finally:
        server.remove()


_DATABASES = itertools.count()


@pytest.fixture
def database_url(postgres: LocalServer) -> Iterator[str]:
    """A fresh, empty database on the session's server (dropped after the test)."""
    import psycopg

    name = f"test_{next(_DATABASES)}"
    admin = postgres.url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield postgres.url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """Where an engine keeps its records, as `MemoryEngine` keyword arguments: a SQLite data dir, or a
    database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        return {"data_dir": tmp_path / "store"}
    return {"database": request.getfixturevalue("database_url")}


@pytest.fixture
def engine_on_each_store(store: dict[str, Any], embedder: Embedder, clock: ManualClock) -> Iterator[MemoryEngine]:
    """`engine`, on SQLite and on PostgreSQL (a test that takes it runs once on each)."""
    with MemoryEngine(**store, embedder=embedder, clock=clock) as eng:
        yield eng
