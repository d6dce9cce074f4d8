"""Structure version 10: what a thing does is no omission, and a present-tense verb the small model reads as a noun,
with the real spaCy model. Sentences written for these tests, not taken from the evaluation sets."""

from __future__ import annotations

from typing import Any


def _event(ep: Any, lemma: str) -> Any:
    return next(e for e in ep.events if e.lemma == lemma)


def test_only_someone_omits(extract: Any) -> None:
    # a thing or an event that "cuts", "delays" or "drops" damaged, set back or went down
    cut = _event(extract("A falling tree cut the power cable."), "cut")
    assert cut.action == "harm" and cut.sign == -1
    assert _event(extract("The snowstorm delayed the last train."), "delay").action == "harm"
    fell = _event(extract("The share prices dropped."), "drop")
    assert fell.action == "decrease" and fell.sign <= 0
    # a person's cut or delay is still the omission it was
    assert _event(extract("The manager cut the safety checks."), "cut").action == "omit"
    assert _event(extract("Maria delayed the repairs."), "delay").action == "omit"
    # a place or an "it" may stand for the people in it: no change
    assert _event(extract("The bakery dropped its oldest supplier."), "drop").action == "omit"


def test_a_present_tense_verb_read_as_a_noun_is_an_event(extract: Any) -> None:
    # the small model reads "the old pipe bursts" as one noun phrase, "pipe" a compound of "bursts"
    ep = extract("Late that night the old pipe bursts.")
    burst = _event(ep, "burst")
    assert burst.sign == -1
    assert burst.text == "bursts"
    # a heading with no predicate stays no event
    assert not any(e.lemma == "figure" for e in extract("The sales figures.").events)


def test_a_gain_told_as_less_than_before_is_a_loss(extract: Any) -> None:
    for told, lemma in (("The farm earned less than ever that year.", "earn"),
                        ("The café sold fewer pies than last spring.", "sell"),
                        ("By March the shop was selling half as much as before.", "sell")):
        ev = _event(extract(told), lemma)
        assert ev.sign == -1 and ev.valence == "loss", told
    # more of it, or no amount at all, is still the gain
    assert _event(extract("The farm earned more than ever that year."), "earn").sign == 1
    assert _event(extract("The café sold its pies."), "sell").sign >= 0


def test_an_outcome_told_by_what_it_was_full_of_or_by_its_object(extract: Any) -> None:
    ep = extract("The report was full of errors, and the manager gave it a poor review.")
    assert _event(ep, "full").sign == -1
    assert _event(extract("Tomas got a poor score in the final test."), "get").sign == -1
    assert _event(extract("The bakery had a good month."), "have").sign == 1
    # full of something neither good nor bad says nothing
    assert _event(extract("The bucket was full of sand."), "full").sign == 0


def test_not_letting_someone_is_a_refusal(extract: Any) -> None:
    for told in ("The old farmer would not let his grandson drive the tractor.",
                 "The landlady never allowed pets in the flat."):
        ev = extract(told).events[0]
        assert ev.action == "refuse" and not ev.negated, told
    # letting is still enabling, and a light verb negated keeps its own reading
    assert extract("The farmer let his grandson drive the tractor.").events[0].action == "enable"
    assert _event(extract("The stall had never made a profit."), "make").action != "refuse"


def test_cutting_costs_is_a_saving_not_an_omission(extract: Any) -> None:
    saving = _event(extract("The school cut its heating bill by closing the top floor."), "cut")
    assert saving.action == "decrease" and saving.sign == 1
    # cutting a step is still the omission
    assert _event(extract("The builder cut the safety checks."), "cut").action == "omit"
    # a doer WordNet does not type as a person ("builder": first a soap additive) is still someone
    assert _event(extract("The builder delayed the roof."), "delay").action == "omit"
