"""The agreement counts of `benchmarks/analogy/agreement.py` on hand-made events and episodes (no models)."""

from __future__ import annotations

from benchmarks.analogy.agreement import Counts, agreement, count_events, count_pairs, ending_sign
from engine.analogy.episode_graph import Episode, Event


def _ev(i: int, lemma: str, action: str, sign: int = 0, sentence: int = 0, mode: str = "") -> Event:
    kind = None if not sign else ("success" if sign > 0 else "failure")
    return Event(f"e{i}", lemma, action, False, i, kind, sign, lemma, sentence, mode)


def test_pairs_agree_on_class_only_when_classed_and_on_sign_with_zero() -> None:
    c = Counts()
    count_pairs(c, [
        (_ev(0, "skip", "omit"), _ev(0, "neglect", "omit")),  # same class, both unsigned: both agree
        (_ev(1, "pack", "other"), _ev(1, "load", "other")),  # `other` twice is no class agreement; signs agree
        (_ev(2, "crash", "fail", -1), _ev(2, "win", "succeed", 1)),  # neither
        (_ev(3, "crash", "fail", -1), _ev(3, "lose", "decrease", -1)),  # sign only
    ])
    assert (c.pairs, c.same_class, c.same_sign) == (4, 1, 3)
    assert c.as_dict()["class"] == 0.25 and c.as_dict()["sign"] == 0.75


def test_ending_sign_is_the_last_sentences_last_signed_event_not_a_goal() -> None:
    ep = Episode(events=[_ev(0, "want", "want", 1, 0, "goal"), _ev(1, "crash", "fail", -1, 1),
                         _ev(2, "win", "succeed", 1, 1, "goal"), _ev(3, "pack", "other", 0, 1)],
                 sentences=[[0, 10], [11, 30]])
    assert ending_sign(ep) == -1
    ep.sentences.append([31, 40])  # a third sentence with no event: the story ends unsigned
    assert ending_sign(ep) == 0


def test_coverage_counts_each_episode_once() -> None:
    ep = Episode(events=[_ev(0, "skip", "omit"), _ev(1, "pack", "other"), _ev(2, "crash", "fail", -1)])
    c = Counts()
    count_events(c, ep)
    count_events(c, ep)
    assert (c.events, c.classed, c.signed) == (3, 2, 1)


def test_agreement_maps_a_telling_onto_itself_in_full() -> None:
    base = Episode(events=[_ev(0, "skip", "omit", 0, 0), _ev(1, "crash", "fail", -1, 1)],
                   relations=[("causes", "e0", "e1")], sentences=[[0, 10], [11, 20]])
    other = Episode(events=[_ev(0, "neglect", "omit", 0, 0), _ev(1, "win", "succeed", 1, 1)],
                    relations=[("causes", "e0", "e1")], sentences=[[0, 10], [11, 20]])
    sets = [{"split": "dev", "base": "b", "literal": "b", "true": "t"}]
    out = agreement(sets, {"b": base, "t": other})["dev"]
    lit, true = out["literal"], out["true"]
    assert (lit.pairs, lit.same_class, lit.same_sign, lit.endings_signed, lit.endings_same) == (2, 2, 2, 1, 1)
    # the true analog's outcome has the other sign: it cannot map onto the crash, and its ending disagrees
    assert true.same_class == 1 and true.endings_signed == 1 and true.endings_same == 0
    assert lit.events == 2 and true.events == 4


def test_the_control_maps_each_base_onto_the_next_sets_true_analog() -> None:
    one = Episode(events=[_ev(0, "skip", "omit", 0, 0), _ev(1, "crash", "fail", -1, 1)],
                  relations=[("causes", "e0", "e1")], sentences=[[0, 10], [11, 20]])
    two = Episode(events=[_ev(0, "win", "succeed", 1, 0)], sentences=[[0, 10]])
    sets = [{"split": "x", "base": "1", "literal": "1", "true": "1"}, {"split": "x", "base": "2", "literal": "2",
                                                                       "true": "2"}]
    control = agreement(sets, {"1": one, "2": two})["x"]["control"]
    # set 1's base onto set 2's true analog (a success: no pair with the crash), set 2's base onto set 1's
    assert control.sets == 2 and control.pairs == 2 and control.same_class == 0
    assert agreement(sets[:1], {"1": one})["x"]["control"].sets == 0  # one set: no other set to pair with
