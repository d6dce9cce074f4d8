"""Relational structures as a derived index (engine/structures.py): writes commit a durable "pending" mark,
every read of structures extracts pending ones first, and an idle worker catches up in the background.

Real engine, real spaCy, real Chroma, temp dirs, an injected clock; waits are for conditions, never sleeps.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import MemoryEngine, structures
from engine.analogy.text import EpisodeExtractor
from engine.clock import ManualClock
from engine.embedding import Embedder
from tests.waiting import wait_for

TEXTS = [
    "The general surrounded the fortress and his army attacked it from every side.",
    "The surgeon aimed many weak rays at the tumour so that they destroyed it together.",
    "Maya fixed the broken bicycle because her brother needed it for school.",
    "The committee rejected the proposal after the treasurer warned about costs.",
    "A storm flooded the village and the farmers rebuilt the bridge.",
    "The teacher praised the student who solved the hardest problem.",
    "Sofia sold her old car to pay for the flight to Lisbon.",
    "The company hired three engineers when the contract was signed.",
]
CUE = "The doctor attacked the tumour with rays from every side."


@pytest.fixture
def sync_engine(tmp_path: Path, embedder: Embedder, clock: ManualClock,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], MemoryEngine]]:
    """An engine that extracts structures on the write path (the old behaviour), for comparison."""
    opened: list[MemoryEngine] = []

    def open_one() -> MemoryEngine:
        engine = MemoryEngine(tmp_path / "sync", embedder=embedder, clock=clock)
        opened.append(engine)
        return engine

    yield open_one
    for engine in opened:
        engine.close()


def _remember(engine: MemoryEngine) -> list[str]:
    return [m.id for m in engine.remember_many([{"content": t, "entity_id": "story"} for t in TEXTS])]


def _remember_and_extract(engine: MemoryEngine) -> list[str]:
    """What a write that extracted its structures itself would leave: nothing pending before any read."""
    ids = _remember(engine)
    engine.catch_up_structures()
    return ids


def _ranked(engine: MemoryEngine, **params: Any) -> list[tuple[str, float, float]]:
    results = engine.recall(CUE, top_k=len(TEXTS), **params)
    return [(r.memory.content, round(r.score, 9), round(r.signals.relevance, 9)) for r in results]


def test_writes_leave_structures_pending_and_the_barrier_extracts_them_as_synchronous_extraction_does(
    engine: MemoryEngine, sync_engine: Callable[[], MemoryEngine], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _remember(engine)
    assert engine.stats()["structures_pending"] == len(TEXTS)
    assert engine._store.structure_texts(ids)[ids[0]] == "{}"  # noqa: SLF001 - not extracted on the write path
    sync = sync_engine()
    sync_ids = _remember_and_extract(sync)
    assert sync.stats()["structures_pending"] == 0
    # The first read of a structure extracts every pending one; they equal what the write path extracted.
    assert engine.structure_of(ids[2]) == sync.structure_of(sync_ids[2])
    assert engine.stats()["structures_pending"] == 0
    expected = EpisodeExtractor().extract(TEXTS)
    for i, sid, structure in zip(ids, sync_ids, expected, strict=True):
        assert engine.structure_of(i) == sync.structure_of(sid) == structure
    assert engine.catch_up_structures() == 0


def test_analogical_recall_right_after_remember_many_scores_as_before(
    engine: MemoryEngine, sync_engine: Callable[[], MemoryEngine], monkeypatch: pytest.MonkeyPatch
) -> None:
    sync = sync_engine()
    _remember_and_extract(sync)
    expected = {alpha: _ranked(sync, strategies=["analogical"], analogical_alpha=alpha) for alpha in (0.0, 0.5)}
    mixed = _ranked(sync, strategies=["similarity", "analogical"])
    # The deferred engine's feature index is built before the write, so the new memories join it later.
    assert engine.recall(CUE, strategies=["analogical"]) == []
    _remember(engine)
    assert engine.pending_structures() == len(TEXTS)
    assert _ranked(engine, strategies=["analogical"], analogical_alpha=0.0) == expected[0.0]
    assert _ranked(engine, strategies=["analogical"], analogical_alpha=0.5) == expected[0.5]
    assert expected[0.0][0][0] in TEXTS[:2]  # an attack-from-every-side story leads, not just any
    assert _ranked(engine, strategies=["similarity", "analogical"]) == mixed
    assert engine.pending_structures() == 0


def test_another_engine_on_the_same_data_dir_extracts_pending_structures(
    engine: MemoryEngine, data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.recall(CUE, strategies=["analogical"])  # this engine's feature index exists before the write
    ids = _remember(engine)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as other:
        assert other.stats()["structures_pending"] == len(TEXTS)
        theirs = _ranked(other, strategies=["analogical"], analogical_alpha=0.0)
        assert theirs[0][0] in TEXTS[:2]
        assert other.pending_structures() == 0
    # The writer sees the other engine's extraction (the store's version moved): nothing is extracted
    # again, and its feature index takes in the stored features.
    assert engine.pending_structures() == 0
    # (Relevance, not score: the other engine's recall counted accesses, which the score rewards.)
    mine = _ranked(engine, strategies=["analogical"], analogical_alpha=0.0)
    assert [(c, r) for c, _, r in mine] == [(c, r) for c, _, r in theirs]
    assert engine.structure_of(ids[1]) == EpisodeExtractor().extract([TEXTS[1]])[0]


def test_a_revise_while_pending_keeps_each_text_with_its_own_structure(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _remember(engine)
    revised = engine.revise(ids[0], content=TEXTS[1])
    revision = next(m for m in engine.list_memories(kind="revision", limit=5))
    assert engine.pending_structures() == len(TEXTS) + 1  # the revision keeps the old text's pending mark
    extracted = EpisodeExtractor().extract([TEXTS[0], TEXTS[1]])
    assert engine.structure_of(revised.id) == extracted[1]
    assert engine.structure_of(revision.id) == extracted[0]
    # An unchanged text keeps its (now extracted) structure through a revise of other fields.
    engine.revise(ids[3], importance=0.9)
    assert engine.structure_of(ids[3]) == EpisodeExtractor().extract([TEXTS[3]])[0]
    assert engine.pending_structures() == 0


def test_the_idle_worker_empties_the_queue_once_writes_pause(
    engine: MemoryEngine, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(structures, "STRUCTURE_IDLE_SECONDS", 30.0)
    monkeypatch.setattr(structures, "STRUCTURE_IDLE_BATCH", 3)
    ids = _remember(engine)
    follower = engine._structures  # noqa: SLF001 - the worker is what is under test
    assert engine.pending_structures() == len(TEXTS)  # no pause yet on the engine's clock: nothing extracted
    clock.advance(seconds=31)
    follower.nudge()
    wait_for(lambda: engine.pending_structures() == 0)
    assert follower.worker_failed is None
    stored = engine._store.structure_texts(ids)  # noqa: SLF001 - stored by the worker, before any read
    assert all(text != "{}" for text in stored.values())
    for i, structure in zip(ids, EpisodeExtractor().extract(TEXTS), strict=True):
        assert engine.structure_of(i) == structure
    # A later write wakes it again.
    again = engine.remember("The pilot landed the plane because the engine failed.")
    assert engine.pending_structures() == 1
    clock.advance(seconds=31)
    follower.nudge()
    wait_for(lambda: engine.pending_structures() == 0)
    assert engine.structure_of(again.id)["features"]


def test_an_ingest_holds_the_idle_worker_until_it_ends(
    engine: MemoryEngine, clock: ManualClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pauses between an ingest's commits are not idle time: the worker does not parse beside it."""
    monkeypatch.setattr(structures, "STRUCTURE_IDLE_SECONDS", 30.0)
    _remember(engine)
    follower = engine._structures  # noqa: SLF001 - the worker's idea of idle time is what is under test
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nThe vendor renewed the contract because the price fell.\n")
    idle_left: list[float] = []

    def progress(phase: str, done: int, total: int) -> None:
        clock.advance(seconds=31)  # longer than the idle pause since any write
        follower.nudge()
        idle_left.append(follower._idle_for())  # noqa: SLF001

    engine.ingest([folder], progress=progress)
    assert idle_left and all(left == 30.0 for left in idle_left)
    assert engine.pending_structures() == len(TEXTS)  # nothing extracted during the ingest
    assert follower._idle_for() == 30.0  # noqa: SLF001 - the pause starts when the ingest ends
    clock.advance(seconds=31)
    follower.nudge()
    wait_for(lambda: engine.pending_structures() == 0)


