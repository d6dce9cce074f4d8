"""The fifth story set's shape (issue 31, session 25): `stories_fresh2.json` and its skeletons in `plots_fresh2.json`.

The set is a measuring instrument nobody tunes on, so these checks are about how it was written, not about the
engine: five stories a set, 4-8 sentences each, unique ids, a false analog that borrows the true analog's words and a
true analog that does not borrow the base's, and a causal skeleton for every base, true and false analog in
plots.json's vocabulary.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks.analogy.plot_ceiling import parse

HERE = Path(__file__).resolve().parents[2] / "benchmarks" / "analogy"
KINDS = ("base", "true", "false", "literal", "mere")
# a sentence ends at . ! or ? (a closing quote may follow) before a space or the end of the text
SENTENCE_END = re.compile(r"[.!?]['\"]?(?:\s|$)")
_STOPWORDS = """
a an the and or but so of to in on at by for with from into onto out up down over under than then that this these
those it its is are was were be been being he she they them their his her him i me my we our you your who whom which
what when where while as if not no nor only also all any each every some more most other such own same too very can
could would should will shall may might must do does did done have has had having there here about after before again
against once off because until during through above below between both few just now one two three four five six
"""
STOPWORDS = frozenset(_STOPWORDS.split())
# how much of the true analog's vocabulary the false analog reuses (at least) and the base shares (at most)
FALSE_SHARES_AT_LEAST = 0.5
BASE_SHARES_AT_MOST = 0.2


def sentences(text: str) -> int:
    return len(SENTENCE_END.findall(text))


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-zà-ÿ]+", text.lower()) if len(w) > 2 and w not in STOPWORDS}


def shared(of: str, with_: str) -> float:
    """The share of `of`'s content words that `with_` uses too."""
    mine = content_words(of)
    return len(mine & content_words(with_)) / len(mine)


@pytest.fixture(scope="module")
def sets() -> list[dict[str, Any]]:
    data = json.loads((HERE / "stories_fresh2.json").read_text(encoding="utf-8"))
    assert "never tuned on" in data["about"].lower()
    return list(data["stories"])


def test_the_helpers_count_what_they_say() -> None:
    assert sentences("'Bring them at eight,' Kofi said. She said, 'Yes.' Then she left.") == 3
    assert sentences("'Can you come?' she asked.") == 2  # simple: a quoted question ends a sentence too
    assert sentences("Love, Owen.") == 1 and sentences("no end") == 0
    assert content_words("The oven ran hot, and the chef ignored it.") == {"oven", "ran", "hot", "chef", "ignored"}
    assert shared("The oven ran hot.", "A hot oven.") == pytest.approx(2 / 3)


def test_every_set_has_five_distinct_stories_of_four_to_eight_sentences(sets: list[dict[str, Any]]) -> None:
    assert len(sets) >= 24
    assert len({s["id"] for s in sets}) == len(sets)
    assert all(re.fullmatch(r"g\d\d", s["id"]) and s["split"] == "fresh2" and s["domain"] for s in sets)
    for s in sets:
        stories = [s[k] for k in KINDS]
        assert len(set(stories)) == 5, s["id"]
        for kind, story in zip(KINDS, stories, strict=True):
            assert 4 <= sentences(story) <= 8, (s["id"], kind, sentences(story))


def test_the_false_analog_borrows_the_true_analogs_words_and_the_true_analog_not_the_bases(
        sets: list[dict[str, Any]]) -> None:
    for s in sets:
        assert shared(s["true"], s["false"]) >= FALSE_SHARES_AT_LEAST, s["id"]
        assert shared(s["true"], s["base"]) <= BASE_SHARES_AT_MOST, s["id"]
        # the mere-appearance story keeps the base's surface, so it shares more with the base than the true analog does
        assert shared(s["base"], s["mere"]) > shared(s["base"], s["true"]), s["id"]


def test_every_story_is_labelled_in_the_vocabulary(sets: list[dict[str, Any]]) -> None:
    plots = json.loads((HERE / "plots_fresh2.json").read_text(encoding="utf-8"))
    vocabulary = json.loads((HERE / "plots.json").read_text(encoding="utf-8"))["vocabulary"]
    assert plots["vocabulary"] == vocabulary
    assert set(plots["sets"]) == {s["id"] for s in sets}
    for sid, labels in plots["sets"].items():
        skeletons = {k: parse(labels[k]) for k in ("base", "true", "false")}
        assert all(set(sk) <= set(vocabulary) for sk in skeletons.values()), sid
        # the set's design: the true analog tells the base's plot, the false analog another
        assert skeletons["base"] == skeletons["true"] != skeletons["false"], sid
