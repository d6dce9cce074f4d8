"""Structure version 12: a causative ("made them rehearse", "had the players practise") frames the act it has someone
do, with the real spaCy model. Sentences written for these tests, not taken from the evaluation sets."""

from __future__ import annotations

from typing import Any


def _event(ep: Any, lemma: str) -> Any:
    return next(e for e in ep.events if e.lemma == lemma)


def _precedes(ep: Any) -> set[tuple[str, str]]:
    return {(a, b) for k, a, b in ep.relations if k == "precedes"}


def test_a_causative_hands_its_place_in_the_story_to_the_act(extract: Any) -> None:
    ep = extract("The old ferry had often run aground. The new captain made the crew check the charts every morning. "
                 "The ferry reached the island safely all year.")
    check = _event(ep, "check")
    assert check.action == "prepare"
    # the check is the story's middle step (before: an isolated event beside a "make" in the chain)
    assert not any(e.lemma == "make" for e in ep.events)
    assert (ep.events[0].id, check.id) in _precedes(ep)
    assert (check.id, _event(ep, "reach").id) in _precedes(ep)
    crew = next(p for p in ep.participants if p.text == "crew")
    assert (check.id, "agent", crew.id) in ep.roles  # the crew checked, not the captain


def test_have_someone_do_something(extract: Any) -> None:
    ep = extract("The coach had the players practise penalties every day. They won the shoot-out.")
    practise = _event(ep, "practise")
    assert practise.action == "prepare"
    assert not any(e.lemma == "have" for e in ep.events)
    assert (practise.id, _event(ep, "win").id) in _precedes(ep)


def test_a_role_given_is_no_act(extract: Any) -> None:
    # "made him captain": the small model reads the role noun as a bare infinitive; a person noun is not an act
    ep = extract("The club made him captain the next season.")
    assert any(e.lemma == "make" for e in ep.events)
    # a thing made, not someone made to act
    assert any(e.lemma == "make" for e in extract("She made them a cake.").events)
