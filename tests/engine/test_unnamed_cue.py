"""The unnamed-cue similarity signal and the episode boost's decay, on the real engine and model."""

from __future__ import annotations

import numpy as np
import pytest

from engine import MemoryEngine, build_request
from engine.errors import InvalidRecallError
from engine.recall.presets import PRESETS, FusionSettings
from engine.recall.unnamed import unnamed

# Maya's small talk in several sessions, and in one of them what she does on weekends.
TURNS = [
    ("Maya: Hi Leo! How have you been? Maya here, back from work.", "maya", 1),
    ("Leo: Good, thanks Maya. Busy week.", "leo", 1),
    ("Maya: Same here, Maya is always busy, you know me.", "maya", 1),
    ("Leo: I started a new job at the bank.", "leo", 2),
    ("Maya: Congrats! Maya is so happy for you.", "maya", 2),
    ("Maya: Every Saturday I go rock climbing and on Sundays I paint watercolours.", "maya", 3),
    ("Leo: That sounds relaxing.", "leo", 3),
    ("Maya: Talk soon, Leo! Maya has to run.", "maya", 4),
    ("Leo: Bye Maya!", "leo", 4),
]


def _store(engine: MemoryEngine) -> dict[str, str]:
    items = [{"content": t, "entity_id": e, "context": {"conversation": "c1", "session": s}} for t, e, s in TURNS]
    memories = engine.remember_many(items)
    engine.add_edges([(a.id, b.id, "followed_by") for a, b in zip(memories, memories[1:], strict=False)])
    return {m.content: m.id for m in memories}


def test_unnamed_removes_the_words_that_name_an_entity() -> None:
    assert unnamed("What activities does Melanie do?", ["melanie", "caroline"]) == "What activities does do?"
    assert unnamed("Where did Maya's brother go?", ["maya_smith"]) == "Where did brother go?"
    assert unnamed("What activities are popular?", ["melanie"]) is None  # names nobody
    assert unnamed("What did Melanie do?", ["melanie"]) is None  # nothing left to ask about


def _rank(engine: MemoryEngine, cue: str, memory_id: str, weight: float) -> int:
    fusion = {"weights": {**PRESETS["recommended"].fusion.weights, "similarity_unnamed": weight}}
    ranked = engine.recall(cue, preset="recommended", fusion=fusion, top_k=len(TURNS), scoring_weights="1:0:0:0")
    return [r.memory.id for r in ranked].index(memory_id)


def test_unnamed_follows_the_entities_it_is_given_each_time() -> None:
    """The name words are remembered for the tuple of entities last asked for: a new tuple (an entity came or
    went), even one equal to an older one, is read again, never answered from the last."""
    cue = "What did Zed say about boats?"
    before = ("ann_lee", "bob")
    assert unnamed(cue, before) is None and unnamed(cue, before) is None
    after = (*before, "zed")
    assert unnamed(cue, after) == "What did say about boats?"
    assert unnamed(cue, before) is None  # back to the earlier entities
    assert unnamed(cue, tuple(after)) == unnamed(cue, ["ann_lee", "bob", "zed"]) == "What did say about boats?"


def test_a_cue_naming_an_entity_ranks_the_relation_higher_with_the_signal(engine: MemoryEngine) -> None:
    ids = _store(engine)
    hobby = ids["Maya: Every Saturday I go rock climbing and on Sundays I paint watercolours."]
    cue = "What hobbies does Maya have?"
    assert _rank(engine, cue, hobby, 2.0) < _rank(engine, cue, hobby, 0.0)
    frame = engine.fusion_frame(build_request(cue, preset="recommended", top_k=len(TURNS)))
    plain = frame.raw[:, frame.signals.index("similarity")]
    asked = frame.raw[:, frame.signals.index("similarity_unnamed")]
    row = frame.pool.index(hobby)
    # Without the name the cue is closest to the memory that answers it, not to Maya's small talk.
    assert int(np.argmax(asked)) == row and int(np.argmax(plain)) != row
    top = engine.recall(cue, preset="recommended", top_k=3)
    sim = next(d for d in top[0].strategy_details if d.strategy.value == "similarity")
    assert {"unnamed_similarity", "z_similarity_unnamed"} <= set(sim.fields)


def test_a_cue_naming_nobody_gives_the_plain_similarity(engine: MemoryEngine) -> None:
    _store(engine)
    frame = engine.fusion_frame(build_request("rock climbing", preset="recommended", top_k=len(TURNS)))
    plain = frame.raw[:, frame.signals.index("similarity")]
    assert np.allclose(frame.raw[:, frame.signals.index("similarity_unnamed")], plain)


def test_episode_decay_lifts_an_episodes_best_members_more(engine: MemoryEngine) -> None:
    _store(engine)
    frame = engine.fusion_frame(build_request("Maya busy week", preset="recommended", top_k=len(TURNS)))
    flat = FusionSettings(weights={"similarity": 1.0}, episode_weight=0.5)
    decayed = FusionSettings(weights={"similarity": 1.0}, episode_weight=0.5, episode_decay=0.5)
    plain = frame.scores(FusionSettings(weights={"similarity": 1.0}))
    lift_flat, lift_decayed = frame.scores(flat) - plain, frame.scores(decayed) - plain
    for g in set(frame.group.tolist()):
        members = np.flatnonzero(frame.group == g)
        best = members[np.argmax(plain[members])]
        assert lift_decayed[best] == pytest.approx(lift_flat[best])  # the best keeps the whole share
        for n in members[members != best]:  # the others get less of the same (positive) boost
            assert abs(lift_decayed[n]) <= abs(lift_flat[n]) + 1e-12
    with pytest.raises(InvalidRecallError, match="episode_decay"):
        engine.recall("x", preset="recommended", fusion={"episode_decay": 2})
    assert build_request("x", preset="recommended", fusion={"episode_decay": 0.8}).fusion.episode_decay == 0.8
