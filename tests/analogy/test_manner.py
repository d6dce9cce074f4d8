"""An act's manner says what kind of act it was (structure version 6), with the real spaCy model."""

from __future__ import annotations

from typing import Any


def _action(ep: Any, lemma: str) -> str:
    return next(e.action for e in ep.events if e.lemma == lemma)


def test_an_act_done_in_a_hurry_is_a_rush(extract: Any) -> None:
    assert _action(extract("On the morning of the wedding, he painted the fence in a hurry."), "paint") == "rush"
    assert _action(extract("She wrote the essay hastily the night before."), "write") == "rush"
    assert _action(extract("On the morning of the wedding, he painted the fence."), "paint") == "build"


def test_an_act_done_anyway_goes_against_advice(extract: Any) -> None:
    ep = extract("The captain told Omar that the opening had a trap. Omar played it anyway in the final.")
    assert _action(ep, "play") == "ignore_advice"
    assert _action(extract("Omar played it in the final."), "play") == "compete"


def test_a_manner_does_not_override_a_class_that_says_more(extract: Any) -> None:
    # failing is what happened, however hurried
    assert _action(extract("The bridge collapsed in a hurry of falling stones."), "collapse") == "fail"


def test_a_rushed_retelling_maps_onto_a_rushed_story_better_than_a_careful_one(extract: Any) -> None:
    from engine.analogy.mapping import map_episodes

    cue = extract("Elif put off her essay for weeks. The night before the deadline, she wrote it in a panic. "
                  "It was full of mistakes, and she got a low grade.")
    rushed = extract("Mr Novak kept postponing the job. On the morning of the wedding, he painted the fence in a "
                     "hurry. The paint was streaky, and the guests stained their clothes.")
    careful = extract("Mr Novak kept postponing the job. On the morning of the wedding, he painted the fence "
                      "slowly. The paint was streaky, and the guests stained their clothes.")
    assert map_episodes(cue, rushed).score > map_episodes(cue, careful).score
