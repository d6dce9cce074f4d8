"""Reflection on real embeddings: three clear topics give three insights that cite the right sources."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from engine.embedding import Embedder
from engine.reflect import MIN_CLUSTER_SIZE, cluster, reflect_drafts
from engine.reflect.insights import confidence_of, fingerprint, importance_of

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)

TOPICS = {
    "garden": [
        "The tomatoes in the garden need watering every evening in July.",
        "Aphids are eating the roses; spray them with soapy water.",
        "We planted basil and parsley beside the tomato beds.",
        "The compost heap is ready to spread on the vegetable garden.",
    ],
    "car": [
        "The car's brakes squeal when stopping on wet roads.",
        "The mechanic said the car needs new brake pads and an oil change.",
        "The car failed its inspection because of a worn tyre.",
        "Car insurance renewal is due next month; compare quotes first.",
    ],
    "tax": [
        "The tax return must be filed by the end of April.",
        "Keep the receipts for deductible home office expenses for the tax return.",
        "The accountant asked for last year's tax statements and bank interest.",
        "Self-employed income needs quarterly tax prepayments.",
    ],
}


@dataclass(frozen=True)
class Note:
    id: str
    content: str
    importance: float
    entity_id: str | None
    created_at: datetime


def _notes() -> list[Note]:
    notes = []
    for t, (topic, texts) in enumerate(TOPICS.items()):
        for i, text in enumerate(texts):
            notes.append(Note(f"{topic}-{i}", text, 0.4 + 0.1 * i, topic if topic != "tax" else None,
                              T0 + timedelta(days=10 * t + i)))
    return notes


def test_three_clear_topics_give_three_insights_citing_their_sources(embedder: Embedder) -> None:
    notes = _notes()
    vectors = np.asarray(embedder.encode([n.content for n in notes]), dtype=np.float32)
    drafts = reflect_drafts(notes, vectors)
    assert len(drafts) == 3
    for d in drafts:
        topics = {source.split("-")[0] for source in d.source_ids}
        assert len(topics) == 1, d.source_ids  # every insight's sources come from one topic
        (topic,) = topics
        assert len(d.source_ids) == len(TOPICS[topic])
        assert 0.0 < d.confidence <= 1.0
        assert d.content.startswith(f"{len(d.source_ids)} memories about ")
        if topic != "tax":
            assert d.entity_id == topic and topic in d.topic
        else:
            assert d.entity_id is None and "tax" in d.topic  # no entity: the words the memories share
        quoted = [n for n in notes if n.id in d.source_ids and n.content in d.content]
        assert quoted, "the statement quotes its most central memories"
        assert d.span[0] < d.span[1]


def test_too_few_memories_or_no_structure_give_no_split(embedder: Embedder) -> None:
    notes = _notes()[:MIN_CLUSTER_SIZE - 1]
    vectors = np.asarray(embedder.encode([n.content for n in notes]), dtype=np.float32)
    assert cluster(vectors) == ([], 0)
    same = np.tile(vectors[:1], (6, 1))
    clusters, k = cluster(same)
    assert k == 1 and len(clusters) == 1 and len(clusters[0].members) == 6


def test_the_fingerprint_changes_with_the_sources_not_their_order() -> None:
    notes = _notes()[:4]
    assert fingerprint(notes) == fingerprint(list(reversed(notes)))
    assert fingerprint(notes) != fingerprint(notes[:3])
    revised = [replace(notes[0], content=notes[0].content + " Twice a day in a heatwave."), *notes[1:]]
    assert fingerprint(notes) != fingerprint(revised)


@pytest.mark.parametrize(("importances", "confidence", "expected"), [
    ([0.5, 0.5, 0.5], 0.5, 0.7 * 0.5 + 0.3 * 0.5 + np.log(4) / 10),
    ([1.0] * 10, 1.0, 1.0),  # capped
    ([0.0, 0.0, 0.0], 0.0, np.log(4) / 10),
])
def test_importance_is_hebbs_formula(importances: list[float], confidence: float, expected: float) -> None:
    assert importance_of(importances, confidence) == pytest.approx(expected, abs=1e-4)


def test_confidence_grows_with_cohesion_and_stays_in_range() -> None:
    values = [confidence_of(c) for c in (-1.0, 0.2, 0.4, 0.6, 0.9, 1.0)]
    assert values == sorted(values)
    assert values[0] == 0.0 and values[-1] == 1.0
