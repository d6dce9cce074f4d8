"""The contradiction check off the write path (engine/contradictions/follow.py): a write marks its statements
pending in its own transaction, `contradiction_prepare` checks every pending one first (the read barrier), the
idle worker checks them in the background, and a store reopened runs the checks an earlier process left.

Real engine, real spaCy, real Chroma, temp dirs, an injected clock; waits are for conditions, never sleeps.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

import engine.contradictions as contradictions
from engine import MemoryEngine, structures
from engine.api import parse_request
from engine.clock import ManualClock
from engine.contradictions import follow
from engine.contradictions.detect import Finding
from engine.embedding import Embedder
from tests.waiting import wait_for


def call(engine: MemoryEngine, op: str, **fields: object) -> object:
    return engine.handle(parse_request(op, fields))


def _candidates(engine: MemoryEngine) -> list[tuple[str, str, str]]:
    return [(c.memory_a, c.memory_b, c.reason) for c in call(engine, "contradiction_prepare").candidates]


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the pairs handed to `detect_pairs` (the spaCy part of a check), and still detect them."""
    real = contradictions.detect_pairs
    calls: list[int] = []

    def counting(pairs: Sequence[tuple[str, str]]) -> list[Finding | None]:
        calls.append(len(pairs))
        return real(pairs)

    monkeypatch.setattr(contradictions, "detect_pairs", counting)
    return calls


def test_a_write_marks_its_check_pending_and_runs_no_parse(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _spy(monkeypatch)
    engine.remember("Priya works at the Berlin office.", entity_id="priya")
    engine.remember_many([
        {"content": "Priya does not work at the Berlin office.", "entity_id": "priya"},
        {"content": "The Berlin office opened in 2019.", "entity_id": None},  # no entity: nothing to check
        {"content": "Priya's handbook", "entity_id": "priya", "kind": "document"},  # not a statement
    ])
    assert calls == []  # the write path parsed nothing
    assert engine.pending_contradiction_checks() == 2
    assert len(_candidates(engine)) == 1 and calls  # the barrier ran the checks, parsing the pair
    assert engine.pending_contradiction_checks() == 0


def test_a_remember_followed_at_once_by_prepare_sees_its_candidate(engine: MemoryEngine) -> None:
    older = engine.remember("Our gate is B12.", entity_id="trip")
    newer = engine.remember("Our gate is C4.", entity_id="trip")
    assert _candidates(engine) == [(older.id, newer.id, "values")]
    later = engine.remember_many([{"content": "Our gate is D7.", "entity_id": "trip"}])[0]
    assert {(a, b) for a, b, _ in _candidates(engine)} == {(older.id, newer.id), (older.id, later.id),
                                                         (newer.id, later.id)}
    assert engine.catch_up_contradictions() == 0  # nothing pending: the barrier is a version comparison


def test_statements_written_together_are_compared_in_the_order_written(engine: MemoryEngine) -> None:
    """One batch, and batches whose checks wait together, give the pairs a check per write would give."""
    first = engine.remember_many([{"content": "Sam is allergic to peanuts.", "entity_id": "sam"},
                                  {"content": "Sam is not allergic to peanuts.", "entity_id": "sam"}])
    second = engine.remember("Priya works at the Berlin office.", entity_id="priya")
    third = engine.remember("Priya does not work at the Berlin office.", entity_id="priya")
    assert engine.pending_contradiction_checks() == 4
    assert sorted(_candidates(engine)) == sorted([(first[0].id, first[1].id, "negation"),
                                                  (second.id, third.id, "negation")])


def test_a_store_closed_before_the_check_runs_it_when_reopened(
    data_dir: Path, embedder: Embedder, clock: ManualClock
) -> None:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        older = engine.remember("The Tigers won the final.", entity_id="tigers")
        newer = engine.remember("The Tigers lost the final.", entity_id="tigers")
        assert engine.pending_contradiction_checks() == 2  # no pause on the engine's clock: nothing checked
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as again:
        assert again.pending_contradiction_checks() == 2  # the marks are durable
        assert _candidates(again) == [(older.id, newer.id, "opposites")]
        assert again.pending_contradiction_checks() == 0


def test_the_idle_worker_runs_pending_checks_once_writes_pause(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(structures, "STRUCTURE_IDLE_SECONDS", 30.0)
    monkeypatch.setattr(follow, "CHECK_IDLE_BATCH", 1)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        older = engine.remember("Sam is allergic to peanuts.", entity_id="sam")
        newer = engine.remember("Sam is not allergic to peanuts.", entity_id="sam")
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        engine.warm()  # a server opening the store starts the worker for what an earlier process left
        assert engine.pending_contradiction_checks() == 2
        clock.advance(seconds=31)
        engine._structures.nudge()  # noqa: SLF001 - the worker is what is under test
        wait_for(lambda: engine.pending_contradiction_checks() == 0 and engine.pending_structures() == 0)
        assert engine._structures.worker_failed is None  # noqa: SLF001
        stored = engine._store.pending_contradictions(10)  # noqa: SLF001 - stored by the worker, before any read
        assert [(p.memory_a, p.memory_b) for p in stored] == [(older.id, newer.id)]
        assert _candidates(engine) == [(older.id, newer.id, "negation")]


def test_a_failed_check_fails_neither_the_write_nor_the_read(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(pairs: Sequence[tuple[str, str]]) -> list[Finding | None]:
        raise RuntimeError("the parser is broken")

    monkeypatch.setattr(contradictions, "detect_pairs", broken)
    engine.remember("Our gate is B12.", entity_id="trip")
    newer = engine.remember("Our gate is C4.", entity_id="trip")  # the write succeeds: nothing parses on it
    assert engine.get(newer.id).content == "Our gate is C4."
    with caplog.at_level(logging.ERROR, logger="engine.contradictions.follow"):
        assert _candidates(engine) == []  # the read succeeds; the failure is logged, the mark dropped
    assert "the parser is broken" in caplog.text and newer.id in caplog.text
    assert engine.pending_contradiction_checks() == 0
    monkeypatch.undo()
    engine.remember("Our gate is D7.", entity_id="trip")  # later checks work again
    assert len(_candidates(engine)) == 2


def test_a_forgotten_memory_leaves_no_pending_check(engine: MemoryEngine) -> None:
    engine.remember("Our gate is B12.", entity_id="trip")
    newer = engine.remember("Our gate is C4.", entity_id="trip")
    engine.forget(newer.id)
    assert engine.pending_contradiction_checks() == 1
    assert _candidates(engine) == []
