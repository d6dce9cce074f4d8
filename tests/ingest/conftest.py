"""Fixtures for ingestion tests: spaCy loaded once per session, small corpora written to temp folders,
and the sample corpus indexed once (real spaCy, real model, real Chroma)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine import MemoryEngine
from engine.clock import ManualClock
from engine.embedding import SentenceTransformerEmbedder
from engine.ingest.summary import IngestSummary

AFTER_THE_CORPUS = datetime(2026, 9, 1, tzinfo=UTC)

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DATA = REPO / "sample_data"


@pytest.fixture(scope="session")
def nlp():  # type: ignore[no-untyped-def]
    from engine.ingest.nlp import load

    return load()


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str | bytes], Path]:
    """Write a file under `tmp_path/docs` and return its path."""
    root = tmp_path / "docs"

    def _write(name: str, content: str | bytes) -> Path:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write


@pytest.fixture
def indexer(engine: MemoryEngine, nlp: object) -> Callable[..., IngestSummary]:
    """`engine.index` with spaCy already loaded (so tests do not pay for it one by one)."""
    return engine.index


@pytest.fixture(scope="session")
def sample_engine(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder, nlp: object
) -> Iterator[tuple[MemoryEngine, IngestSummary]]:
    """The sample corpus, indexed once for the whole session."""
    data = tmp_path_factory.mktemp("sample-index")
    # Read the corpus as a user would: after its events (January to July 2026).
    with MemoryEngine(data, embedder=embedder, clock=ManualClock(AFTER_THE_CORPUS)) as eng:
        yield eng, eng.ingest([SAMPLE_DATA])
