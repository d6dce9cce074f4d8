"""The structural feature index (MAC stage): its fast paths give the same figures as the plain formula."""

from __future__ import annotations

import random

import pytest

from engine.analogy.features import structural_similarity
from engine.index.feature_index import FeatureIndex

FEATURES = [
    "act:omit", "act:fail", "act:prepare", "val:failure", "val:success", "rel:causes", "rel:precedes",
    "chain:omit>causes>fail", "chain:prepare>causes>succeed", "vchain:0>causes>-", "role:agent:person",
    "role:patient:thing",
]  # fmt: skip


@pytest.fixture(scope="module")
def index_and_sets() -> tuple[FeatureIndex, dict[str, list[str]]]:
    rng = random.Random(7)
    sets = {f"m{i:03d}": rng.sample(FEATURES, rng.randint(0, 6)) for i in range(300)}
    return FeatureIndex(sets.items()), sets


def test_similarities_equal_the_weighted_jaccard(index_and_sets: tuple[FeatureIndex, dict[str, list[str]]]) -> None:
    index, sets = index_and_sets
    rng = random.Random(11)
    for _ in range(20):
        cue = rng.sample(FEATURES, rng.randint(1, 6))
        got = index.similarities(cue, [*sets, "unknown"])
        assert got["unknown"] == 0.0
        for memory_id, features in sets.items():
            assert got[memory_id] == pytest.approx(structural_similarity(cue, features))


def test_best_matches_rank_by_the_weighted_jaccard(index_and_sets: tuple[FeatureIndex, dict[str, list[str]]]) -> None:
    index, sets = index_and_sets
    cue = ["act:omit", "chain:omit>causes>fail", "val:failure", "rel:causes"]
    found = index.best_matches(cue, 10)
    assert len(found) == 10
    scores = [s for _, s in found]
    assert scores == sorted(scores, reverse=True)
    for memory_id, score in found:
        assert score == pytest.approx(structural_similarity(cue, sets[memory_id]))
    best_possible = max(structural_similarity(cue, f) for f in sets.values())
    assert scores[0] == pytest.approx(best_possible)
    index.remove([found[0][0]])
    assert found[0][0] not in {m for m, _ in index.best_matches(cue, 10)}
    index.add(found[0][0], sets[found[0][0]])  # the module fixture stays as it was