@pytest.mark.slow
def test_close_stops_the_worker_promptly_and_what_is_left_stays_pending(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(structures, "STRUCTURE_IDLE_SECONDS", 0.0)
    monkeypatch.setattr(structures, "STRUCTURE_IDLE_BATCH", 4)
    many = [f"{t} ({n})" for n in range(40) for t in TEXTS]  # 320 texts: far more than one batch
    engine = MemoryEngine(data_dir, embedder=embedder, clock=clock)
    try:
        engine.remember_many([{"content": t} for t in many])
        wait_for(lambda: engine.pending_structures() < len(many))  # the worker is extracting
    finally:
        started = time.monotonic()
        engine.close()
        took = time.monotonic() - started
    assert took < 5.0, f"close waited {took:.1f} s for the structure worker"
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as again:
        left = again.pending_structures()
        assert 0 < left < len(many)  # durable: the rest is still marked, nothing half-written
        assert again.catch_up_structures() == left
        hits = again.recall(CUE, strategies=["analogical"], analogical_alpha=0.0, top_k=3)
        assert hits and hits[0].memory.content.split(" (")[0] in TEXTS[:2]


def test_the_barrier_reads_no_table_while_the_store_is_unchanged(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    _remember(engine)
    assert engine.catch_up_structures() == len(TEXTS)
    store = engine._store  # noqa: SLF001 - which reads the barrier makes is what is under test
    looked: list[int] = []
    original = store.pending_structures

    def counted(limit: int) -> list[tuple[str, str]]:
        looked.append(limit)
        return original(limit)

    monkeypatch.setattr(store, "pending_structures", counted)
    engine.recall(CUE, strategies=["analogical"])
    engine.recall(CUE, strategies=["similarity", "analogical"])  # counting accesses does not move the version
    assert looked == []
    added = engine.remember("The pilot landed the plane because the engine failed.")
    engine.recall(CUE, strategies=["analogical"])  # a write moved the version: the barrier looks, and extracts
    assert looked and engine.pending_structures() == 0
    assert engine.structure_of(added.id) == EpisodeExtractor().extract([added.content])[0]


def test_structures_of_an_older_extractor_version_are_re_extracted_before_the_first_analogical_recall(
        tmp_path: Path, embedder: Embedder, clock: ManualClock, caplog: pytest.LogCaptureFixture) -> None:
    from engine.analogy.episode_graph import GRAPH_VERSION

    with MemoryEngine(tmp_path / "data", embedder=embedder, clock=clock) as engine:
        ids = _remember_and_extract(engine)
        current = engine.structure_of(ids[0])
        old = {**current, "version": GRAPH_VERSION - 1, "graph": {}, "features": []}
        engine._store.set_structures([(ids[0], TEXTS[0], old)])  # as an older engine left it
        assert engine.structure_of(ids[0])["version"] == GRAPH_VERSION - 1
    with MemoryEngine(tmp_path / "data", embedder=embedder, clock=clock) as engine, caplog.at_level(logging.WARNING):
        engine.recall(CUE, strategies=["analogical"])
        assert engine.structure_of(ids[0]) == current
        # the one-off wait is announced, with how many memories it is for
        assert [r.getMessage() for r in caplog.records if "re-extracting" in r.getMessage()] == [
            f"re-extracting the relational structures of 1 memory for extractor version {GRAPH_VERSION} "
            "(once per store, after an upgrade; about 1 s)"]
        caplog.clear()
        engine.recall(CUE, strategies=["analogical"])
        assert not [r for r in caplog.records if "re-extracting" in r.getMessage()]


def test_stale_structures_are_every_other_version_found_through_the_version_index(
        store: dict[str, Any], embedder: Embedder, clock: ManualClock) -> None:
    from engine.analogy.episode_graph import GRAPH_VERSION

    with MemoryEngine(**store, embedder=embedder, clock=clock) as engine:
        ids = _remember_and_extract(engine)
        current = engine.structure_of(ids[0])
        others = {ids[1]: GRAPH_VERSION - 1, ids[2]: GRAPH_VERSION + 1, ids[3]: str(GRAPH_VERSION), ids[4]: None}
        engine._store.set_structures([(i, TEXTS[ids.index(i)], {**current, "version": v}) for i, v in others.items()])
        waiting = engine.remember("The courier was late because the van broke down.")  # pending: no structure
        stale = engine._store.stale_structures(GRAPH_VERSION)
        assert sorted(i for i, _ in stale) == sorted([*others, waiting.id])  # older, newer, a text, null, none
        assert dict(stale)[ids[1]] == TEXTS[1]
        assert "memories_structure_version" in _stale_plan(engine, store)  # no row read to find none


def _stale_plan(engine: MemoryEngine, store: dict[str, Any]) -> str:
    """How the backend answers `stale_structures` (PostgreSQL told to avoid reading the whole table where it can:
    its planner reads a table this small whole anyway)."""
    if "database" not in store:
        from engine.store.sqlite.structures import STALE

        plan = " ".join(str(row[-1]) for row in engine._store.read("EXPLAIN QUERY PLAN " + STALE, (1, 1)))
        assert "SCAN memories" not in plan
        return plan
    import psycopg

    from engine.store.postgres.structures import STALE as PG_STALE

    with psycopg.connect(store["database"]) as conn:
        conn.execute("SET enable_seqscan = off")
        return " ".join(row[0] for row in conn.execute("EXPLAIN " + PG_STALE, (1, 1)).fetchall())
