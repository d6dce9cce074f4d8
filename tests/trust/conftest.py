"""A small seeded store shared by the hostile-input tables, and a snapshot of everything it holds."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import MemoryEngine
from engine.embedding import SentenceTransformerEmbedder

SEED = [
    {"content": "Rack 7 overheated during the night shift.", "entity_id": "rack-7", "importance": 0.7},
    {"content": "The cooling fan of rack 7 was replaced.", "entity_id": "rack-7"},
    {"content": "Cloudvault signed the storage contract.", "entity_id": "cloudvault", "context": {"deal": 12}},
]


def seed(engine: MemoryEngine) -> list[str]:
    ids = [m.id for m in engine.remember_many(SEED)]
    engine.add_edge(ids[1], ids[0], "caused_by", 0.9)
    return ids


def snapshot(engine: MemoryEngine) -> dict[str, Any]:
    """Everything a hostile call could have changed in the record store: every memory (revisions too, access
    counts included) and every edge. (Chroma's count is compared once per table: opening it per case is slow.)
    Decay scores are left out: they follow the clock, not the store."""
    page = engine.list_page(limit=1000, include_revisions=True)
    edges = sorted((e.source, e.target, e.type.value) for m in page.memories for e in engine.edges_of(m.id))
    memories = [{k: v for k, v in m.to_dict().items() if k != "decay_score"} for m in page.memories]
    return {"memories": memories, "total": page.total, "edges": edges}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder) -> Iterator[
    tuple[Path, list[str]]
]:
    """A data dir holding SEED (closed again: each test opens its own engine or runs the CLI on it)."""
    data_dir = tmp_path_factory.mktemp("trust") / "data"
    with MemoryEngine(data_dir, embedder=embedder) as engine:
        ids = seed(engine)
    yield data_dir, ids


@pytest.fixture
def unchanged(seeded: tuple[Path, list[str]], embedder: SentenceTransformerEmbedder) -> Iterator[
    Callable[[], None]
]:
    """Call the returned check after a hostile request: the store must equal its state before it."""
    data_dir, _ = seeded

    def state() -> dict[str, Any]:
        with MemoryEngine(data_dir, embedder=embedder) as engine:
            return snapshot(engine)

    before = state()

    def check() -> None:
        assert state() == before, "a rejected request changed the store"

    yield check
