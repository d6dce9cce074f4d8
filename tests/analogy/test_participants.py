"""Participants followed across sentences with the real spaCy model: names, pronouns that agree in number
with what they point to, and the teller ("I", "we") kept apart from everyone named."""

from __future__ import annotations

from typing import Any


def _who(ep: Any, lemma: str, role: str = "agent") -> str:
    """The text of the participant in `role` of the event with `lemma`."""
    event = next(e for e in ep.events if e.lemma == lemma)
    texts = {p.id: p.text for p in ep.participants}
    return next(texts[p] for e, r, p in ep.roles if e == event.id and r == role)


def test_he_points_past_a_plural_noun_to_the_person_named(extract: Any) -> None:
    ep = extract("Mr. Haskins grew apples. Every autumn he hired pickers. This year he wanted to save money.")
    assert _who(ep, "save") == "Haskins"  # not "pickers", the most recent person-like noun


def test_they_prefers_the_plural_participant(extract: Any) -> None:
    ep = extract("The coach met the rowers at dawn. They complained about the cold.")
    assert _who(ep, "complain") == "rowers"


def test_the_teller_is_one_participant_never_resolved_to_someone_named(extract: Any) -> None:
    ep = extract("Our drummer kept telling me the amplifier was broken. I ignored him.")
    teller = {p.id for p in ep.participants if p.text == "i"}
    assert len(teller) == 1  # "me" and "I" are the same participant
    ignored = next(e for e in ep.events if e.lemma == "ignore")
    assert (ignored.id, "agent", teller.pop()) in ep.roles
    assert _who(ep, "ignore", "patient") == "Our drummer"  # "him": the drummer, not the teller


def test_kept_doing_frames_the_act_it_repeats(extract: Any) -> None:
    ep = extract("He kept putting off the repair.")
    assert [e.lemma for e in ep.events] == ["put_off"]  # the repeated act, not an event "keep"


def test_a_pronoun_is_not_the_object_of_its_own_clause(extract: Any) -> None:
    ep = extract("The lead actor had not learned his lines. He told the director that he was ready.")
    assert _who(ep, "tell") == "lead actor"  # the director is told; "he" is someone else
    assert _who(ep, "tell", "patient") == "director"


def test_they_prefers_a_group_to_a_single_person(extract: Any) -> None:
    ep = extract("The village choir had never won anything. Its new conductor made them rehearse all winter. "
                 "They won first prize.")
    assert _who(ep, "win") == "village choir"


def test_a_name_with_a_title_is_a_person_with_or_without_the_title(extract: Any) -> None:
    """The small model types "Nurse Okafor" as a place and "Mr Novak" as an organisation (structure version 6)."""
    ep = extract("Nurse Okafor noticed that a monitor kept flickering. Okafor called the technicians.")
    nurse = [p for p in ep.participants if "Okafor" in p.text]
    assert len(nurse) == 1 and nurse[0].type == "person"  # one participant, a person
    assert _who(ep, "notice") == _who(ep, "call") == "Nurse Okafor"
    ep = extract("Mr Novak painted the fence. Novak was proud of it.")
    assert [p.type for p in ep.participants if "Novak" in p.text] == ["person"]


def test_a_name_without_a_title_keeps_its_type(extract: Any) -> None:
    ep = extract("Google hired Priya. Google grew quickly.")
    assert {p.type for p in ep.participants if p.text == "Google"} == {"organisation"}
