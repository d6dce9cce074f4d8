"""The agreement counts of `benchmarks/analogy/agreement.py` on hand-made events and episodes (no models)."""

from __future__ import annotations

from benchmarks.analogy.agreement import (
    Counts,
    agreeing_share,
    agreement,
    count_events,
    count_links,
    count_pairs,
    course,
    ending_sign,
    links,
    ranking,
    unclassed,
)
from engine.analogy.episode_graph import Episode, Event, Participant


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


def test_course_is_the_part_an_event_plays_not_its_verb() -> None:
    # a goal, an omission before a failure, a goal told later (not what the omission led to), the failure, a repair
    ep = Episode(events=[_ev(0, "win", "succeed", 1, 0, "goal"), _ev(1, "skip", "omit", 0, 1),
                         _ev(2, "launch", "start", 1, 1, "goal"), _ev(3, "crash", "fail", -1, 2),
                         _ev(4, "call", "communicate", 0, 3), _ev(5, "fix", "succeed", 1, 3)])
    c = course(ep)
    assert c["e0"] == ("goal", 1, -1) and c["e1"] == ("", 0, -1) and c["e2"] == ("goal", 1, -1)
    assert c["e3"] == ("", -1, 1) and c["e4"] == ("", 0, 1) and c["e5"] == ("", 1, 0)
    # another telling with other verbs and classes: the lapse before a failure agrees on its course, not its class
    other = Episode(events=[_ev(0, "forget", "other", 0, 0), _ev(1, "lose", "decrease", -1, 1)])
    counts = Counts()
    count_pairs(counts, [(ep.events[1], other.events[0]), (ep.events[3], other.events[1])], (c, course(other)))
    assert (counts.pairs, counts.same_class, counts.same_sign, counts.same_course) == (2, 0, 2, 1)
    assert counts.as_dict()["course"] == 0.5  # the crash led to a repair, the loss to nothing
    count_pairs(counts, [(ep.events[1], other.events[0])])  # no courses given: not counted as agreeing
    assert (counts.pairs, counts.same_course) == (3, 1)


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


def test_unclassed_counts_every_event_of_every_episode_given() -> None:
    a = Episode(events=[_ev(0, "skip", "omit"), _ev(1, "stay", "other"), _ev(2, "crash", "fail", -1)])
    b = Episode(events=[_ev(0, "stay", "other"), _ev(1, "close", "other")])
    events, classed, left = unclassed([a, b])
    assert (events, classed) == (5, 2)
    assert left.most_common() == [("stay", 2), ("close", 1)]


def test_agreement_maps_a_telling_onto_itself_in_full() -> None:
    base = Episode(events=[_ev(0, "skip", "omit", 0, 0), _ev(1, "crash", "fail", -1, 1)],
                   relations=[("causes", "e0", "e1")], sentences=[[0, 10], [11, 20]])
    other = Episode(events=[_ev(0, "neglect", "omit", 0, 0), _ev(1, "win", "succeed", 1, 1)],
                    relations=[("causes", "e0", "e1")], sentences=[[0, 10], [11, 20]])
    sets = [{"split": "dev", "base": "b", "literal": "b", "true": "t"}]
    out = agreement(sets, {"b": base, "t": other})["dev"]
    lit, true = out["literal"], out["true"]
    assert (lit.pairs, lit.same_class, lit.same_sign, lit.endings_signed, lit.endings_same) == (2, 2, 2, 1, 1)
    assert lit.same_course == 2
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


def test_ranking_by_agreement_alone_puts_the_telling_that_agrees_on_course_first() -> None:
    # the base: an omission that caused a crash; its true analog: another verb, unclassed, before a loss; its false
    # analog: the same two events told the other way round (the loss first, the lapse after it)
    base = Episode(events=[_ev(0, "skip", "omit", 0, 0), _ev(1, "crash", "fail", -1, 1)],
                   relations=[("causes", "e0", "e1")], sentences=[[0, 10], [11, 20]])
    true = Episode(events=[_ev(0, "forget", "other", 0, 0), _ev(1, "lose", "decrease", -1, 1)],
                   relations=[("causes", "e0", "e1")], sentences=[[0, 10], [11, 20]])
    false = Episode(events=[_ev(0, "lose", "decrease", -1, 0), _ev(1, "forget", "other", 0, 1)],
                    relations=[("precedes", "e0", "e1")], sentences=[[0, 10], [11, 20]])
    share = agreeing_share(base, true)
    assert share["course"] == 1.0 and share["class"] == 0.0  # both pairs play the same part; no class agrees
    assert agreeing_share(base, false)["course"] == 0.5  # the crash onto the loss only: the lapse led to nothing
    sets = [{"split": "dev", "base": "b", "literal": "b", "true": "t", "false": "f"}]
    ranks = ranking(sets, {"b": base, "t": true, "f": false})["dev"]
    assert ranks["course"].as_dict() == {"tasks": 1, "top1": 1, "mrr": 1.0}
    # by class the two stories tie at nothing: the tie counts half, so the true analog is not first
    assert ranks["class"].top1 == 0 and ranks["class"].reciprocal == 1 / 1.5
    assert ranks["mapper"].top1 == 1  # the mapper's causes chain and order put the true analog first


def _helped_twice(second: list[tuple[str, str, str]]) -> Episode:
    """Two acts of help with a failure between them; `second` gives the second act's roles."""
    return Episode(events=[_ev(0, "lend", "help", 0, 0), _ev(1, "break", "fail", -1, 1), _ev(2, "lend", "help", 0, 2)],
                   participants=[Participant("a", "person"), Participant("b", "person"), Participant("c", "artefact")],
                   roles=[("e0", "agent", "a"), ("e0", "recipient", "b"), ("e1", "agent", "c"), *second])


def test_links_say_who_did_what_to_whom_across_the_story() -> None:
    repaid = _helped_twice([("e2", "agent", "b"), ("e2", "recipient", "a")])  # the one helped helps back
    one_way = _helped_twice([("e2", "agent", "a"), ("e2", "recipient", "b")])  # the same helper twice
    assert links(repaid)[("e0", "e2")] == {("agent", "recipient"), ("recipient", "agent")}
    assert links(one_way)[("e0", "e2")] == {("agent", "agent"), ("recipient", "recipient")}
    assert ("e0", "e1") not in links(repaid)  # the broken thing is no one's in this telling: no link
    identity = [("e0", "e0"), ("e1", "e1"), ("e2", "e2")]
    c = Counts()
    count_links(c, identity, repaid, repaid)
    assert (c.linked, c.same_links) == (1, 1)
    count_links(c, identity, repaid, one_way)  # linked in both, the other way round: counted, not alike
    assert (c.linked, c.same_links) == (2, 1)
    assert c.as_dict()["links"] == 0.5
    # as a ranking score: the pairs linked alike over the larger story's pairs of events (3 here)
    assert agreeing_share(repaid, repaid)["links"] == 1 / 3
    assert agreeing_share(repaid, one_way)["links"] == 0.0
