"""Speed changes that must not change what is stored: each is compared with the slower way it replaced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import MemoryEngine, config
from engine.analogy import roles
from engine.analogy.text import EpisodeExtractor
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.ingest.documents import SourceDocument, discover, read_document
from engine.store.records import RecordStore

REPO = Path(__file__).resolve().parents[2]


def _sample_sentences(limit: int = 150) -> list[str]:
    files, _, _ = discover([REPO / "sample_data"])
    docs = [d for d in (read_document(p, name) for p, name in files) if isinstance(d, SourceDocument)]
    return [b.text for d in docs for b in d.blocks][:limit]


class _EveryCue(dict[str, list[tuple[tuple[str, ...], str]]]):
    """The old clause-cue search: every cue compared at every token, whatever its first word."""

    def get(self, key: str, default: Any = None) -> list[tuple[tuple[str, ...], str]]:  # noqa: ARG002
        return list(roles._CLAUSE_CUES)


def test_clause_cues_indexed_by_first_word_give_the_same_structures(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _sample_sentences()
    extractor = EpisodeExtractor()
    fast = extractor.extract(texts)
    monkeypatch.setattr(roles, "_CUES_BY_FIRST", _EveryCue())
    slow = extractor.extract(texts)
    assert fast == slow
    # the corpus exercises the cues: some structures relate clauses through them
    assert sum(len(s["graph"].get("relations", [])) for s in fast) > 5


def _stored(data: Path, embedder: Embedder, texts: list[str]) -> list[tuple[str, Any, np.ndarray]]:
    with MemoryEngine(data, embedder=embedder, clock=ManualClock()) as engine:
        ids = [m.id for m in engine.remember_many([{"content": t} for t in texts])]
    store = RecordStore(data / "records.sqlite3")  # the stored truth, read back
    try:
        memories, vectors, structures = store.get_many(ids), store.embeddings(ids), store.structures_of(ids)
    finally:
        store.close()
    return [(memories[i].content, structures[i], vectors[i]) for i in ids]


def test_batched_remember_stores_the_same_with_the_models_overlapped(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _sample_sentences(24)
    assert len(texts) >= config.OVERLAP_MIN_TEXTS
    overlapped = _stored(tmp_path / "a", embedder, texts)
    monkeypatch.setattr(config, "OVERLAP_MIN_TEXTS", 10**9)  # one model after the other, as before
    sequential = _stored(tmp_path / "b", embedder, texts)
    for (c1, s1, e1), (c2, s2, e2) in zip(overlapped, sequential, strict=True):
        assert c1 == c2 and s1 == s2
        np.testing.assert_allclose(e1, e2, atol=1e-6)
