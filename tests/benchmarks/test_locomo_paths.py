"""The path users run (benchmarks/locomo_paths.py): session-level hit@k and the aggregate beside R@k."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from benchmarks import locomo, locomo_paths


def test_a_session_hit_needs_any_turn_of_an_evidence_session() -> None:
    assert locomo_paths.session_hit(["D3:9", "D1:2"], ["D3:4"]) == 1.0  # another turn of session 3
    assert locomo_paths.session_hit(["D31:4"], ["D3:4"]) == 0.0  # session 31 is not session 3
    assert locomo_paths.session_hit([], ["D2:1"]) == 0.0
    assert locomo_paths.session_hit(["D1:1"], []) == 1.0  # no evidence counts as 1, as in R@k


def test_scores_stop_at_the_paths_top_k_and_aggregate_per_split() -> None:
    got = ["D1:1", "D2:5", *[f"D9:{n}" for n in range(20)]]
    first = locomo_paths.score("conv-26", 1, got, ["D2:5", "D4:1"], top_k=10)
    assert first.recall == {5: 0.5, 10: 0.5} and first.hit == {5: 1.0, 10: 1.0}
    second = locomo_paths.score("conv-44", 4, got, ["D4:1"], top_k=10)
    report = locomo_paths.report({"p": [first, second]})["p"]
    assert report["tune"]["R@10"] == 0.5 and report["heldout"]["R@10"] == 0.0
    assert report["all"]["hit@5"] == 0.5 and report["all"]["R@25"] is None
    assert report["all"]["R@10 by category"]["1 multi-hop"] == 0.5


def _conversation(sample_id: str) -> locomo.Conversation:
    """A small conversation in LoCoMo's shape: two sessions, one question whose evidence is one turn."""
    start = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    said = [
        (1, "Caroline", "I adopted a greyhound named Biscuit from the shelter last week."),
        (1, "Melanie", "Congratulations! How is the house with a dog in it?"),
        (2, "Melanie", "I finished painting the sunrise over the lake, my best canvas so far."),
        (2, "Caroline", "The colours of that lake painting are lovely."),
    ]
    turns = tuple(
        locomo.Turn(f"D{s}:{n}", who, f"{who}: {text}", s, n, start + timedelta(days=7 * (s - 1), seconds=n), text)
        for n, (s, who, text) in enumerate(said)
    )
    question = locomo.Question("What is the name of the dog Caroline adopted?", 4, ("D1:0",))
    return locomo.Conversation(sample_id, ("Caroline", "Melanie"), turns, (question,))


@pytest.mark.slow
def test_the_cli_path_indexes_and_recalls_through_the_real_cli_per_half() -> None:
    scores = locomo_paths.cli_path([_conversation("conv-26"), _conversation("conv-44")], questions=1)
    report = locomo_paths.report(scores)[locomo_paths.CLI_PATH]
    assert report["tune"]["questions"] == report["heldout"]["questions"] == 1
    assert report["all"]["R@5"] == 1.0  # the one turn that names the dog is found, in each half's store
    assert report["all"]["R@25"] is None  # the CLI's default top_k is 10


def test_the_cli_paths_baseline_keeps_the_same_questions_of_another_path() -> None:
    convs = [_conversation(c) for c in ("conv-30", "conv-26", "conv-44", "conv-47")]
    # each conversation's questions in order; the category numbers them here
    scores = [locomo_paths.score(c, n, [], [], top_k=10) for c in ("conv-26", "conv-44", "conv-47") for n in (1, 2, 3)]
    kept = locomo_paths.on_cli_questions(scores, convs, questions=2)
    # the CLI asks the first conversation of each half present (conv-30, conv-44): conv-30 has no scores here
    assert [(s.conversation, s.category) for s in kept] == [("conv-44", 1), ("conv-44", 2)]
