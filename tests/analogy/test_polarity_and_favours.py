"""Structure version 14: a bad thing said not to have happened ("without a single error", "not one customer
complained", "no harm was done") makes the act a success, not a failure or an omission; an act done for someone
("baked a cake for her") is a favour (help); an object pronoun is never its own clause's subject ("the nurse
thanked her": not the nurse). With the real spaCy model; sentences written for these tests, not taken from the
evaluation sets."""

from __future__ import annotations

from typing import Any


def _event(ep: Any, lemma: str) -> Any:
    return next(e for e in ep.events if e.lemma == lemma)


def _holder(ep: Any, event: Any, role: str) -> str:
    """The text of the participant that holds `role` in `event` (its first mention's words)."""
    pid = next(p for e, r, p in ep.roles if e == event.id and r == role)
    return next(p.text for p in ep.participants if p.id == pid)


# --- polarity ------------------------------------------------------------------------------------------------


def test_without_a_bad_thing_the_act_went_well(extract: Any) -> None:
    ep = extract("At the county show the band played without a single error.")
    play = _event(ep, "play")
    assert (play.valence, play.sign) == ("success", 1)
    # no omission and no failure: nothing was left undone and nothing went wrong
    assert not any(e.action == "omit" or e.sign < 0 for e in ep.events)
    ep = extract("The removal men moved the piano without a hitch.")
    assert _event(ep, "move").sign == 1
    assert not any(e.sign < 0 for e in ep.events)


def test_without_something_good_or_neutral_is_still_an_omission(extract: Any) -> None:
    ep = extract("The clerk filed the report without a review.")
    assert any(e.action == "omit" and e.text == "without review" for e in ep.events)
    assert _event(ep, "file").sign == 0


def test_a_negated_subject_cancels_a_failure(extract: Any) -> None:
    ep = extract("Not one guest complained about the food.")
    complain = _event(ep, "complain")
    assert complain.sign == 1
    ep = extract("Not a single seedling died during the frost.")
    assert _event(ep, "die").sign == 1


def test_a_light_verb_in_the_passive_reads_its_subject(extract: Any) -> None:
    # "no harm was done", "no errors were made": what was done or made is the passive subject
    ep = extract("No harm was done to the old barn.")
    assert _event(ep, "do").sign == 1
    ep = extract("No errors were made in the accounts.")
    assert _event(ep, "make").sign == 1
    # and unnegated, the failure stays one
    assert _event(extract("Errors were made in the accounts."), "make").sign == -1


# --- favours -------------------------------------------------------------------------------------------------


def test_an_act_done_for_someone_is_a_favour(extract: Any) -> None:
    ep = extract("Tomasz fixed the fence for his neighbour.")
    fix = _event(ep, "fix")
    assert fix.action == "help"
    assert _holder(ep, fix, "recipient") == "his neighbour"
    assert _event(extract("She baked a birthday cake for them."), "bake").action == "help"


def test_for_a_purpose_or_what_was_awaited_is_no_favour(extract: Any) -> None:
    assert _event(extract("Tomasz fixed the fence for the winter."), "fix").action != "help"
    assert _event(extract("Tomasz waited for his neighbour."), "wait").action != "help"
    assert _event(extract("Tomasz fixed the fence for himself."), "fix").action != "help"


def test_a_name_for_a_day_or_a_place_is_no_one_a_favour_is_for(extract: Any) -> None:
    """Version 15: a proper noun after "for" is someone only when the tagger does not say it names a date, a feast
    or a place ("for Saturday"); a name it tags as a person, or leaves untagged, still is."""
    assert _event(extract("Nadia fixed the fence for Saturday."), "fix").action != "help"
    assert _event(extract("Nadia fixed the fence for Tomas."), "fix").action == "help"


# --- object pronouns -----------------------------------------------------------------------------------------


def test_an_object_pronoun_is_not_its_own_clause_subject(extract: Any) -> None:
    ep = extract("Ingrid could not open the jar. The old woman next door came round. "
                 "The old woman showed her a trick.")
    show = _event(ep, "show")
    assert _holder(ep, show, "agent") == "old woman"
    # before: "her" was the old woman, the woman named last, and the agent role was lost
    assert _holder(ep, show, "recipient") == "Ingrid"


def test_a_named_subject_is_never_its_object_pronoun(extract: Any) -> None:
    ep = extract("Marta met the new girl at the bus stop. The girl thanked her warmly.")
    thank = _event(ep, "thank")
    assert _holder(ep, thank, "agent") == "new girl"
    assert _holder(ep, thank, "patient") == "Marta"


def test_a_third_person_pronoun_is_never_the_teller(extract: Any) -> None:
    # once an object pronoun has the subject read first, "she" must not fall back on "I" (nor "everyone" before)
    ep = extract("I stood up to give my talk at the dinner. Everyone laughed at the first joke.")
    me = next(p.id for p in ep.participants if p.text == "i")
    laugh = _event(ep, "laugh")
    assert not any(e == laugh.id and p == me for e, r, p in ep.roles)
    ep = extract("That spring I posted the seeds to my aunt. A month later she sent me a photo of her roses.")
    send = _event(ep, "send")
    assert _holder(ep, send, "agent") != "i"
    assert _holder(ep, send, "recipient") == "i"
