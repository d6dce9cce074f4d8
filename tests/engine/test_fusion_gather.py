"""A fused recall's embeddings gathered on a thread of their own while the frame reads the rest
(engine/recall/fusion.py `_meanwhile`): the same frame as gathered in line, inline when every gathering thread is
busy, an error in the gathering surfaces where the embeddings are asked for, and no thread slot is lost."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engine import MemoryEngine, build_request
from engine.recall import fusion

TEXTS = ["Maya repaired the bicycle chain", "the bicycle brakes failed on the hill", "coffee at the new cafe",
         "the cafe roasts its own beans", "Leo's sister studies marine biology", "a bicycle race through town"]


def _slots_free() -> int:
    """How many gathering slots can be taken now (each taken one is given back)."""
    taken = 0
    while fusion._gather_slots.acquire(blocking=False):  # noqa: SLF001 - the slots are what is under test
        taken += 1
    for _ in range(taken):
        fusion._gather_slots.release()  # noqa: SLF001
    return taken


def test_gathered_on_a_thread_of_its_own_or_inline_when_all_are_busy() -> None:
    rows = np.arange(5)
    threads: list[str] = []

    def gather(at: np.ndarray) -> np.ndarray:
        threads.append(threading.current_thread().name)
        return at * 2

    assert fusion._meanwhile(gather, rows)().tolist() == [0, 2, 4, 6, 8]  # noqa: SLF001
    assert threads[-1].startswith("hebbs-gather")
    held = [fusion._gather_slots.acquire(blocking=False) for _ in range(fusion.GATHER_THREADS)]  # noqa: SLF001
    assert all(held)
    try:
        assert fusion._meanwhile(gather, rows)().tolist() == [0, 2, 4, 6, 8]  # noqa: SLF001
        assert threads[-1] == threading.current_thread().name  # every slot busy: here and now
    finally:
        for _ in held:
            fusion._gather_slots.release()  # noqa: SLF001
    assert _slots_free() == fusion.GATHER_THREADS


def test_an_error_while_gathering_surfaces_where_the_embeddings_are_asked_for() -> None:
    def failing(at: np.ndarray) -> np.ndarray:
        raise OSError("the map went away")

    later = fusion._meanwhile(failing, np.arange(3))  # noqa: SLF001
    with pytest.raises(OSError, match="the map went away"):
        later()
    assert _slots_free() == fusion.GATHER_THREADS  # the slot came back


def test_the_frame_is_the_same_gathered_meanwhile_or_in_line(engine: MemoryEngine,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    memories = engine.remember_many([{"content": t, "context": {"conversation": "c", "session": n // 3}}
                                     for n, t in enumerate(TEXTS)])
    engine.add_edges([(a.id, b.id, "followed_by") for a, b in zip(memories, memories[1:], strict=False)])
    recaller = engine._recaller  # noqa: SLF001 - the frame is what is under test
    cues = ["who repaired the bicycle?", "what does the cafe roast?", "Leo's sister"]
    threaded = fusion._meanwhile  # noqa: SLF001
    asked: list[int] = []

    def counted(gather, rows):  # type: ignore[no-untyped-def]
        asked.append(len(rows))
        return threaded(gather, rows)

    with monkeypatch.context() as patch:
        patch.setattr(fusion, "_meanwhile", counted)
        meanwhile = [recaller.fusion_frame(build_request(cue)) for cue in cues]
        results = [[(r.memory.id, r.score) for r in engine.retrieve(build_request(cue))] for cue in cues]
    assert len(asked) == 2 * len(cues) and all(asked)  # every frame gathered meanwhile

    def in_line(gather, rows):  # type: ignore[no-untyped-def]
        matrix = gather(rows)
        return lambda: matrix

    monkeypatch.setattr(fusion, "_meanwhile", in_line)
    for cue, frame, found in zip(cues, meanwhile, results, strict=True):
        plain = recaller.fusion_frame(build_request(cue))
        assert frame.pool == plain.pool and frame.signals == plain.signals
        assert frame.raw.tobytes() == plain.raw.tobytes() and frame.z.tobytes() == plain.z.tobytes()
        assert found == [(r.memory.id, r.score) for r in engine.retrieve(build_request(cue))]
