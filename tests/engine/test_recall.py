"""Each recall strategy, fusion, weights, reinforcement and request validation, on the real engine."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from engine import Memory, MemoryEngine, NewMemory
from engine.clock import ManualClock
from engine.errors import (
    InvalidEdgeError,
    InvalidRecallError,
    InvalidTimeRangeError,
    InvalidWeightsError,
    MemoryNotFoundError,
)
from engine.index.vector import HNSW_EF_CONSTRUCTION, VECTOR_COLLECTION
from engine.recall import calibration, scoring
from engine.recall.strategies import pool_parts


@pytest.fixture
def story(engine: MemoryEngine, clock: ManualClock) -> dict[str, Memory]:
    """A small legal story over four weeks, with a cause chain, plus unrelated memories."""
    m: dict[str, Memory] = {}
    m["signed"] = engine.remember(
        "Meridian signed a data processing agreement with CloudVault.", entity_id="meridian", importance=0.6
    )
    clock.advance(days=7)
    m["changed"] = engine.remember(
        "CloudVault switched its backup subprocessor without telling Meridian.",
        entity_id="meridian",
        edges=[(m["signed"].id, "followed_by")],
    )
    clock.advance(days=7)
    m["violation"] = engine.remember(
        "The agreement was violated because of the unannounced subprocessor change.",
        entity_id="meridian",
        edges=[(m["changed"].id, "caused_by", 0.9)],
    )
    clock.advance(days=7)
    m["escalated"] = engine.remember(
        "Meridian escalated the risk to the board due to the violation.",
        entity_id="meridian",
        importance=0.9,
        edges=[(m["violation"].id, "caused_by", 0.95)],
    )
    m["pasta"] = engine.remember("The best carbonara uses guanciale and pecorino.", entity_id="recipes")
    m["atlas"] = engine.remember(
        "The Atlas app launch failed because QA testing was skipped to hit the date.", entity_id="atlas"
    )
    m["bistro"] = engine.remember(
        "Bistro Lumen opened two weeks early and its kitchen collapsed because staff training was cut.",
        entity_id="bistro",
    )
    clock.advance(days=1)
    return m


def ids_of(results: list) -> list[str]:
    return [r.memory.id for r in results]


def test_similarity_ranks_by_meaning_and_reports_distance(engine: MemoryEngine, story: dict) -> None:
    results = engine.recall("pasta recipe with cheese", strategies=["similarity"], top_k=3)
    top = results[0]
    assert top.memory.id == story["pasta"].id
    detail = top.strategy_details[0]
    assert detail.strategy == "similarity"
    assert detail.relevance == pytest.approx(1 - detail.fields["distance"])
    assert top.signals.relevance == pytest.approx(detail.relevance)


def test_ef_search_is_validated_and_passed_to_the_index(engine: MemoryEngine, story: dict, monkeypatch) -> None:
    seen: list[tuple[int, int]] = []
    from engine.index.vector import VectorIndex

    original = VectorIndex.query

    def spy(self, embedding, k, ef_search=50):  # type: ignore[no-untyped-def]
        seen.append((k, ef_search))
        return original(self, embedding, k, ef_search)

    monkeypatch.setattr(VectorIndex, "query", spy)
    assert engine.recall("contract", strategies=["similarity"], top_k=3, ef_search=400)
    assert seen[-1][1] == 400
    with pytest.raises(InvalidRecallError, match="ef_search"):
        engine.recall("contract", ef_search=0)


@pytest.mark.slow
def test_chroma_search_breadth_follows_ef_search(tmp_path: Path) -> None:
    """hnswlib searches with max(ef, k); the index asks Chroma for max(k, ef_search) neighbours."""
    import numpy as np

    from engine.index.vector import VectorIndex

    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((3000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"v{i}" for i in range(len(vectors))]
    index = VectorIndex.open_embedded(tmp_path / "chroma")
    index.upsert(ids, vectors)
    try:
        cues = rng.standard_normal((20, 384)).astype(np.float32)
        truth = np.argsort(-(cues @ vectors.T), axis=1)[:, :10]

        def recall_at(ef: int) -> float:
            hits = [{int(n.id[1:]) for n in index.query(c, 10, ef)} for c in cues]
            return float(np.mean([len(h & set(t)) / 10 for h, t in zip(hits, truth, strict=True)]))

        assert recall_at(500) >= recall_at(10)
        assert recall_at(500) >= 0.95
    finally:
        index.delete(ids)


def test_a_new_collection_is_built_with_the_configured_effort_and_an_old_one_keeps_its_own(tmp_path: Path) -> None:
    """HNSW_EF_CONSTRUCTION reaches Chroma for new collections; one made with another value (a store
    from before) still opens, keeps its value and its vectors."""
    import chromadb
    import numpy as np

    from engine.index.vector import VectorIndex

    fresh = VectorIndex.open_embedded(tmp_path / "fresh")
    assert fresh._collection.configuration["hnsw"]["ef_construction"] == HNSW_EF_CONSTRUCTION

    old_path = tmp_path / "old"
    client = chromadb.PersistentClient(path=str(old_path), settings=chromadb.Settings(anonymized_telemetry=False))
    other = HNSW_EF_CONSTRUCTION + 36
    old = client.get_or_create_collection(
        VECTOR_COLLECTION,
        configuration={"hnsw": {"space": "cosine", "ef_search": 1, "ef_construction": other}},
        embedding_function=None,
    )
    old.upsert(ids=["a", "b"], embeddings=np.eye(2, 384, dtype=np.float32))
    reopened = VectorIndex.open_embedded(old_path)
    assert reopened._collection.configuration["hnsw"]["ef_construction"] == other
    assert [n.id for n in reopened.query(np.eye(1, 384, dtype=np.float32)[0], 1)] == ["a"]


def test_temporal_reads_the_timeline_in_order_with_ranges(engine: MemoryEngine, story: dict) -> None:
    chain = [story[k].id for k in ("signed", "changed", "violation", "escalated")]
    results = engine.recall(strategies=["temporal"], entity_id="meridian")
    assert ids_of(results) == chain
    newest = results[-1].strategy_details[0]
    assert newest.fields["rank"] == 0 and newest.fields["timestamp"].endswith("Z")
    # Unbounded and cut: the newest top_k, still told in order.
    assert ids_of(engine.recall(strategies=["temporal"], entity_id="meridian", top_k=2)) == chain[2:]
    start = story["changed"].created_at
    ranged = engine.recall(strategies=["temporal"], entity_id="meridian", time_range=(start, start + timedelta(days=8)))
    assert ids_of(ranged) == chain[1:3]
    assert engine.recall(strategies=["temporal"], entity_id="nobody") == []


def test_temporal_needs_an_entity(engine: MemoryEngine) -> None:
    with pytest.raises(InvalidRecallError, match="entity_id"):
        engine.recall("anything", strategies=["temporal"])
    with pytest.raises(InvalidTimeRangeError):
        engine.recall(strategies=["temporal"], entity_id="meridian", time_range="March")


def test_causal_walks_stored_edges_by_depth(engine: MemoryEngine, story: dict) -> None:
    results = engine.recall(strategies=["causal"], seed_memory_id=story["escalated"].id, top_k=10)
    got = {r.memory.id: r.strategy_details[0].fields for r in results}
    assert got[story["escalated"].id]["depth"] == 0
    violation = got[story["violation"].id]
    assert violation["depth"] == 1 and violation["edge_type"] == "caused_by"
    changed = got[story["changed"].id]
    assert changed["depth"] == 2
    assert changed["path"] == [story["escalated"].id, story["violation"].id, story["changed"].id]
    assert changed["seed_id"] == story["escalated"].id
    assert got[story["signed"].id]["edge_type"] == "followed_by"
    assert story["pasta"].id not in got  # not connected
    depths = [r.strategy_details[0].fields["depth"] for r in results]
    relevances = [r.signals.relevance for r in results]
    assert sorted(relevances, reverse=True) == [relevances[depths.index(d)] for d in sorted(depths)]


def test_causal_respects_depth_and_edge_types(engine: MemoryEngine, story: dict) -> None:
    seed = story["escalated"].id
    shallow = engine.recall(strategies=["causal"], seed_memory_id=seed, max_depth=1)
    assert set(ids_of(shallow)) == {seed, story["violation"].id}
    only_causes = engine.recall(strategies=["causal"], seed_memory_id=seed, edge_types=["caused_by"])
    assert story["signed"].id not in ids_of(only_causes)
    assert story["changed"].id in ids_of(only_causes)


def test_causal_without_seed_starts_from_the_nearest_memory(engine: MemoryEngine, story: dict) -> None:
    results = engine.recall("the board escalation of the risk", strategies=["causal"], max_depth=1)
    seeds = {r.strategy_details[0].fields["seed_id"] for r in results}
    assert seeds == {story["escalated"].id}


@pytest.mark.parametrize("depth", [0, -1, 11])
def test_causal_depth_bounds(engine: MemoryEngine, story: dict, depth: int) -> None:
    with pytest.raises(InvalidRecallError, match="max_depth"):
        engine.recall(strategies=["causal"], seed_memory_id=story["escalated"].id, max_depth=depth)


def test_causal_unknown_seed_is_an_error(engine: MemoryEngine, story: dict) -> None:
    with pytest.raises(MemoryNotFoundError):
        engine.recall(strategies=["causal"], seed_memory_id="01ARZ3NDEKTSV4RRFFQ69G5FAV")


def test_analogical_matches_structure_across_domains(engine: MemoryEngine, story: dict) -> None:
    cue = "A rushed product launch failed because testing was skipped."
    structural = engine.recall(cue, strategies=["analogical"], analogical_alpha=0.0, top_k=3)
    assert {story["atlas"].id, story["bistro"].id} <= set(ids_of(structural[:2]))
    bistro = next(r for r in structural if r.memory.id == story["bistro"].id).strategy_details[0]
    assert bistro.fields["structural_similarity"] > 0.5
    assert "chain:omit>causes>fail" in bistro.fields["shared_structure"]
    assert bistro.fields["mapping"]["relations"][0]["kind"] == "causes"
    # alpha 0.5: both parts in standard deviations over the candidate pool (here every memory, all returned),
    # mixed, the best mix 1
    mixed = engine.recall(cue, strategies=["analogical"], analogical_alpha=0.5, top_k=50)
    fields = {r.memory.id: r.strategy_details[0].fields for r in mixed}
    surface, structure = pool_parts({i: f["embedding_similarity"] for i, f in fields.items()},
                                    {i: f["structural_similarity"] for i, f in fields.items()}, 0.5)
    assert len(mixed) > 3 and mixed[0].signals.relevance == pytest.approx(1.0)
    for r in mixed:
        assert r.signals.relevance == pytest.approx(0.5 * surface[r.memory.id] + 0.5 * structure[r.memory.id])
        assert fields[r.memory.id]["structural_part"] == pytest.approx(structure[r.memory.id])


def test_alpha_must_be_in_unit_interval(engine: MemoryEngine) -> None:
    with pytest.raises(InvalidRecallError, match="alpha"):
        engine.recall("x", strategies=["analogical"], analogical_alpha=1.5)


def test_multi_strategy_deduplicates_and_keeps_every_detail(engine: MemoryEngine, story: dict) -> None:
    results = engine.recall(
        "board escalation of the agreement violation",
        strategies=["similarity", "temporal", "causal", "analogical"],
        entity_id="meridian",
        seed_memory_id=story["escalated"].id,
        top_k=20,
    )
    assert len(ids_of(results)) == len(set(ids_of(results)))
    esc = next(r for r in results if r.memory.id == story["escalated"].id)
    assert {d.strategy for d in esc.strategy_details} == {"similarity", "temporal", "causal", "analogical"}
    # Fusion adds evidence: relevance is the calibration of the fused score's z over the pool, which every
    # detail reports with the fused score itself.
    fused = {(d.fields["fused"], d.fields["fused_z"]) for d in esc.strategy_details}
    assert len(fused) == 1
    assert esc.signals.relevance == pytest.approx(float(calibration.from_z(fused.pop()[1])), abs=1e-3)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)


def test_unknown_strategy_and_missing_cue_are_errors(engine: MemoryEngine) -> None:
    with pytest.raises(InvalidRecallError, match="unknown strategy"):
        engine.recall("x", strategies=["telepathy"])
    with pytest.raises(InvalidRecallError, match="cue"):
        engine.recall("  ")
    with pytest.raises(InvalidEdgeError, match="unknown edge type"):
        engine.recall("x", strategies=["causal"], edge_types=["because"])


def test_scores_follow_the_formula_and_weights_override(engine: MemoryEngine, story: dict, clock: ManualClock) -> None:
    results = engine.recall(strategies=["temporal"], entity_id="meridian")
    now = clock.now()
    for r in results:
        age = (now - r.memory.created_at).total_seconds()
        expected_recency = max(0.0, 1 - age / (30 * 86400))
        assert r.signals.recency == pytest.approx(expected_recency)
        assert r.score == pytest.approx(0.5 * 1.0 + 0.2 * expected_recency + 0.2 * r.memory.importance)
    only_importance = engine.recall(
        "agreement",
        top_k=7,
        scoring_weights={"w_relevance": 0, "w_recency": 0, "w_importance": 1, "w_reinforcement": 0},
    )
    assert only_importance[0].memory.id == story["escalated"].id
    assert only_importance[0].score == pytest.approx(0.9)
    with pytest.raises(InvalidWeightsError):
        engine.recall("agreement", scoring_weights={"w_relevance": -1})


def test_every_recall_reinforces_what_it_returns(engine: MemoryEngine, story: dict, clock: ManualClock) -> None:
    first = engine.recall("carbonara", top_k=1)
    assert first[0].memory.access_count == 1 and first[0].signals.reinforcement == 0.0
    clock.advance(minutes=5)
    second = engine.recall("carbonara", top_k=1)
    assert second[0].signals.reinforcement == pytest.approx(scoring.reinforcement(1))
    stored = engine.get(story["pasta"].id)
    assert stored.access_count == 2 and stored.last_accessed_at == clock.now()


def test_rescoring_does_not_count_as_a_recall(engine: MemoryEngine, story: dict) -> None:
    results = engine.recall("agreement", top_k=5)
    before = {r.memory.id: engine.get(r.memory.id).access_count for r in results}
    reranked = MemoryEngine.rescore(results, "0:1:0:0")
    assert [r.signals for r in sorted(reranked, key=lambda r: r.memory.id)] == [
        r.signals for r in sorted(results, key=lambda r: r.memory.id)
    ]
    assert {r.memory.id: engine.get(r.memory.id).access_count for r in results} == before
    recency = [r.signals.recency for r in reranked]
    assert recency == sorted(recency, reverse=True)


def test_retrieve_does_not_count(engine: MemoryEngine, story: dict) -> None:
    from engine import build_request

    engine.retrieve(build_request("agreement", top_k=5))
    assert all(engine.get(m.id).access_count == 0 for m in story.values())


def test_top_k_cuts_and_bounds(engine: MemoryEngine, story: dict) -> None:
    assert len(engine.recall("anything at all", top_k=2)) == 2
    with pytest.raises(InvalidRecallError, match="top_k"):
        engine.recall("x", top_k=0)


@pytest.mark.slow
def test_batched_recall_corpus_scales(engine: MemoryEngine) -> None:
    engine.remember_many(
        [
            NewMemory(f"Ticket {i}: the printer on floor {i % 7} jammed again.", entity_id=f"floor-{i % 7}")
            for i in range(300)
        ]
    )
    results = engine.recall("printer jammed on floor 3", top_k=10, ef_search=200)
    assert len(results) == 10
    assert engine.stats()["memories"] == 300


def test_temporal_cut_keeps_what_scores_best_and_reads_in_order(engine: MemoryEngine, clock: ManualClock) -> None:
    key = engine.remember("Contract signed.", entity_id="deal", importance=1.0)
    clock.advance(days=1)
    chatter = []
    for i in range(5):
        clock.advance(minutes=1)
        chatter.append(engine.remember(f"Routine sync number {i}.", entity_id="deal", importance=0.1))
    # Equal importance: the newest win (the contract's "newest first"); a weightier old memory still makes the cut.
    cut = engine.recall(strategies=["temporal"], entity_id="deal", top_k=3)
    assert ids_of(cut) == [key.id, chatter[3].id, chatter[4].id]
    newest_only = engine.recall(strategies=["temporal"], entity_id="deal", top_k=3, scoring_weights="0:1:0:0")
    assert ids_of(newest_only) == [m.id for m in chatter[2:]]


def test_temporal_relevance_is_cue_similarity_in_a_mixed_recall(engine: MemoryEngine, story: dict) -> None:
    mixed = engine.recall(
        "subprocessor change without notice", strategies=["similarity", "temporal"], entity_id="meridian", top_k=10
    )
    for r in mixed:
        temporal = [d for d in r.strategy_details if d.strategy == "temporal"]
        similar = [d for d in r.strategy_details if d.strategy == "similarity"]
        if temporal and similar:
            assert temporal[0].relevance == pytest.approx(similar[0].relevance, abs=1e-4)
        if temporal:
            assert temporal[0].relevance < 1.0
    most_relevant = max(mixed, key=lambda r: r.signals.relevance)
    assert most_relevant.memory.id in {story["changed"].id, story["violation"].id}
