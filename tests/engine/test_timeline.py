"""The numpy timeline against a brute-force model, and the temporal pool's vectorised cut against the
facade's own composite ranking of the whole pool."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from engine import MemoryEngine, NewMemory, build_request
from engine.clock import ManualClock
from engine.index.timeline import TimelineIndex
from engine.recall import scoring
from tests.conftest import START


def _brute(model: dict[str, tuple[str, int, int]], entity: str, start: int | None, end: int | None,
           limit: int | None) -> list[tuple[str, int]]:
    rows = sorted(
        (t, seq, i) for i, (e, t, seq) in model.items()
        if e == entity and (start is None or t >= start) and (end is None or t <= end)
    )
    if limit is not None:
        rows = rows[-limit:] if limit > 0 else []
    return [(i, t) for t, _, i in reversed(rows)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_timeline_matches_a_brute_force_model_under_random_writes(seed: int) -> None:
    rng = random.Random(seed)
    model: dict[str, tuple[str, int, int]] = {}  # id -> (entity, time, insertion order)
    rows = []
    for n in range(200):
        entity, t = f"e{rng.randrange(6)}", rng.randrange(40)  # many equal times: ties keep insertion order
        rows.append((entity, t, f"m{n}"))
        model[f"m{n}"] = (entity, t, n)
    timeline = TimelineIndex(rows)
    order = next_id = len(rows)
    for step in range(1500):
        op = rng.random()
        if op < 0.3:
            entity, t, memory_id = f"e{rng.randrange(8)}", rng.randrange(40), f"m{next_id}"
            next_id += 1
            timeline.add(entity, t, memory_id)
            model[memory_id] = (entity, t, order)
        elif op < 0.4 and model:
            gone = rng.sample(sorted(model), min(3, len(model)))
            timeline.remove(gone)
            for memory_id in gone:
                del model[memory_id]
        elif op < 0.5 and model:  # a revision moves a memory to another entity or time
            memory_id = rng.choice(sorted(model))
            timeline.remove([memory_id])
            entity, t = f"e{rng.randrange(8)}", rng.randrange(40)
            timeline.add(entity, t, memory_id)
            model[memory_id] = (entity, t, order)
        else:
            entity = f"e{rng.randrange(9)}"
            start, end = rng.choice([None, rng.randrange(40)]), rng.choice([None, rng.randrange(40)])
            limit = rng.choice([None, 1, 5, 30])
            assert timeline.range(entity, start, end, limit) == _brute(model, entity, start, end, limit), step
            assert timeline.has(entity) == any(e == entity for e, _, _ in model.values()), step
            names = timeline.entities()
            assert list(names) == sorted({e for e, _, _ in model.values()}), step
            assert timeline.entities() is names  # kept until an entity comes or goes
        order += 1
    assert len(timeline) == len(model)
    assert list(timeline.entities()) == sorted({e for e, _, _ in model.values()})


def test_the_temporal_cut_equals_ranking_the_whole_pool(engine: MemoryEngine, clock: ManualClock) -> None:
    """A plain timeline read scores its pool in numpy and keeps top_k: the same memories, in the same
    order, as scoring every memory of the entity one by one with the composite score."""
    rng = random.Random(5)
    items = [
        NewMemory(f"deal note {n}", round(rng.random(), 2), None, "deal",
                  created_at=START - timedelta(days=rng.randrange(60), minutes=n))
        for n in range(120)
    ]
    memories = engine.remember_many(items)
    for _ in range(3):  # some memories are reinforced by recalls
        engine.recall(strategies=["temporal"], entity_id="deal", top_k=7)
    clock.advance(days=2)
    for weights in ("0.5:0.2:0.2:0.1", "0:1:0:0", "0:0:1:0", "0.1:0.2:0.3:0.4"):
        got = engine.retrieve(
            build_request(strategies=["temporal"], entity_id="deal", top_k=9, scoring_weights=weights)
        )
        w = scoring.ScoringWeights.parse(weights)
        everyone = [engine.get(m.id) for m in memories]
        expected = sorted(
            everyone,
            key=lambda m: scoring.sort_key(
                scoring.composite(scoring.signals_for(m, 1.0, clock.now()), w), 1.0, m.created_at, m.id
            ),
        )[:9]
        assert {r.memory.id for r in got} == {m.id for m in expected}, weights
        assert [r.memory.id for r in got] == [m.id for m in sorted(expected, key=lambda m: (m.created_at, m.id))]
