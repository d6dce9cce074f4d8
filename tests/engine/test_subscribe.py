"""The subscription rules: chunks by sentence end, word count and pause; each memory pushed once; bounded."""

from __future__ import annotations

import pytest

from engine.errors import ValidationError
from engine.subscribe import MAX_CHUNK_CHARS, Chunker, ChunkRule, Stream


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_sentence_end_completes_a_chunk_even_when_fed_word_by_word() -> None:
    chunker = Chunker(ChunkRule(max_tokens=100), clock=Clock())
    out: list[str] = []
    for word in ["We", "deployed", "on", "Friday.", "Then", "the", "database", "ran", "out", "of", "disk"]:
        out += chunker.feed(word + " ")
    assert out == ["We deployed on Friday."]
    assert chunker.flush() == "Then the database ran out of disk"
    assert chunker.flush() is None


def test_a_long_run_without_punctuation_is_cut_at_max_tokens() -> None:
    chunker = Chunker(ChunkRule(max_tokens=5), clock=Clock())
    chunks = chunker.feed("one two three four five six seven eight nine ten eleven")
    assert chunks == ["one two three four five", "six seven eight nine ten"]
    assert chunker.flush() == "eleven"


def test_a_pause_completes_what_is_pending() -> None:
    clock = Clock()
    chunker = Chunker(ChunkRule(pause_seconds=2.0), clock=clock)
    assert chunker.feed("the staging database") == []
    clock.now += 1.0
    assert chunker.due() is None
    clock.now += 1.5
    assert chunker.due() == "the staging database"
    assert chunker.due() is None


def test_sentence_ends_can_be_switched_off() -> None:
    chunker = Chunker(ChunkRule(sentence_end=False, max_tokens=50), clock=Clock())
    assert chunker.feed("A. B. C.") == []
    assert chunker.flush() == "A. B. C."


def test_a_huge_piece_without_spaces_is_still_cut() -> None:
    chunker = Chunker(ChunkRule(sentence_end=False), clock=Clock())
    chunks = chunker.feed("x" * (MAX_CHUNK_CHARS * 2 + 10))
    assert [len(c) for c in chunks] == [MAX_CHUNK_CHARS, MAX_CHUNK_CHARS]


def test_each_memory_is_pushed_once_and_only_over_the_threshold() -> None:
    stream: Stream[str] = Stream(threshold=0.5)
    first = stream.offer([("a", "A", 0.9), ("b", "B", 0.4), ("c", "C", 0.5)])
    assert [(p.item, p.sequence) for p in first] == [("A", 1), ("C", 2)]
    again = stream.offer([("a", "A", 0.95), ("b", "B", 0.7)])
    assert [(p.item, p.sequence) for p in again] == [("B", 3)]
    assert [p.item for p in stream.take()] == ["A", "C", "B"]
    assert stream.take() == []


def test_a_slow_reader_gets_a_bounded_queue_and_a_drop_count() -> None:
    stream: Stream[int] = Stream(threshold=0.0, queue_size=3)
    stream.offer((f"m{i}", i, 1.0) for i in range(5))
    assert stream.dropped == 2
    assert [p.item for p in stream.take(limit=2)] == [0, 1]
    # a dropped memory was never delivered, so it can still be pushed later
    assert [p.item for p in stream.offer([("m3", 3, 1.0)])] == [3]


@pytest.mark.parametrize("kwargs", [{"threshold": 1.5}, {"threshold": True}, {"queue_size": 0},
                                    {"queue_size": 10**6}])
def test_bad_stream_settings_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Stream(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [{"max_tokens": 0}, {"max_tokens": 2.5}, {"pause_seconds": 0},
                                    {"pause_seconds": float("nan")}])
def test_bad_chunk_rules_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ChunkRule(**kwargs)  # type: ignore[arg-type]
