"""Structure version 10: goals told without a goal verb (a necessity, a deadline, a goal adjective), with the real
spaCy model. Sentences written for these tests, not taken from the evaluation sets."""

from __future__ import annotations

from typing import Any


def _event(ep: Any, lemma: str) -> Any:
    return next(e for e in ep.events if e.lemma == lemma)


def _relations(ep: Any, kind: str) -> list[tuple[str, str]]:
    return [(a, b) for k, a, b in ep.relations if k == kind]


def test_a_need_is_a_goal(extract: Any) -> None:
    ep = extract("She needed to pass the driving test. She failed it twice.")
    passing = _event(ep, "pass")
    assert passing.mode == "goal"
    assert (ep.events[-1].id, passing.id) in _relations(ep, "thwarts")
    assert not any(e.lemma == "need" for e in ep.events)  # the necessity frames its complement


def test_a_thing_needed_by_a_time_is_a_goal(extract: Any) -> None:
    # a passive "by Friday" is parsed as the agent; it is the deadline
    ep = extract("The new kitchen was needed by Friday. The tiles arrived broken, and the kitchen was not ready.")
    need = _event(ep, "need")
    assert need.mode == "goal"
    assert any(b == need.id for _, b in _relations(ep, "thwarts"))
    assert _event(extract("We needed the loan by the end of the month."), "need").mode == "goal"
    # a need with no deadline and no complement is no goal: "the paint needed a day to dry" says how long
    assert _event(extract("The paint needed a whole day."), "need").mode == ""


def test_had_to_with_a_deadline_is_a_goal(extract: Any) -> None:
    ep = extract("Omar had to deliver the flowers by noon. His van broke down on the bridge.")
    deliver = _event(ep, "deliver")
    assert deliver.mode == "goal"
    assert (_event(ep, "break_down").id, deliver.id) in _relations(ep, "thwarts")
    assert _event(extract("The team had to finish the bridge before the winter."), "finish").mode == "goal"
    # "had to" alone tells what happened next, not what someone aimed at
    assert _event(extract("The whole floor had to be sanded again."), "sand").mode == ""


def test_a_goal_adjective_frames_its_complement(extract: Any) -> None:
    ep = extract("Priya was determined to finish the climb before dark. Her rope snapped near the top.")
    finish = _event(ep, "finish")
    assert finish.mode == "goal"
    assert not any(e.lemma == "determined" for e in ep.events)  # the frame is no state of its own
    assert _event(extract("The boys were eager to win the cup."), "win").mode == "goal"
    # the adjective alone, without what was aimed at, stays a state
    assert any(e.lemma == "eager" for e in extract("The boys were eager.").events)


def test_a_promise_is_a_goal(extract: Any) -> None:
    ep = extract("The landlord promised to mend the heating before winter. He kept delaying it, and the old pipes "
                 "burst.")
    mend = _event(ep, "mend")
    assert mend.mode == "goal"
    assert any(b == mend.id for _, b in _relations(ep, "thwarts"))
    assert _event(extract("She vowed to finish the course."), "finish").mode == "goal"
