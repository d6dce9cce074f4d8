"""Shared fixtures: the real engine (real Chroma, real model) in a temp dir, with a manual clock.

The embedding model is loaded once per test session and shared by every engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine import MemoryEngine
from engine.clock import ManualClock
from engine.embedding import Embedder, create_embedder

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
