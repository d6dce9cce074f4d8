"""The offline contradiction checks on statements written for these tests (not from the labelled set)."""

from __future__ import annotations

import pytest

from benchmarks.contradictions.evaluate import load_pairs, score
from engine.contradictions import detect_pairs
from engine.contradictions.lexicon import opposite


@pytest.mark.parametrize(("older", "newer", "reason"), [
    ("The printer on floor two works.", "The printer on floor two doesn't work.", "negation"),
    ("Hugo owns a bicycle.", "Hugo does not own a bicycle.", "negation"),
    ("The meeting was cancelled.", "The meeting was confirmed.", "opposites"),
    ("The pharmacy is open on Sundays.", "The pharmacy is closed on Sundays.", "opposites"),
    ("The tank holds 60 litres.", "The tank holds 45 litres.", "values"),
    ("The conference starts on Tuesday.", "The conference starts on Thursday.", "values"),
])
def test_contradictions_are_found_with_their_reason(older: str, newer: str, reason: str) -> None:
    (finding,) = detect_pairs([(older, newer)])
    assert finding is not None and finding.verdict == "contradiction"
    assert finding.reason == reason
    assert 0.0 < finding.confidence < 1.0


@pytest.mark.parametrize(("older", "newer"), [
    ("Hugo lives in Ghent.", "Hugo no longer lives in Ghent; he moved to Leuven."),
    ("The newsletter goes out on Mondays.", "The newsletter moved to Fridays."),
    ("Petra drives a diesel car.", "Petra switched from a diesel car to an electric one."),
])
def test_a_statement_that_says_it_changed_is_a_revision(older: str, newer: str) -> None:
    (finding,) = detect_pairs([(older, newer)])
    assert finding is not None and finding.verdict == "revision"


@pytest.mark.parametrize(("older", "newer"), [
    ("Hugo owns a bicycle.", "Hugo rides his bicycle to work."),  # elaboration
    ("The tank holds 60 litres.", "The tank was installed in 2019."),  # another attribute
    ("Hugo is 40 years old.", "Hugo's daughter is 12 years old."),  # another subject
    ("The shop opens at 9.", "The shop closes at 18:00."),  # two attributes, opposite verbs
    ("The team moved the servers to Frankfurt.", "The team hired two engineers."),
])
def test_compatible_statements_give_no_candidate(older: str, newer: str) -> None:
    assert detect_pairs([(older, newer)]) == [None]


def test_opposites_come_from_the_list_and_from_negating_prefixes() -> None:
    assert opposite("win", "lose") and opposite("lose", "win")
    assert opposite("honest", "dishonest") and opposite("available", "unavailable")
    assert not opposite("win", "win") and not opposite("cat", "dog")
    assert not opposite("in", "inn")  # a prefix only counts before a real stem


def test_the_labelled_set_is_split_and_the_tune_half_is_not_regressed() -> None:
    pairs = load_pairs()
    assert len(pairs) >= 150
    assert {p.label for p in pairs} == {"contradiction", "revision", "compatible"}
    halves = {p.split for p in pairs}
    assert halves == {"tune", "heldout"}
    result = score([p for p in pairs if p.split == "tune"])
    candidate = result["candidate"]
    assert isinstance(candidate, dict)
    assert candidate["precision"] >= 0.9 and candidate["recall"] >= 0.85
