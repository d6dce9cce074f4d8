"""A fused recall's embeddings gathered on a thread of the engine's own while the frame reads the rest
(`Recaller.gather_meanwhile`, read by engine/recall/fusion.py): the same frame as gathered in line, here and now
when every gathering thread is busy, an error in the gathering surfaces where the embeddings are asked for, no
thread slot is lost, and the threads end with the engine."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engine import MemoryEngine, build_request
from engine.recall import recaller as recaller_module
from engine.recall.strategies import gathered_here

TEXTS = ["Maya repaired the bicycle chain", "the bicycle brakes failed on the hill", "coffee at the new cafe",
         "the cafe roasts its own beans", "Leo's sister studies marine biology", "a bicycle race through town"]


def _slots_free(recaller: recaller_module.Recaller) -> int:
    """How many gathering slots can be taken now (each taken one is given back)."""
    slots = recaller._gather_slots  # noqa: SLF001 - the slots are what is under test
    taken = 0
    while slots.acquire(blocking=False):
        taken += 1
    for _ in range(taken):
        slots.release()
    return taken


def test_gathered_on_a_thread_of_its_own_or_here_when_all_are_busy(engine: MemoryEngine) -> None:
    recaller = engine._recaller  # noqa: SLF001
    rows = np.arange(5)
    threads: list[threading.Thread] = []

    def gather(at: np.ndarray) -> np.ndarray:
        threads.append(threading.current_thread())
        return at * 2

    assert recaller.gather_meanwhile(gather, rows)().tolist() == [0, 2, 4, 6, 8]
    gatherer = threads[-1]
    assert gatherer.name.startswith("hebbs-gather")
    slots = recaller._gather_slots  # noqa: SLF001
    held = [slots.acquire(blocking=False) for _ in range(recaller_module.GATHER_THREADS)]
    assert all(held)
    try:
        assert recaller.gather_meanwhile(gather, rows)().tolist() == [0, 2, 4, 6, 8]
        assert threads[-1] is threading.current_thread()  # every slot busy: here and now
    finally:
        for _ in held:
            slots.release()
    assert _slots_free(recaller) == recaller_module.GATHER_THREADS
    engine.close()
    assert not gatherer.is_alive()  # the thread ended with the engine


def test_an_error_while_gathering_surfaces_where_the_embeddings_are_asked_for(engine: MemoryEngine) -> None:
    recaller = engine._recaller  # noqa: SLF001

    def failing(at: np.ndarray) -> np.ndarray:
        raise OSError("the map went away")

    later = recaller.gather_meanwhile(failing, np.arange(3))
    with pytest.raises(OSError, match="the map went away"):
        later()
    assert _slots_free(recaller) == recaller_module.GATHER_THREADS  # the slot came back


def test_the_frame_is_the_same_gathered_meanwhile_or_in_line(engine: MemoryEngine,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    memories = engine.remember_many([{"content": t, "context": {"conversation": "c", "session": n // 3}}
                                     for n, t in enumerate(TEXTS)])
    engine.add_edges([(a.id, b.id, "followed_by") for a, b in zip(memories, memories[1:], strict=False)])
    recaller = engine._recaller  # noqa: SLF001 - the frame is what is under test
    cues = ["who repaired the bicycle?", "what does the cafe roast?", "Leo's sister"]
    threaded = recaller.gather_meanwhile
    asked: list[int] = []

    def counted(gather, rows):  # type: ignore[no-untyped-def]
        asked.append(len(rows))
        return threaded(gather, rows)

    with monkeypatch.context() as patch:
        patch.setattr(recaller, "gather_meanwhile", counted)
        meanwhile = [recaller.fusion_frame(build_request(cue)) for cue in cues]
        results = [[(r.memory.id, r.score) for r in engine.retrieve(build_request(cue))] for cue in cues]
    assert len(asked) == 2 * len(cues) and all(asked)  # every frame gathered meanwhile

    monkeypatch.setattr(recaller, "gather_meanwhile", gathered_here)
    for cue, frame, found in zip(cues, meanwhile, results, strict=True):
        plain = recaller.fusion_frame(build_request(cue))
        assert frame.pool == plain.pool and frame.signals == plain.signals
        assert frame.raw.tobytes() == plain.raw.tobytes() and frame.z.tobytes() == plain.z.tobytes()
        assert found == [(r.memory.id, r.score) for r in engine.retrieve(build_request(cue))]
