"""The fused relevance is calibrated (engine/recall/calibration.py): monotone in the fused evidence, spread
enough that the default weights rank by the cue, and similarity alone keeps its cosine."""

from __future__ import annotations

import numpy as np
import pytest

from engine import MemoryEngine, build_request
from engine.recall import calibration
from engine.recall.scoring import DEFAULT_WEIGHTS

RELEVANCE_ONLY = {"w_relevance": 1.0, "w_recency": 0.0, "w_importance": 0.0, "w_reinforcement": 0.0}

PEOPLE = ("Priya", "Tomas", "Aiko", "Lena", "Marcus", "Sofia")
TOPICS = (
    "adopted a grey rescue cat from the shelter",
    "started learning to play the cello",
    "repaired the leaking kitchen roof after the storm",
    "ran her first half marathon in the rain",
    "planted tomatoes and basil on the balcony",
    "switched jobs to work at a solar energy startup",
    "read a long novel about the history of Venice",
    "baked sourdough bread every Sunday morning",
    "booked a train trip through the Swiss Alps",
    "volunteered at the food bank on weekends",
)
NEEDLE = "Priya went hiking in the Dolomites last summer and camped beside a glacier lake"
CUE = "Where did Priya go hiking last summer?"


def _corpus(n: int) -> list[str]:
    return [f"{PEOPLE[i % len(PEOPLE)]} {TOPICS[i % len(TOPICS)]} in week {i}" for i in range(n)]


def test_the_mapping_is_strictly_increasing_in_the_evidence_and_keeps_the_fused_order() -> None:
    z = np.linspace(-6, 12, 500)
    p = calibration.from_z(z)
    assert np.all(np.diff(p) > 0) and p.min() > 0 and p.max() < 1
    rng = np.random.default_rng(7)
    for size in (1, 2, 10, 300, 5000):
        fused = rng.normal(size=size) * rng.uniform(0.1, 20) + rng.uniform(-5, 5)
        relevance = calibration.calibrated(fused)
        assert np.array_equal(np.argsort(-fused, kind="stable"), np.argsort(-relevance, kind="stable"))
        # shifting or scaling the fused evidence (more signals, other weights) does not move the calibration
        assert np.allclose(calibration.calibrated(3.0 * fused + 7.0), relevance)
    assert np.all(calibration.calibrated(np.full(5, 2.5)) == calibration.from_z(0.0))


def _pool_relevance(engine: MemoryEngine, cue: str, top_k: int) -> list[tuple[str, float]]:
    """The fused recall's best `top_k` (uncounted), ranked by relevance alone, with their relevance."""
    results = engine.retrieve(build_request(cue, preset="recommended", top_k=top_k, scoring_weights=RELEVANCE_ONLY))
    return [(r.memory.content, r.signals.relevance) for r in results]


def test_fused_relevance_spreads_more_than_the_largest_recency_or_reinforcement_step(engine: MemoryEngine) -> None:
    engine.remember_many([{"content": c} for c in [*_corpus(79), NEEDLE]])
    ranked = _pool_relevance(engine, CUE, 50)
    assert ranked[0][0] == NEEDLE
    top, fiftieth = ranked[0][1], ranked[49][1]
    w = DEFAULT_WEIGHTS
    largest_step = max(w.w_recency, w.w_reinforcement)  # each signal moves at most its full weight (0 -> 1)
    assert w.w_relevance * (top - fiftieth) > largest_step
    assert [r for _, r in ranked] == sorted((r for _, r in ranked), reverse=True)


@pytest.mark.parametrize("size", [9, 199])
def test_a_clear_match_stands_out_on_a_small_and_a_larger_store(engine: MemoryEngine, size: int) -> None:
    engine.remember_many([{"content": c} for c in [*_corpus(size), NEEDLE]])
    ranked = _pool_relevance(engine, CUE, 10)
    assert ranked[0][0] == NEEDLE
    assert ranked[0][1] > 0.5 and ranked[0][1] - ranked[-1][1] > 0.4


def test_reinforcement_alone_cannot_lift_an_irrelevant_memory_above_a_relevant_one(engine: MemoryEngine) -> None:
    engine.remember_many([{"content": c} for c in [*_corpus(39), NEEDLE]])
    habit = _corpus(39)[3]
    for _ in range(110):  # recalled past the reinforcement cap: reinforcement 1.0
        got = engine.recall(habit, preset="recommended", top_k=1)
        assert got[0].memory.content == habit
    results = engine.recall(CUE, preset="recommended", top_k=40)
    order = [r.memory.content for r in results]
    reinforced = next(r for r in results if r.memory.content == habit)
    assert reinforced.signals.reinforcement == pytest.approx(1.0)
    assert order.index(NEEDLE) < order.index(habit)
    assert order[0] == NEEDLE


def test_similarity_alone_keeps_the_cosine_as_relevance(engine: MemoryEngine) -> None:
    engine.remember_many([{"content": c} for c in [*_corpus(19), NEEDLE]])
    results = engine.retrieve(build_request(CUE, strategies=["similarity"], top_k=5))
    cue = engine.embed([CUE])[0]
    for r in results:
        vector = engine.embed([r.memory.content])[0]
        assert r.signals.relevance == pytest.approx(float(vector @ cue), abs=1e-4)
