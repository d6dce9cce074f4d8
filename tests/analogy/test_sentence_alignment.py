"""Parallel tellings aligned sentence by sentence (session 18), with the real spaCy model: a story and its analog
told step for step pair their sentences in order, and an event matched across sentences that do not correspond
counts half."""

from __future__ import annotations

from typing import Any

from engine.analogy.mapping import UNALIGNED_SENTENCES, aligned_sentences, event_match, map_episodes, self_score

CUE = ("Nina skipped the safety briefing before the climb. Halfway up the cliff, her rope jammed. "
       "She fell and broke her wrist.")
ANALOG = ("Omar ignored the storm warning before the crossing. Far from the coast, his engine failed. "
          "He drifted for a day and lost the boat.")
# the analog's failure told first: the jammed rope (the cue's second sentence) finds its like in the first
FAILURE_FIRST = ("Omar's engine failed far from the coast. He had ignored the storm warning before the crossing. "
                 "He drifted for a day and lost the boat.")


def _local(a: Any, b: Any) -> dict[tuple[str, str], float]:
    return {(x.id, y.id): s for x in a.events for y in b.events if (s := event_match(x, y)) > 0}


def test_a_story_and_its_analog_told_step_for_step_pair_their_sentences_in_order(extract: Any) -> None:
    cue, analog = extract(CUE), extract(ANALOG)
    pairs = aligned_sentences(cue, analog, _local(cue, analog))
    assert pairs == {(0, 0), (1, 1), (2, 2)}
    m = map_episodes(cue, analog, self_score(cue), self_score(analog))
    s1, s2 = ({e.id: e.sentence for e in ep.events} for ep in (cue, analog))
    assert m.events and all((s1[a], s2[b]) in pairs for a, b, _ in m.events)


def test_the_same_events_told_in_another_order_map_worse(extract: Any) -> None:
    cue, analog, failure_first = extract(CUE), extract(ANALOG), extract(FAILURE_FIRST)
    told = map_episodes(cue, analog, self_score(cue), self_score(analog))
    other = map_episodes(cue, failure_first, self_score(cue), self_score(failure_first))
    assert told.score > other.score
    # a pair across sentences that do not correspond keeps only part of its match
    pairs = aligned_sentences(cue, failure_first, _local(cue, failure_first))
    assert pairs is not None
    s1, s2 = ({e.id: e.sentence for e in ep.events} for ep in (cue, failure_first))
    full = {(x.id, y.id): event_match(x, y) for x in cue.events for y in failure_first.events}
    across = [(a, b, s) for a, b, s in other.events if (s1[a], s2[b]) not in pairs]
    assert across
    for a, b, s in across:
        assert s == round(UNALIGNED_SENTENCES * full[(a, b)], 3)
