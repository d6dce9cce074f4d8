"""Structure version 13: kinds of choice told by what an act was for or what it stood in for, whatever its verb. An
act of a generic class done to save time or money is a shortcut (an omission, as a step skipped is); what was done
"instead of" something leaves that thing undone; keeping someone out of something is not letting them; a replacement
not made is an omission; phoning someone is communicating. With the real spaCy model; sentences written for these
tests, not taken from the evaluation sets."""

from __future__ import annotations

from typing import Any

import pytest

from engine.analogy.mapping import map_episodes


def _event(ep: Any, lemma: str) -> Any:
    return next(e for e in ep.events if e.lemma == lemma)


def _motivates(ep: Any) -> set[tuple[str, str]]:
    return {(a, b) for k, a, b in ep.relations if k == "motivates"}


@pytest.mark.parametrize(("text", "act", "saving"), [
    ("The crew poured the concrete in the frost to save a week.", "pour", "save"),  # time
    ("The landlord bought the cheapest boiler to cut costs.", "buy", "cut"),  # costs
    ("They saved money by hiring the smallest boat for the trip.", "hire", "save"),  # a saving made by an act
])
def test_an_act_done_to_save_time_or_money_is_a_shortcut_and_the_saving_its_purpose(
        extract: Any, text: str, act: str, saving: str) -> None:
    ep = extract(text)
    done, saved = _event(ep, act), _event(ep, saving)
    assert done.action == "omit"
    assert saved.mode == "purpose"
    assert (saved.id, done.id) in _motivates(ep)


def test_an_act_of_a_kind_of_its_own_keeps_it(extract: Any) -> None:
    ep = extract("She checked the brakes herself to save money.")
    assert _event(ep, "check").action == "prepare"  # a check done cheaply is still a check
    # spending less is no shortcut without an act that serves it
    assert all(e.action != "omit" for e in extract("The family saved money for a new car.").events)


def test_what_was_done_instead_of_something_leaves_it_undone(extract: Any) -> None:
    ep = extract("He spent the evening watching films instead of practising his speech.")
    practise = _event(ep, "practise")
    assert practise.action == "omit" and not practise.negated and practise.sign == 0
    assert _event(ep, "watch").action != "omit"  # what was done instead was done
    # "instead" alone (no "of") names nothing left undone here
    assert all(e.action != "omit" for e in extract("She walked to work instead.").events)


def test_a_shortcut_for_a_saving_maps_onto_a_step_skipped(extract: Any) -> None:
    cue = extract("The builders skipped the damp test on the new wall. Within a year the wall cracked.")
    saving = extract("The road crew laid the asphalt in the rain to save two days. Within a month the surface cracked.")
    other = extract("The road crew laid the asphalt in the rain to please the mayor. Within a month the surface "
                    "cracked.")
    # the asphalt laid to save two days is the skipped test's analog: it maps onto it as an act of the same kind
    # (before, "laid" was a start, a weak match), and the story as a whole maps better than the same story with the
    # act done for another end
    mapping = map_episodes(cue, saving)
    pairs = {(a, b): match for a, b, match in mapping.events}
    assert pairs.get((_event(cue, "skip").id, _event(saving, "lay").id), 0.0) >= 0.8  # the same kind of act
    assert mapping.score > map_episodes(cue, other).score


def test_keeping_someone_out_is_not_letting_them(extract: Any) -> None:
    # "kept the boy out of the matches" is a refusal, as "never let the boy play" is (before: `keep` read as care, a
    # preparation, so the two tellings of one choice fell in different classes)
    kept = _event(extract("The trainer kept the young rider out of every race that spring."), "keep")
    assert kept.action == "refuse"
    assert _event(extract("Her father never let her swim in the lake."), "let").action == kept.action
    assert _event(extract("The tarp kept the rain out of the tent."), "keep").action == "prevent"  # a thing kept out
    assert _event(extract("She kept the receipts in a drawer."), "keep").action not in ("refuse", "prevent")


def test_calling_someone_up_is_communicating(extract: Any) -> None:
    phoned = _event(extract("At last he phoned his old teacher."), "phone")
    assert phoned.action == _event(extract("At last she asked her old teacher."), "ask").action == "communicate"


def test_a_replacement_not_made_is_an_omission(extract: Any) -> None:
    # "did not replace the tyres" is a step left undone, as "did not check the tyres" is
    not_replaced = _event(extract("She did not replace the worn tyres before the trip."), "replace")
    assert not_replaced.action == "omit"
    assert not_replaced.action == _event(extract("He did not check the brakes before the trip."), "check").action
    assert _event(extract("She replaced the worn tyres before the trip."), "replace").action == "change"
