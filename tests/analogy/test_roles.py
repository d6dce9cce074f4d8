"""Extraction with the real spaCy model: discourse cues, negation, passive voice, pronouns."""

from __future__ import annotations

from typing import Any

import pytest


def rels(ep: Any) -> set[tuple[str, str, str]]:
    """Relations as (kind, from lemma, to lemma)."""
    lemma = {e.id: e.lemma for e in ep.events}
    return {(k, lemma[a], lemma[b]) for k, a, b in ep.relations}


@pytest.mark.parametrize("text", [
    "The release crashed because the team skipped testing.",
    "Because the team skipped testing, the release crashed.",
    "The team skipped testing, so the release crashed.",
    "The team skipped testing. As a result, the release crashed.",
    "Testing was skipped by the team and as a result the release crashed.",
])
def test_cause_cues_give_the_same_direction(extract: Any, text: str) -> None:
    assert ("causes", "skip", "crash") in rels(extract(text))


def test_because_of_a_noun_makes_an_event(extract: Any) -> None:
    ep = extract("The harvest failed because of the drought.")
    assert ("causes", "drought", "fail") in rels(ep)


def test_but_contrasts_and_after_orders_events(extract: Any) -> None:
    planned = extract("They planned the trip carefully, but the bridge collapsed.")
    assert ("contrast", "plan", "collapse") in rels(planned)
    assert ("precedes", "hit", "die") in rels(extract("After the storm hit, the crops died."))


def test_purpose_motivates(extract: Any) -> None:
    assert ("motivates", "pass", "study") in rels(extract("He studied every night in order to pass the exam."))


def test_negation_folds_into_the_action(extract: Any) -> None:
    (did_not,) = extract("The team did not test the code.").events
    assert did_not.action == "omit" and not did_not.negated
    (not_skipped,) = extract("The team did not skip testing.").events
    assert not_skipped.action == "prepare"
    (forgot,) = [e for e in extract("She forgot to lock the door.").events if e.lemma == "lock"]
    assert forgot.action == "omit" and forgot.text == "not lock"  # what a negating verb says did not happen
    avoided = extract("The launch avoided the problems.").events[0]
    assert avoided.sign == 1  # avoiding problems is good news
    assert extract("The engine did not fail.").events[0].sign == 1


def test_passive_subject_is_the_patient_and_pronouns_resolve(extract: Any) -> None:
    ep = extract("The dog was bitten by the snake. It ran home.")
    types = {p.id: p.type for p in ep.participants}
    roles = {(r, types[p]) for e, r, p in ep.roles if e == ep.events[0].id}
    assert roles == {("patient", "animal"), ("agent", "animal")}  # "by the snake" is the agent
    dog = next(p for e, r, p in ep.roles if r == "patient")
    assert (ep.events[1].id, "agent", dog) in ep.roles  # "it" is the dog, the previous sentence's subject


@pytest.mark.parametrize("text", ["I will be there.", "Be careful!", "It is what it is.", "Hmm... ok", "Yes."])
def test_odd_sentences_never_fail(extract: Any, text: str) -> None:
    extract(text)  # chat turns of every shape are remembered; extraction must not raise


@pytest.mark.parametrize(("text", "state", "sign"), [
    ("Half the apples had gone soft on the trees.", "soft", 0),
    ("The roof became weak.", "weak", -1),
    ("The baby fell ill.", "ill", -1),
    ("Things got worse.", "bad", -1),
])
def test_verbs_of_becoming_tell_the_state_reached(extract: Any, text: str, state: str, sign: int) -> None:
    (event,) = extract(text).events
    assert (event.lemma, event.sign) == (state, sign)  # not a movement ("go") or a growth
    assert event.action != "move"


def test_where_a_competitor_finished_is_how_it_went(extract: Any) -> None:
    (last,) = extract("Kessler finished last in every regatta.").events
    assert (last.action, last.sign) == ("fail", -1)
    (first,) = extract("The team came first in the league.").events
    assert first.sign == 1
    assert extract("She went home.").events[0].lemma == "go"  # no state: still the movement
