"""Smoke of the analogy benchmark: it runs end to end on a few triads and writes well-shaped figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.analogy import analogy_eval


def test_analogy_eval_writes_every_method_and_split(tmp_path: Path, embedder: Any) -> None:
    out = tmp_path / "analogy.json"
    assert analogy_eval.main(["--limit", "3", "--quiet", "--out", str(out)], model=embedder) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["triads"] == 3 and report["candidates"] == 3 * 2 + 10
    assert set(report["results"]) == {"embedding", "bag a=0", "bag a=0.5", "mapper a=0", "mapper a=0.5"}
    for splits in report["results"].values():
        for figures in splits.values():
            assert 0 <= figures["true_above_false"] <= 1 and 0 < figures["mrr"] <= 1 and 0 <= figures["top1"] <= 1
    assert report["examples"] and "events" in report["examples"][0]["mapping"]


def test_the_shipped_set_is_big_enough() -> None:
    triads, distractors = analogy_eval.load(analogy_eval.HERE / "triads.json", analogy_eval.HERE / "distractors.txt")
    assert len(triads) >= 30 and len(distractors) >= 100
    assert {t["split"] for t in triads} == {"dev", "heldout"}
    assert all(t["true"] != t["false"] and t["cue"] for t in triads)


def test_the_story_sets_have_their_shape() -> None:
    """Every story set: five distinct stories per set, 4-10 sentences each; the second, third and fourth sets are
    never tuned on (the sixth, tune3, is a tune set written blind to the engine)."""
    import re

    for name, splits in (("stories.json", {"dev", "heldout"}), ("stories_extra.json", {"extra"}),
                         ("stories_new.json", {"new"}), ("stories_fresh.json", {"fresh"}),
                         ("stories_tune3.json", {"tune3"})):
        sets = json.loads((analogy_eval.HERE / name).read_text(encoding="utf-8"))["stories"]
        assert len({s["id"] for s in sets}) == len(sets) and {s["split"] for s in sets} == splits
        for s in sets:
            stories = [s[k] for k in ("base", "true", "false", "literal", "mere")]
            assert len(set(stories)) == 5
            for story in stories:
                assert 4 <= len(re.findall(r"[.!?](?:\s|$)", story)) <= 10, (s["id"], story)


def test_the_crowded_store_benchmark_counts_the_true_analog_with_and_without_the_plot_index() -> None:
    from benchmarks.analogy import crowded
    from engine.index.derived import DerivedIndexes

    original = DerivedIndexes.plot_index
    for with_index in (True, False):
        report = crowded.run(extra=20, plot_index=with_index, bases=2)
        assert report["plot_index"] is with_index and report["memories"] >= 212 + 20 - 1
        for figures in report["results"].values():
            assert figures["bases"] == 2 and 0 <= figures["true_first"] <= figures["true_in_top_k"] <= 2
            assert 0 <= figures["true_first_as_returned"] <= figures["true_in_top_k"]
        assert DerivedIndexes.plot_index is original  # the stand-in is gone again
