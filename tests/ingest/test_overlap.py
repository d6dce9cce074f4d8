"""Running the models side by side (`config.OVERLAP_MODELS`) must store exactly what one step after another
stores: memories, vectors, structures (episodes), edges and entities, for an ingest of several batches and
for a batched remember. Real spaCy, the real embedder, real Chroma."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine import MemoryEngine, config
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.ingest import pipeline
from engine.ingest.analysis import OfflineExtractor
from engine.store.entities import EntityRegistry
from engine.store.records import RecordStore

SAMPLE_LEGAL = Path(__file__).resolve().parents[2] / "sample_data" / "legal"  # 12 documents and a chat
NOW = datetime(2026, 9, 1, tzinfo=UTC)


def _snapshot(data: Path) -> dict[str, Any]:
    """Everything a store holds, keyed by what a memory is (its ids are new in every run)."""
    store = RecordStore(data / config.RECORDS_FILENAME)
    try:
        rows = store.read("SELECT id FROM memories")
        ids = [r[0] for r in rows]
        records = {i: store.get_record(i) for i in ids}
        key = {}
        for i, rec in records.items():
            assert rec is not None
            m = rec.memory
            key[i] = json.dumps([m.kind, m.content, m.entity_id, m.created_at.isoformat(), m.importance, m.context],
                                sort_keys=True, default=str)
        vectors = store.embeddings(ids)
        memories = sorted((key[i], json.dumps(records[i].structure, sort_keys=True),  # type: ignore[union-attr]
                           vectors[i].tobytes()) for i in ids)
        edges = sorted((key[e.source], key[e.target], str(e.type), e.confidence, json.dumps(e.attrs, sort_keys=True))
                       for e in store.edges())
        entities = sorted((r.id, r.name, r.type, r.mentions, tuple(sorted(r.aliases)))
                          for r in EntityRegistry(store).load())
    finally:
        store.close()
    return {"memories": memories, "edges": edges, "entities": entities}


def _ingest(root: Path, name: str, embedder: Embedder, overlap: bool, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(config, "OVERLAP_MODELS", overlap)
    data = root / name
    with MemoryEngine(data, embedder=embedder, clock=ManualClock(NOW)) as engine:
        summary = engine.ingest([SAMPLE_LEGAL])
        assert summary.propositions_added > 100 and summary.messages_added > 5 and not summary.skipped
    return data


def test_ingest_side_by_side_stores_what_one_step_after_another_stores(
    tmp_path: Path, embedder: Embedder, nlp: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config, "INGEST_DOCUMENT_BATCH", 3)  # four batches: parsing runs ahead of drafting
    parsed_ahead: list[int] = []
    real_parse = OfflineExtractor.parse

    def counting(self: OfflineExtractor, documents: Any, budget: Any) -> Any:
        parsed_ahead.append(len(documents))
        return real_parse(self, documents, budget)

    monkeypatch.setattr(OfflineExtractor, "parse", counting)
    overlapped = _snapshot(_ingest(tmp_path, "overlapped", embedder, True, monkeypatch))
    assert parsed_ahead == [3, 3, 3, 3]  # 12 documents, each batch parsed once
    sequential = _snapshot(_ingest(tmp_path, "sequential", embedder, False, monkeypatch))
    assert len(overlapped["memories"]) > 150 and len(overlapped["edges"]) > 50 and len(overlapped["entities"]) > 5
    assert overlapped == sequential


def test_batched_remember_side_by_side_stores_what_one_step_after_another_stores(
    tmp_path: Path, embedder: Embedder, nlp: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"Dana Whitfield signed contract {i} with CloudVault because the price fell by {i} percent."
             for i in range(20)] + [f"The board met on day {i} and postponed the Atlas launch." for i in range(20)]
    stores = []
    monkeypatch.setattr(config, "DEFER_STRUCTURES", False)  # side by side applies to extraction on the write path
    for overlap in (True, False):
        monkeypatch.setattr(config, "OVERLAP_MODELS", overlap)
        data = tmp_path / f"remember-{overlap}"
        with MemoryEngine(data, embedder=embedder, clock=ManualClock(NOW)) as engine:
            engine.remember_many([{"content": t, "entity_id": "dana"} for t in texts])
        stores.append(_snapshot(data))
    assert len(stores[0]["memories"]) == len(texts)
    assert stores[0] == stores[1]
    structures = [json.loads(s) for _, s, _ in stores[0]["memories"]]
    assert all(s["graph"]["events"] for s in structures)  # spaCy's episodes really were extracted


def test_a_parse_that_fails_ahead_skips_only_its_document(
    tmp_path: Path, embedder: Embedder, nlp: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config, "OVERLAP_MODELS", True)
    real_parse = OfflineExtractor.parse

    def fragile(self: OfflineExtractor, documents: Any, budget: Any) -> Any:
        if any("BOOM" in b.text for d in documents for b in d.blocks):
            raise RuntimeError("parser exploded")
        return real_parse(self, documents, budget)

    monkeypatch.setattr(OfflineExtractor, "parse", fragile)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe vendor renewed the contract.\n")
    (docs / "b.md").write_text("# B\n\nBOOM went the parser.\n")
    with MemoryEngine(tmp_path / "data", embedder=embedder, clock=ManualClock(NOW)) as engine:
        summary = engine.ingest([docs])
        assert summary.documents_indexed == 1
        assert [(s.path, s.reason) for s in summary.skipped] == [
            ("docs/b.md", "could not be analysed (parser exploded)")]
        assert {m.context.get("source") for m in engine.list_memories(limit=100)} == {"docs/a.md"}
    shutil.rmtree(tmp_path / "data")


def test_reconcile_plans_again_only_documents_whose_names_resolve_differently(
    tmp_path: Path, embedder: Embedder, nlp: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A completed run re-plans a document only when one of its names resolves differently at the end; the
    store equals the one from re-planning every document (what reconcile did before)."""
    monkeypatch.setattr(config, "INGEST_DOCUMENT_BATCH", 3)  # four batches: later ones change earlier decisions
    real_plan = pipeline._plan
    planned: list[str] = []

    def counting(doc: Any, *args: Any) -> Any:
        planned.append(doc.source)
        return real_plan(doc, *args)

    monkeypatch.setattr(pipeline, "_plan", counting)
    skipping = _snapshot(_ingest(tmp_path, "skipping", embedder, False, monkeypatch))
    skipping_plans = len(planned)
    planned.clear()
    monkeypatch.setattr(pipeline, "_resolved_names", lambda *args: None)  # every document planned again
    every = _snapshot(_ingest(tmp_path, "every", embedder, False, monkeypatch))
    assert len(planned) == 24  # 12 documents, each planned when written and again at the end
    assert 12 <= skipping_plans < 24
    assert skipping == every
