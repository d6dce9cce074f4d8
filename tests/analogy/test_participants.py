"""Participants followed across sentences with the real spaCy model: names, pronouns that agree in number
with what they point to, and the teller ("I", "we") kept apart from everyone named; since structure version 11
(session 24) pronouns that agree in gender with what a noun, a title or an earlier pronoun says, owners ("Ana's
sink") a later pronoun can find, a role noun in apposition to a name, and a name the tagger read as a noun."""

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


def test_a_name_with_a_role_noun_in_apposition_is_named_by_it_later(extract: Any) -> None:
    """ "Abdul, the office manager,": "the manager" is Abdul from then on (structure version 11, session 24)."""
    ep = extract("Abdul, the office manager, trained his assistant. In winter the manager fell ill.")
    ill = next(e.lemma for e in ep.events if e.text.startswith("fell"))
    assert _who(ep, "train") == _who(ep, ill) == "Abdul"


def test_a_name_the_tagger_reads_as_a_common_noun_is_still_the_name(extract: Any) -> None:
    """The small model tags "Ravi" as a noun at the start of this sentence; it stays the Ravi named before."""
    ep = extract("Sam lent his notes to Ravi when Ravi was ill. Ravi lent Sam his own bike, so Sam arrived on time.")
    ravi = [p for p in ep.participants if p.text == "Ravi"]
    assert len(ravi) == 1
    lent = [e.id for e in ep.events if e.lemma == "lend"]
    assert (lent[0], "recipient", ravi[0].id) in ep.roles and (lent[1], "agent", ravi[0].id) in ep.roles


def test_a_pronoun_never_points_to_someone_of_the_other_gender(extract: Any) -> None:
    """ "her son" is a he: "she" is Anna, the most recent person or not."""
    ep = extract("Anna never let her son cycle on the road because she feared accidents.")
    assert _who(ep, "fear") == "Anna"


def test_a_pronoun_prefers_someone_known_to_have_its_gender(extract: Any) -> None:
    """ "Mrs" says Ivanova is a she; the plumber's gender is not told, so "she" is Ivanova, not the subject before."""
    ep = extract("The plumber tells Mrs Ivanova that her boiler pipe is cracked. She shrugs and says it can wait.")
    assert _who(ep, "shrug") == _who(ep, "say") == "Mrs Ivanova"


def test_an_owner_named_is_someone_a_later_pronoun_can_find(extract: Any) -> None:
    """ "Ana's kitchen sink": Ana is a participant, so "she" is Ana, not a new someone."""
    ep = extract("A small drip started under Ana's kitchen sink. She noticed it.")
    assert _who(ep, "notice") == "Ana"
    ep = extract("Tom's coach warned him about his shoes. Tom ignored the advice.")
    assert _who(ep, "warn", "patient") == _who(ep, "ignore") == "Tom"


def test_a_possessive_tells_its_owners_gender(extract: Any) -> None:
    """ "Sam lost her keys": Sam is a she (the doer owns the keys), so "she" is Sam, not Alex, named last."""
    ep = extract("Sam lost her keys at the station. Alex found them. She thanked the guard.")
    assert _who(ep, "thank") == "Sam"
