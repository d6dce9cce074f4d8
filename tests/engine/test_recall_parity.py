"""Recall's fast paths give the same results as the plain reads they replace, on a real store.

Each speed-up of recall (one read per candidate pool instead of several, the in-memory candidate table
with its exact search, ...) is checked here against a plain, obviously correct version of the same read:
the recall is run with both, for presets and strategy mixes, and the ranked ids, scores and details must
agree, also after writes by this engine and by another engine instance on the same data dir. The store
holds real conversations (the sample chats, through the conversation ingest path) plus memories in no
episode, a forgotten message and a revision, so windows, episodes, exclusions and deletions are all
exercised.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import MemoryEngine, config
from engine.analogy.text import StoredEpisode, episode
from engine.api.requests import build_request
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.index.candidates import CandidateTable
from engine.index.derived import DerivedIndexes
from engine.index.vector import VectorIndex
from engine.models import RecallResult, Strategy, StrategyDetail, iso, iso_micros
from engine.recall import fusion, ranking, scoring, strategies
from engine.recall import lexical as lexical_module
from engine.recall import recaller as recaller_module
from engine.recall.lexical_query import terms
from engine.recall.presets import RECOMMENDED
from engine.store import windows
from engine.store.records import RecordStore
from engine.store.rows import NO_EPISODE, FusionRow, ScoreInputs, from_micros
from engine.store.sqlite import fulltext
from tests.conftest import START
from tests.engine.concurrency import failures_beside
from tests.engine.test_fusion_arrays import reference_frame, reference_fuse

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
CHATS = sorted(SAMPLE.rglob("*.json"))

CUES = [
    "what did the webhook incident break",
    "pricing discount for the annual contract",
    "who approved the launch date",
    "legal review of the contract terms",
]


def _plain_rows(store: RecordStore, ids: Sequence[str], with_embeddings: bool) -> dict[str, FusionRow]:
    """`fusion_rows` from whole memories: the context parsed in Python, the embedding read on its own."""
    memories = store.get_many(ids)
    vectors = store.embeddings(list(memories)) if with_embeddings else {}
    out: dict[str, FusionRow] = {}
    for memory_id, memory in memories.items():
        values = [memory.context.get(k) for k in config.EPISODE_KEYS]
        key = NO_EPISODE if all(v is None for v in values) else json.dumps(values, sort_keys=True)
        out[memory_id] = FusionRow(key, vectors.get(memory_id), memory.entity_id)
    return out


@pytest.fixture(scope="module")
def store_template(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """The store, written once for the module and closed: each test opens its own copy of it."""
    path = tmp_path_factory.mktemp("parity") / "data"
    assert CHATS, "the sample chats are missing"
    with MemoryEngine(path, embedder=embedder, clock=ManualClock(START)) as engine:
        summary = engine.ingest(CHATS)
        assert not summary.skipped
        messages = engine.list_memories(kind="episode", limit=10_000)
        engine.remember_many(
            [
                {"content": "The webhook retry queue was drained by hand after the incident"},
                {"content": "Annual contracts get a pricing discount", "context": {"team": {"name": "sales"}}},
            ]
        )
        engine.forget(memory_ids=[messages[len(messages) // 2].id])
        engine.revise(messages[3].id, content=messages[3].content + " (confirmed later)")
    return path


@pytest.fixture
def store_engine(
    store_template: Path, data_dir: Path, embedder: Embedder, clock: ManualClock
) -> Iterator[MemoryEngine]:
    shutil.copytree(store_template, data_dir)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        yield engine


def _requests(engine: MemoryEngine, cue: str) -> list[dict[str, object]]:
    speaker = next(m.entity_id for m in engine.list_memories(kind="episode", limit=50) if m.entity_id)
    return [
        {"preset": "recommended"},
        {"preset": "similarity"},
        {"preset": "lexical"},
        {"strategies": ["similarity", "lexical"]},
        {"strategies": ["similarity", "temporal", "causal", "analogical"], "entity_id": speaker},
    ]


Flat = list[tuple[str, float, list[dict[str, object]]]]


def _flat(results: Sequence[RecallResult]) -> Flat:
    return [(r.memory.id, r.score, [d.to_dict() for d in r.strategy_details]) for r in results]


def _same(a: Flat, b: Flat) -> None:
    assert [x[0] for x in a] == [x[0] for x in b]
    assert np.allclose([x[1] for x in a], [x[1] for x in b], rtol=0, atol=1e-6)
    for (_, _, da), (_, _, db) in zip(a, b, strict=True):
        assert [d["strategy"] for d in da] == [d["strategy"] for d in db]


def _all_recalls(engine: MemoryEngine) -> dict[tuple[str, int], Flat]:
    return {(cue, i): _flat(engine.retrieve(build_request(cue, top_k=10, **params)))
            for cue in CUES for i, params in enumerate(_requests(engine, cue))}


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recall without the candidate table (Chroma for every approximate search, the stored embeddings for an
    exact one), BM25 in SQL instead of from posting lists in memory, and `fusion_rows` from whole memories."""
    monkeypatch.setattr(DerivedIndexes, "candidates", lambda self: None)
    monkeypatch.setattr(DerivedIndexes, "lexical_postings", lambda self: None)
    monkeypatch.setattr(RecordStore, "fusion_rows", _plain_rows)
    monkeypatch.setattr(ranking, "contender_positions", lambda relevance, inputs, *args: list(range(len(inputs.ids))))


