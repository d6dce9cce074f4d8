"""plot_ceiling's counting on a tiny hand-made store (issue 31, session 24)."""

from __future__ import annotations

import pytest

from benchmarks.analogy.plot_ceiling import ceiling, parse, store_of, table, views

CLASSES = {"A": "GOOD", "B": "BAD", "C": "BAD", "D": "GOOD", "E": "GOOD", "X": "BAD", "Y": "GOOD", "Z": "BAD"}
SETS = {
    # a: its true analog shares the base exactly, and so does b's true analog: a tie of two
    "a": {"base": parse("A -> B -> C"), "true": parse("A -> B -> C"), "false": parse("C -> B -> A")},
    "b": {"base": parse("X -> Y"), "true": parse("A -> B -> C"), "false": parse("X -> Y -> Z")},
    # c: nobody shares A -> B -> D; three stories share its prefix A -> B
    "c": {"base": parse("A -> B -> D"), "true": parse("A -> B -> E"), "false": parse("Z")},
}
STORE = store_of(SETS)


def test_parse_strips_and_merges_repeats() -> None:
    assert parse(" A ->B-> B -> C ") == ("A", "B", "C")


def test_views() -> None:
    assert views(parse("A -> B -> C"), CLASSES) == {
        "exact": ("A", "B", "C"), "prefix": ("A", "B"), "coarse": ("GOOD", "BAD")}


def test_tie_with_another_sets_true_analog_halves_top1() -> None:
    got = ceiling(SETS["a"]["base"], "a", STORE, CLASSES, "exact")
    assert (got.same, got.own_true_shares, got.level_used, got.expected_top1) == (1, True, "exact", 0.5)
    assert got.designed_top1 == 0.5


def test_another_story_sharing_while_the_own_true_does_not_gives_zero() -> None:
    # a cue X -> Y -> Q for set b: nothing shares it exactly, b's false analog shares its prefix X -> Y, b's own
    # true analog (A -> B -> C) does not
    got = ceiling(parse("X -> Y -> Q"), "b", STORE, CLASSES, "exact")
    assert got.level_used == "prefix" and got.expected_top1 == 0.0 and not got.own_true_shares


def test_falls_back_to_the_prefix_when_nothing_matches_exactly() -> None:
    got = ceiling(SETS["c"]["base"], "c", STORE, CLASSES, "exact")
    assert got.same == 0 and not got.own_true_shares and got.designed_top1 == 1.0
    assert got.level_used == "prefix" and got.expected_top1 == pytest.approx(1 / 3)
    looser = ceiling(SETS["c"]["base"], "c", STORE, CLASSES, "prefix")
    assert looser.same == 2 and looser.own_true_shares and looser.expected_top1 == pytest.approx(1 / 3)


def test_nothing_shared_at_any_level_is_a_random_pick_among_everything_stored() -> None:
    got = ceiling(parse("Q"), "b", STORE, CLASSES, "exact", distractors=4)
    assert got.level_used == "none" and got.expected_top1 == pytest.approx(1 / (len(STORE) + 4))


def test_table_means_per_split() -> None:
    result = table(SETS, {"a": "dev", "b": "heldout", "c": "dev"}, CLASSES)
    dev = result["summary"]["dev"]
    assert dev["n"] == 2
    assert dev["exact_top1"] == pytest.approx(round((0.5 + 1 / 3) / 2, 3))
    assert dev["exact_own_true_shares"] == 0.5
    assert result["summary"]["all"]["n"] == 3