def _assert_same_as_plain(engine: MemoryEngine, fast: dict[tuple[str, int], Flat]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        _plain(patch)
        plain = _all_recalls(engine)
    for key, results in fast.items():
        _same(results, plain[key])


def test_fused_recall_with_one_read_per_pool_matches_the_plain_reads(store_engine: MemoryEngine) -> None:
    engine = store_engine
    fast = _all_recalls(engine)
    assert engine._indexes.candidates() is not None  # noqa: SLF001 - the table is what is under test
    assert all(fast.values()) and len({tuple(x[0] for x in v) for v in fast.values()}) > len(CUES)
    _assert_same_as_plain(engine, fast)


@pytest.mark.slow
def test_candidate_table_follows_own_and_other_instances_writes(
    store_engine: MemoryEngine, data_dir: Path, embedder: Embedder
) -> None:
    engine = store_engine
    indexes = engine._indexes  # noqa: SLF001 - the table's life is what is under test
    table = indexes.candidates()
    assert table is not None
    engine.recall(CUES[0], top_k=5)  # counting accesses writes, but nothing the table holds
    assert indexes.candidates() is table
    # Writes by this engine are followed by the same table (no rebuild), and the next recall sees each.
    added = engine.remember("The webhook incident broke the nightly invoice export",
                            context={"conversation": "ops", "session": 9})
    fast = _all_recalls(engine)
    assert indexes.candidates() is table
    assert added.id in {x[0] for x in fast[(CUES[0], 0)]}
    _assert_same_as_plain(engine, fast)
    more = engine.remember_many([
        {"content": "Legal signed off on the contract terms after the webhook fix", "entity_id": "legal",
         "context": {"conversation": "ops", "session": 9}},
        {"content": "The launch date was approved by the pricing committee", "context": {"document": "minutes"}},
    ])
    engine.add_edge(added.id, more[0].id, "followed_by")
    engine.add_edge(more[1].id, added.id, "caused_by")
    first = fast[(CUES[1], 0)][0][0]
    engine.revise(first, content="Annual contracts get a larger pricing discount", context={"document": "pricing"})
    fast = _all_recalls(engine)
    assert indexes.candidates() is table and table.retired >= 1
    # Forgetting erases: the table moves to a new segment without retired rows (no embedding of a forgotten
    # memory is left in its files).
    engine.forget(memory_ids=[fast[(CUES[2], 0)][0][0]])
    fast = _all_recalls(engine)
    table = indexes.candidates()
    assert table.retired == 0 and table.held == 0
    assert {added.id, more[0].id} <= set(table.followed_by([more[0].id])[added.id] | {added.id})
    _assert_same_as_plain(engine, fast)
    # Writes by another engine instance on the same data dir (another connection) between two recalls: caught
    # up from the store's change log by the same table, not rebuilt.
    gone = fast[(CUES[0], 0)][0][0]
    with MemoryEngine(data_dir, embedder=embedder) as other:
        theirs = other.remember("The webhook incident also broke the partner sync job",
                                context={"conversation": "ops", "session": 9})
        other.add_edge(added.id, theirs.id, "followed_by")
        other.forget(memory_ids=[gone])
    fast = _all_recalls(engine)
    assert indexes.candidates() is table
    ids = {x[0] for v in fast.values() for x in v}
    assert theirs.id in ids and gone not in ids
    _assert_same_as_plain(engine, fast)
    # A followed table equals one rebuilt from the store.
    followed = indexes.candidates()
    assert followed is not None
    engine.remember("One more note on the webhook incident", context={"conversation": "ops", "session": 9})
    followed = indexes.candidates()
    rebuilt = CandidateTable(*engine._store.candidate_rows())  # noqa: SLF001
    assert followed is not None and followed.seq == rebuilt.seq
    every = sorted(rebuilt.slot)
    assert sorted(followed.slot) == every
    assert followed.rows(every, True).keys() == rebuilt.rows(every, True).keys()
    for i, row in followed.rows(every, True).items():
        other_row = rebuilt.rows([i], True)[i]
        assert row.episode == other_row.episode and row.entity_id == other_row.entity_id
        assert np.array_equal(row.embedding, other_row.embedding)  # type: ignore[arg-type]
    assert followed.followed_by(every) == rebuilt.followed_by(every)
    cue = engine._writer.embed([CUES[0]])[0]  # noqa: SLF001
    assert followed.nearest(cue, 25) == rebuilt.nearest(cue, 25)
    assert followed.nearest(cue, 10_000) == rebuilt.nearest(cue, 10_000)


def test_fusion_rows_keys_name_the_same_episodes_as_the_contexts(store_engine: MemoryEngine) -> None:
    engine = store_engine
    memories = engine.list_memories(limit=10_000)
    store = engine._store  # noqa: SLF001 - the store's read is what is under test
    rows = store.fusion_rows([m.id for m in memories] + ["not-a-memory"], with_embeddings=True)
    assert set(rows) == {m.id for m in memories}
    by_key: dict[str, set[tuple[str, ...]]] = {}
    for m in memories:
        key, vector, entity = rows[m.id]
        assert entity == m.entity_id
        by_key.setdefault(key, set()).add(windows.episode_key(m.context))
        assert vector is not None and np.array_equal(vector, store.embeddings([m.id])[m.id])
        assert (key == NO_EPISODE) == all(m.context.get(k) is None for k in config.EPISODE_KEYS)
    assert all(len(keys) == 1 for keys in by_key.values())  # one fusion key <=> one episode
    assert len(by_key) > 2
    assert all(r.embedding is None for r in store.fusion_rows([m.id for m in memories], with_embeddings=False).values())


def test_ranking_reads_go_through_the_covering_index_and_match_whole_memories(store_engine: MemoryEngine) -> None:
    engine = store_engine
    store = engine._store  # noqa: SLF001 - the store's reads are what is under test
    plan = store.read(f"EXPLAIN QUERY PLAN SELECT id, importance FROM memories {store._scores} WHERE id IN (?, ?)",
                      ("a", "b"))  # noqa: SLF001
    assert any("COVERING INDEX memories_scores" in str(row) for row in plan)
    memories = {m.id: m for m in engine.list_memories(limit=10_000)}
    ids = [*memories, "not-a-memory"]
    inputs = store.score_inputs(ids)
    assert sorted(inputs.ids) == sorted(memories)
    columns = zip(inputs.ids, inputs.importance.tolist(), inputs.created_us.tolist(), inputs.access_count.tolist(),
                  strict=True)
    for memory_id, importance, created_us, access_count in columns:
        m = memories[memory_id]
        assert (importance, access_count) == (m.importance, m.access_count)
        assert from_micros(created_us) == m.created_at
    assert store.created_at_of(ids) == dict(zip(inputs.ids, inputs.created_us.tolist(), strict=True))


@pytest.mark.parametrize(("k1", "b"), [(0.7, 0.0), (1.2, 0.75)])
def test_bm25_from_posting_lists_in_memory_matches_the_sql(store_engine: MemoryEngine, k1: float, b: float) -> None:
    engine = store_engine
    store = engine._store  # noqa: SLF001 - the two BM25 computations are what is under test
    postings = engine._indexes.lexical_postings()  # noqa: SLF001
    assert postings is not None
    cues = [*CUES, "webhook", "the contract", "zzzz unknownword", "launch launch date pricing"]
    for table in fulltext.TABLES:
        for cue in cues:
            words = terms(cue)
            for limit in (3, 100):
                with store._lock:  # noqa: SLF001
                    sql = fulltext.bm25(store._conn.cursor(), table, words, limit, k1, b)  # noqa: SLF001
                mine = postings.search(table, words, limit, k1, b)
                assert [i for i, _ in mine] == [i for i, _ in sql], (table, cue, limit)
                assert np.allclose([s for _, s in mine], [s for _, s in sql], rtol=1e-12, atol=0)
    # A write moves the store's version: the lists are read again and the new row is found.
    added = engine.remember("webhook webhook webhook")
    assert postings.search("memory_text", ["webhook"], 1, k1, b)[0][0] == added.id


# --- the all-four mix: its strategies' fast paths against plain versions ---------------------------------

ALL_FOUR = ["similarity", "temporal", "causal", "analogical"]
# A cue with events and a causal relation, so analogical's structural stage has features to match.
STORY_CUE = "the launch slipped because legal had not approved the contract"
# A cue of two sentences has a plot (engine/analogy/plot.py): its structural similarity mixes the plots' alignment in.
TOLD_STORY_CUE = "Legal had not approved the contract in time. So the launch slipped by a month."


def _plain_stored_episode(text: str) -> StoredEpisode | None:
    """The stored structure parsed from its JSON every time (no cache), as the record store's dict reads did."""
    structure = json.loads(text)
    if not structure:
        return None
    self_ = structure.get("self")
    features = tuple(structure.get("features", []))
    return StoredEpisode(episode(structure), features, None if self_ is None else float(self_))


def _detailed(results: Sequence[RecallResult]) -> list[tuple[str, float, list[dict[str, object]]]]:
    return [(r.memory.id, round(r.score, 9), [d.to_dict() for d in r.strategy_details]) for r in results]


def test_all_four_and_each_strategy_match_their_plain_versions(
    store_engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Timestamps formatted in numpy, stored episodes parsed once per text, the cue's parse awaited only by
    analogical recall, a fusion without smoothing
    that skips the pool's episodes: the same ranked ids, scores and every detail field as the plain versions."""
    engine = store_engine
    speaker = next(m.entity_id for m in engine.list_memories(kind="episode", limit=50) if m.entity_id)
    mixes: list[dict[str, object]] = [
        {"strategies": ALL_FOUR, "entity_id": speaker, "max_depth": 5},
        {"strategies": ["analogical"]},
        {"strategies": ["temporal"], "entity_id": speaker},
        {"strategies": ["temporal", "similarity"], "entity_id": speaker},
        {"strategies": ["causal", "analogical"], "max_depth": 3},
        {"strategies": ["analogical"], "analogical_alpha": 0.0},
        {"strategies": ["analogical", "similarity"], "analogical_alpha": 0.3},
        {"strategies": ["analogical"], "analogical_alpha": 1.0},
    ]
    cues = [*CUES, STORY_CUE]
    fast = {(cue, i): _detailed(engine.retrieve(build_request(cue, top_k=10, **params)))
            for cue in cues for i, params in enumerate(mixes)}
    # structure alone (alpha 0) finds nothing for a cue without structure ("legal review of the contract terms")
    assert [k for k, v in fast.items() if not v and mixes[k[1]].get("analogical_alpha") != 0.0] == []
    assert fast[(STORY_CUE, 5)]
    assert any(d["mapping"] for v in fast.values() for _, _, ds in v for d in ds if d["strategy"] == "analogical")
    monkeypatch.setattr(strategies, "iso_micros", lambda times: [iso(from_micros(int(t))) for t in times])
    monkeypatch.setattr(strategies, "stored_episode", _plain_stored_episode)
    whole_frame = fusion.frame
    monkeypatch.setattr(fusion, "frame", lambda *args, **kwargs: whole_frame(*args, **{**kwargs, "smoothing": True}))
    for cue in cues:
        for i, params in enumerate(mixes):
            assert _detailed(engine.retrieve(build_request(cue, top_k=10, **params))) == fast[(cue, i)]


def _exact_top(best: dict[str, float], inputs: ScoreInputs, now: datetime, weights: scoring.ScoringWeights,
               rows: list[int], top_k: int) -> list[tuple[str, float]]:
    scored = []
    for n in rows:
        i = inputs.ids[n]
        created = from_micros(int(inputs.created_us[n]))
        assert created is not None
        signals = scoring.signals_from(best[i], created, float(inputs.importance[n]), int(inputs.access_count[n]), now)
        score = scoring.composite(signals, weights)
        scored.append((scoring.sort_key(score, signals.relevance, created, i), i, score))
    scored.sort()
    return [(i, score) for _, i, score in scored[:top_k]]


@pytest.mark.parametrize("seed", range(6))
def test_ranking_scores_in_numpy_only_to_choose_whom_to_score_exactly(seed: int) -> None:
    """`_rank` scores exactly only the candidates within a slack of the k-th best numpy score: the top_k and
    their scores equal those of scoring every candidate exactly, ties (same relevance, time, importance)
    included, under several weightings."""
    rng = np.random.default_rng(seed)
    now = datetime(2026, 12, 3, tzinfo=UTC)
    now_us = int((now - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1))
    n = int(rng.integers(30, 400))
    ids = [f"m{j:04d}" for j in rng.permutation(n)]
    relevance = rng.choice([0.2, 0.5, 0.9, 1.3, -0.1], n) if seed % 2 else rng.random(n)
    created = now_us - rng.choice([0, 86_400_000_000, 10 ** 13], n) - (rng.integers(0, 10**12, n) * (seed % 3))
    importance = rng.choice([0.5, 0.7], n)
    access = rng.choice([0, 0, 1, 5, 100], n)
    best = {i: float(r) for i, r in zip(ids, relevance, strict=True)}
    kept = slice(1, None)  # ids[0] was forgotten meanwhile: never a contender
    inputs = ScoreInputs(ids[kept], importance[kept].astype(np.float64), created[kept].astype(np.int64),
                         access[kept].astype(np.int64))
    column = np.array([best[i] for i in inputs.ids])
    presets = scoring.WEIGHT_PRESETS.values()
    for weights in (scoring.DEFAULT_WEIGHTS, *presets, scoring.ScoringWeights(0.0, 0.0, 1.0, 0.0)):
        for top_k in (1, 5, 10, 50):
            chosen = ranking.contender_positions(column, inputs, now, weights, top_k)
            everyone = list(range(len(inputs.ids)))
            assert set(chosen) <= set(everyone)
            assert _exact_top(best, inputs, now, weights, chosen, top_k) == \
                _exact_top(best, inputs, now, weights, everyone, top_k)


def test_iso_micros_formats_like_iso_of_each_time() -> None:
    rng = np.random.default_rng(5)
    times = np.concatenate([
        rng.integers(-62_135_596_800_000_000, 253_402_300_799_999_999, 500),
        rng.integers(0, 2_000_000_000, 200) * 1_000_000,  # whole seconds: no fraction printed
        np.array([0, 1, -1, 999_999, 1_000_000]),
    ])
    assert iso_micros(times) == [iso(from_micros(int(t))) for t in times]
    assert iso_micros(np.array([], dtype=np.int64)) == []
    for start in range(0, len(times), 7):  # a few at a time are formatted one by one: the same text
        few = times[start : start + int(rng.integers(1, 18))]
        assert iso_micros(few) == [iso(from_micros(int(t))) for t in few]


def test_all_four_searches_the_vector_index_once_and_seeds_causal_with_the_nearest(
    store_engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = store_engine
    speaker = next(m.entity_id for m in engine.list_memories(kind="episode", limit=50) if m.entity_id)
    calls: list[int] = []
    original = VectorIndex.query

    def counted(self: VectorIndex, *args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorIndex, "query", counted)
    seeded = 0
    for cue in CUES:
        calls.clear()
        results = engine.retrieve(build_request(cue, top_k=10, strategies=ALL_FOUR, entity_id=speaker, max_depth=5))
        assert len(calls) == 1
        causal = [d for r in results for d in r.strategy_details if d.strategy.value == "causal"]
        plain = {"w_relevance": 1, "w_recency": 0, "w_importance": 0, "w_reinforcement": 0}
        nearest = engine.retrieve(build_request(cue, top_k=1, strategies=["similarity"], scoring_weights=plain))
        assert all(d.fields["seed_id"] == nearest[0].memory.id for d in causal)
        seeded += len(causal)
    assert seeded


def test_strategies_reading_analogicals_search_follow_it_on_the_calling_thread(
    store_engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When analogical, on the calling thread, makes the cue's HNSW search, similarity and the causal walk seeded by
    that search follow it there (temporal runs on the pool meanwhile); with searches of other widths (top_k 50) or
    no embedding search of analogical's (alpha 0) they run on the pool as before. The ranked ids, scores and every
    detail are those of every strategy on the pool, bit for bit."""
    engine = store_engine
    speaker = next(m.entity_id for m in engine.list_memories(kind="episode", limit=50) if m.entity_id)
    ran_on: dict[Strategy, str] = {}
    for strategy in (Strategy.SIMILARITY, Strategy.TEMPORAL, Strategy.CAUSAL, Strategy.ANALOGICAL):
        def noted(inp: strategies.RecallInputs, strategy: Strategy = strategy,
                  run: Callable[[strategies.RecallInputs], Sequence[strategies.Hit]]
                  = recaller_module.STRATEGIES[strategy]) -> Sequence[strategies.Hit]:
            ran_on[strategy] = threading.current_thread().name
            return run(inp)
        monkeypatch.setitem(recaller_module.STRATEGIES, strategy, noted)

    def exact(results: Sequence[RecallResult]) -> list[tuple[str, float, list[dict[str, object]]]]:
        return [(r.memory.id, r.score, [d.to_dict() for d in r.strategy_details]) for r in results]

    here = threading.current_thread().name
    mixes: list[tuple[dict[str, object], bool]] = [({"top_k": 10}, True), ({"top_k": 3}, True), ({"top_k": 50}, False),
                                                   ({"top_k": 10, "analogical_alpha": 0.0}, False)]
    recalls = {}
    for cue in [*CUES, STORY_CUE]:
        for n, (params, follows) in enumerate(mixes):
            ran_on.clear()
            recalls[(cue, n)] = exact(engine.retrieve(build_request(cue, strategies=ALL_FOUR, entity_id=speaker,
                                                                    max_depth=5, **params)))
            assert ran_on[Strategy.ANALOGICAL] == here and ran_on[Strategy.TEMPORAL] != here
            assert (ran_on[Strategy.SIMILARITY] == here) is follows and (ran_on[Strategy.CAUSAL] == here) is follows
    monkeypatch.setattr(recaller_module, "_searches_alike", lambda *_: False)  # every other strategy on the pool
    for (cue, n), found in recalls.items():
        ran_on.clear()
        assert exact(engine.retrieve(build_request(cue, strategies=ALL_FOUR, entity_id=speaker, max_depth=5,
                                                   **mixes[n][0]))) == found
        assert ran_on[Strategy.SIMILARITY] != here and ran_on[Strategy.CAUSAL] != here
    assert any(found for found in recalls.values())


def test_recalls_while_this_engine_writes_and_forgets_see_a_consistent_table(store_engine: MemoryEngine) -> None:
    """The followed table is shared with recalls in flight: rows are appended (the matrix grows) and retired
    while fused recalls read it from other threads. None may fail, and afterwards recalls equal the plain reads."""
    engine = store_engine
    speaker = next(m.entity_id for m in engine.list_memories(kind="episode", limit=50) if m.entity_id)
    assert engine._indexes.candidates() is not None  # noqa: SLF001 - the shared table is what is under test

    def recall(n: int) -> None:
        engine.retrieve(build_request(CUES[n % len(CUES)], top_k=10, preset="recommended"))
        engine.retrieve(build_request(CUES[n % len(CUES)], top_k=10, strategies=ALL_FOUR,
                                      entity_id=speaker, max_depth=5))

    def write() -> None:
        for round_ in range(6):
            written = engine.remember_many([
                {"content": f"Webhook incident follow-up {round_}.{k}: the retry queue and the contract terms",
                 "context": {"conversation": "ops", "session": 20 + round_}}
                for k in range(12)
            ])
            engine.add_edge(written[0].id, written[1].id, "followed_by")
            engine.forget(memory_ids=[written[2].id, written[3].id])

    failures = failures_beside(recall, write, min_reads=3)
    assert not failures, failures
    # (Whether the table was followed or rebuilt depends on how commits interleaved: the recalls' own
    # structure catch-ups commit too; either way it must give the same recalls as the plain reads.)
    assert engine._indexes.candidates() is not None  # noqa: SLF001
    _assert_same_as_plain(engine, _all_recalls(engine))


CUE_WORDS = sorted({w for cue in CUES for w in cue.split()} | {"who", "said", "launch", "team", "sales", "queue"})


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(CUE_WORDS), min_size=1, max_size=6))
def test_the_default_recalls_columnar_frame_equals_the_per_candidate_reference(
    store_engine: MemoryEngine, words: list[str]
) -> None:
    """The default recall's frame on a real store (conversations' episodes and followed_by links, a forgotten
    message, a revision) is the per-candidate fusion's (tests/engine/test_fusion_arrays.py), and so is what it
    ranks: the pool's order, neighbours and episodes exactly, the signals to float rounding."""
    recaller = store_engine._recaller  # noqa: SLF001 - the frame is what is under test
    inputs = recaller._inputs(build_request(" ".join(words), top_k=10))  # noqa: SLF001
    hits = recaller._fused_hits(inputs)  # noqa: SLF001
    settings_ = RECOMMENDED.fusion
    flags = (settings_.weight("similarity_window") > 0, settings_.weight("entity_named") > 0,
             settings_.weight("similarity_unnamed") > 0, settings_.smooths)
    expected = reference_frame(inputs, hits, *flags)
    got = fusion.frame(inputs, hits, *flags)
    assert got.pool and got.pool == expected.pool and got.signals == expected.signals
    assert np.allclose(got.raw, expected.raw, rtol=0, atol=1e-12) and np.allclose(got.z, expected.z, rtol=0, atol=1e-12)
    for name in ("neighbours", "group", "grouped", "by_id"):
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name
    assert (got.neighbours >= 0).any()  # the store's episodes give candidates same-episode neighbours
    result = fusion.fused(inputs, hits, settings_, 40)
    reference = reference_fuse(inputs, hits, settings_, 40)
    assert list(result.ids) == [r[0] for r in reference]
    assert np.allclose(result.relevance, [r[1] for r in reference], rtol=0, atol=1e-12)


def _plain_similarity(inp: strategies.RecallInputs) -> list[strategies.Hit]:
    """Similarity's hits made one by one, as the strategy made them before `HitColumns`."""
    hits = []
    for n in inp.nearest(inp.overfetch(inp.request.top_k)):
        if n.id not in inp.excluded:
            relevance = 1.0 - n.distance
            hits.append(strategies.Hit(n.id, relevance, StrategyDetail(Strategy.SIMILARITY, relevance,
                                                                       {"distance": n.distance})))
    return hits[: inp.request.top_k]


def _plain_temporal(inp: strategies.RecallInputs) -> list[strategies.Hit]:
    """Temporal's hits made one by one, each timestamp formatted on its own (`iso`)."""
    request = inp.request
    assert request.entity_id is not None and inp.cue_embedding is not None
    ids, times = inp.timeline().window(request.entity_id, None, None, limit=strategies.temporal_pool(request.top_k))
    table = inp.table()
    assert table is not None
    present = table.rows_of(ids.tolist()) >= 0
    ranks = np.arange(len(ids))[present]
    ids, times = ids[present], times[present]
    relevance = np.maximum(0.0, table.embeddings(ids.tolist()) @ inp.cue_embedding).astype(np.float64)
    return [strategies.Hit(i, r, StrategyDetail(Strategy.TEMPORAL, r, {"rank": k, "timestamp": iso(from_micros(t))}))
            for i, t, k, r in zip(ids.tolist(), times.tolist(), ranks.tolist(), relevance.tolist(), strict=True)]


def test_temporal_and_similarity_columns_are_the_hits_made_one_by_one(store_engine: MemoryEngine) -> None:
    """Temporal and similarity return their hits as columns (`HitColumns`), made when read: read, they are the
    hits the strategies made one by one, ids, relevances and detail fields equal bit for bit; the all-four
    recall that fuses them is unchanged by reading every hit first."""
    engine = store_engine
    recaller = engine._recaller  # noqa: SLF001 - the strategies' hits are what is under test
    speaker = next(m.entity_id for m in engine.list_memories(kind="episode", limit=50) if m.entity_id)
    for cue in [*CUES, STORY_CUE]:
        for top_k in (3, 10, 100):
            request = build_request(cue, top_k=top_k, strategies=ALL_FOUR, entity_id=speaker, max_depth=5)
            inputs = recaller._inputs(request)  # noqa: SLF001
            temporal, similarity = strategies.temporal(inputs), strategies.similarity(inputs)
            assert isinstance(temporal, strategies.HitColumns) and isinstance(similarity, strategies.HitColumns)
            assert len(temporal) and len(similarity)
            for got, plain in ((temporal, _plain_temporal(inputs)), (similarity, _plain_similarity(inputs))):
                assert [(h.id, h.relevance, h.detail) for h in got] == [(h.id, h.relevance, h.detail) for h in plain]
            assert [type(h.relevance) for h in temporal] == [float] * len(temporal)
        fused = _detailed(engine.retrieve(build_request(cue, top_k=10, strategies=ALL_FOUR, entity_id=speaker,
                                                        max_depth=5)))
        with pytest.MonkeyPatch.context() as patch:  # the strategies' hits as lists, every hit made
            for strategy in (Strategy.TEMPORAL, Strategy.SIMILARITY):
                patch.setitem(recaller_module.STRATEGIES, strategy,
                              lambda inp, run=recaller_module.STRATEGIES[strategy]: list(run(inp)))
            assert _detailed(engine.retrieve(build_request(cue, top_k=10, strategies=ALL_FOUR, entity_id=speaker,
                                                           max_depth=5))) == fused


def _plain_analogical(inp: strategies.RecallInputs) -> list[strategies.Hit]:
    """Analogical's hits made one by one, as the strategy made them before `HitColumns`: every mapped candidate a
    hit, sorted, the kept ones' shared features and mapping in words filled in afterwards."""
    req, cue_embedding = inp.request, inp.cue_embedding
    assert cue_embedding is not None
    alpha = req.analogical_alpha
    pool = max(req.top_k * strategies.ANALOGICAL_CANDIDATE_FACTOR, strategies.ANALOGICAL_CANDIDATE_MIN)
    embedding_sim = {n.id: 1.0 - n.distance for n in inp.nearest(inp.overfetch(pool))} if alpha > 0 else {}
    structural = [i for i, _ in inp.feature_index().best_matches(inp.cue_features, pool)] if alpha < 1 else []
    cue_plot = strategies.decode_plot(inp.cue_structure.get("plot")) if alpha < 1 else None
    told_alike = [i for i, _ in inp.plot_index().best_matches(cue_plot, pool)] if cue_plot is not None else []
    candidates = [i for i in dict.fromkeys([*embedding_sim, *structural, *told_alike]) if i not in inp.excluded]
    for i, vector in inp.store.embeddings([i for i in candidates if i not in embedding_sim]).items():
        embedding_sim[i] = float(np.dot(vector, cue_embedding))
    candidates = [i for i in candidates if i in embedding_sim]
    plots = {}
    for i, text in (inp.store.structure_texts(candidates) if cue_plot is not None else {}).items():
        stored = strategies.stored_episode(text)
        plots[i] = strategies.plot_similarity(cue_plot, stored.plot if stored is not None else None)
    if alpha < 1:
        overlap = inp.feature_index().similarities(inp.cue_features, candidates)
        if cue_plot is not None:
            overlap = {i: strategies.structural_similarity(overlap[i], plots.get(i, 0.0), embedding_sim[i], True)
                       for i in candidates}
        surface = {i: max(0.0, min(1.0, embedding_sim[i])) for i in candidates}
        if alpha > 0:
            surface = strategies.pool_spread(surface, strategies.SURFACE_SPREAD_FLOOR)
            overlap = strategies.pool_spread({i: overlap[i] for i in candidates})
        mapped_pool = max(req.top_k * strategies.ANALOGICAL_MAPPED_FACTOR, strategies.ANALOGICAL_MAPPED_MIN)
        candidates = sorted(candidates, key=lambda i: (-(alpha * surface[i] + (1 - alpha) * overlap[i]), i))
        candidates = candidates[:mapped_pool]
    texts = inp.store.structure_texts(candidates) if alpha < 1 else {}
    cue = episode(inp.cue_structure)
    cue_self = float(inp.cue_structure.get("self") or strategies.self_score(cue))
    mapped = {}
    for i in candidates:
        stored = strategies.stored_episode(texts[i]) if i in texts else None
        mapped[i] = (strategies.map_episodes(cue, stored.episode, cue_self, stored.self_score) if stored is not None
                     else strategies.Mapping(), stored)
    plots = {i: plots.get(i, 0.0) for i in candidates}
    e_sims = {i: max(0.0, min(1.0, embedding_sim[i])) for i in candidates}
    s_sims = {i: strategies.structural_similarity(mapped[i][0].score, plots[i], embedding_sim[i], cue_plot is not None)
              for i in candidates}
    e_part, s_part = strategies.pool_parts(e_sims, s_sims, alpha) if 0 < alpha < 1 else (e_sims, s_sims)
    hits = []
    for i in candidates:
        relevance = alpha * e_part[i] + (1 - alpha) * s_part[i]
        fields = {"embedding_similarity": e_sims[i], "structural_similarity": s_sims[i],
                  "systematicity": mapped[i][0].score,
                  "surface_kept": strategies.surface_kept(e_sims[i], cue_plot is not None),
                  "plot_similarity": plots[i], "embedding_part": e_part[i],
                  "structural_part": s_part[i], "alpha": alpha, "shared_structure": [],
                  "mapping": {}}
        hits.append(strategies.Hit(i, relevance, StrategyDetail(Strategy.ANALOGICAL, relevance, fields)))
    hits.sort(key=lambda h: (-h.relevance, h.id))
    for hit in hits[: req.top_k]:
        mapping, stored = mapped[hit.id]
        if stored is not None:
            hit.detail.fields["shared_structure"] = sorted(set(inp.cue_features) & set(stored.features))
            if mapping.events:
                hit.detail.fields["mapping"] = strategies.describe_mapping(mapping, cue, stored.episode)
            if plots[hit.id]:
                hit.detail.fields["plot"] = strategies.describe_plot(
                    strategies.plot_match(cue_plot, stored.plot), cue_plot, stored.plot)
    return hits[: req.top_k]


def test_analogical_columns_are_the_hits_made_one_by_one(store_engine: MemoryEngine) -> None:
    """Analogical returns its hits as columns (`HitColumns`), each hit's details (the shared features, the mapping
    in words) made when read: read, they are the hits it made one by one before, ids, relevances and every detail
    field equal, for every mix of surface and structure; the all-four recall, which makes only the details of what
    it returns, is unchanged by reading every hit first."""
    engine = store_engine
    recaller = engine._recaller  # noqa: SLF001 - the strategy's hits are what is under test
    speaker = next(m.entity_id for m in engine.list_memories(kind="episode", limit=50) if m.entity_id)
    described = 0
    for cue in [*CUES, STORY_CUE, TOLD_STORY_CUE]:
        for top_k, alpha in ((3, 0.5), (10, 0.5), (50, 0.5), (10, 0.0), (10, 0.3), (10, 1.0)):
            request = build_request(cue, top_k=top_k, strategies=["analogical"], analogical_alpha=alpha)
            inputs = recaller._inputs(request)  # noqa: SLF001
            got = strategies.analogical(inputs)
            assert isinstance(got, strategies.HitColumns)
            plain = _plain_analogical(inputs)
            assert [(h.id, h.relevance, h.detail) for h in got] == [(h.id, h.relevance, h.detail) for h in plain]
            assert [type(h.relevance) for h in got] == [float] * len(got)
            described += sum(1 for h in got if h.detail.fields["mapping"])
        fused = _detailed(engine.retrieve(build_request(cue, top_k=10, strategies=ALL_FOUR, entity_id=speaker,
                                                        max_depth=5)))
        with pytest.MonkeyPatch.context() as patch:  # the hits as a list, every hit made
            patch.setitem(recaller_module.STRATEGIES, Strategy.ANALOGICAL,
                          lambda inp, run=recaller_module.STRATEGIES[Strategy.ANALOGICAL]: list(run(inp)))
            assert _detailed(engine.retrieve(build_request(cue, top_k=10, strategies=ALL_FOUR, entity_id=speaker,
                                                           max_depth=5))) == fused
    assert described  # some mapping was described in words


def _plain_lexical(inp: strategies.RecallInputs) -> list[strategies.Hit]:
    """Lexical's hits made one by one, as the strategy made them before `HitColumns`."""
    own, window = lexical_module.lexical_signals(inp, max(lexical_module.LEXICAL_POOL, inp.request.top_k))
    hits = []
    for memory_id in dict.fromkeys([*own, *window]):
        total = own.get(memory_id, 0.0) + window.get(memory_id, 0.0)
        relevance = total / (total + lexical_module.LEXICAL_RELEVANCE_HALF)
        fields = {"bm25": round(own.get(memory_id, 0.0), 4), "window_bm25": round(window.get(memory_id, 0.0), 4)}
        hits.append(strategies.Hit(memory_id, relevance, StrategyDetail(Strategy.LEXICAL, relevance, fields)))
    hits.sort(key=lambda h: (-h.relevance, h.id))
    return hits


def test_lexical_columns_are_the_hits_made_one_by_one(store_engine: MemoryEngine) -> None:
    """Lexical returns its hits as columns (`HitColumns`, the BM25 fields as columns fusion reads): read, they are
    the hits it made one by one, bit for bit; the default recall (and lexical alone) is unchanged by reading every
    hit first, which sends the fusion frame through the per-hit dicts."""
    engine = store_engine
    recaller = engine._recaller  # noqa: SLF001 - the strategy's hits are what is under test
    for cue in [*CUES, STORY_CUE]:
        for top_k in (3, 10, 150):
            inputs = recaller._inputs(build_request(cue, top_k=top_k, strategies=["lexical"]))  # noqa: SLF001
            got = lexical_module.lexical(inputs)
            assert isinstance(got, strategies.HitColumns) and len(got)
            assert [(h.id, h.relevance, h.detail) for h in got] == [
                (h.id, h.relevance, h.detail) for h in _plain_lexical(inputs)]
            assert [type(h.relevance) for h in got] == [float] * len(got)
        default = _detailed(engine.retrieve(build_request(cue, top_k=10)))
        alone = _detailed(engine.retrieve(build_request(cue, top_k=10, strategies=["lexical"])))
        with pytest.MonkeyPatch.context() as patch:  # the hits as a list, every hit made
            patch.setitem(recaller_module.STRATEGIES, Strategy.LEXICAL,
                          lambda inp, run=recaller_module.STRATEGIES[Strategy.LEXICAL]: list(run(inp)))
            assert _detailed(engine.retrieve(build_request(cue, top_k=10))) == default
            assert _detailed(engine.retrieve(build_request(cue, top_k=10, strategies=["lexical"]))) == alone
