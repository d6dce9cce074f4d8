"""The cue's parse in a child process (engine/analogy/cue_worker.py): the same structure as a parse in this
process, the same analogical and fused recalls, a clean fall-back when the child dies, and no child left
once the engines that used it are closed. Real spaCy in a real child process."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine import MemoryEngine, build_request, config
from engine.analogy import cue_worker
from engine.analogy.text import EpisodeExtractor
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.models import RecallResult

CUES = [
    "Why did the webhook deploy fail after the certificate expired?",
    "Maya gave Tom the keys before the launch meeting in Berlin",
    "pricing",
    "",
]
MEMORIES = [
    "The webhook deploy failed because the TLS certificate had expired on Friday.",
    "Tom handed the launch checklist to Maya after the meeting.",
    "The annual contract got a 12% discount once legal approved the terms.",
    "Maya climbed in the Alps the weekend before the product launch.",
    "A broken pump flooded the basement, so the server room was shut down.",
]


def _wait_for(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _ready(worker: cue_worker.CueWorker) -> bool:
    return worker.parse("ready?") is not None


def _ranked(results: list[RecallResult]) -> list[tuple[str, float, float]]:
    return [(r.memory.id, r.score, r.signals.relevance) for r in results]


@pytest.fixture
def worker() -> Iterator[cue_worker.CueWorker]:
    own = cue_worker.CueWorker()
    own.acquire()
    _wait_for(lambda: _ready(own))
    yield own
    own.release()


def test_child_parses_like_this_process_and_replaces_a_dead_child(worker: cue_worker.CueWorker) -> None:
    here = EpisodeExtractor()
    for cue in CUES:
        assert worker.parse(cue) == here.extract([cue])[0]
    first = worker.pid
    assert first is not None
    os.kill(first, 9)
    _wait_for(lambda: not _alive(first) or _zombie(first))
    assert worker.parse(CUES[0]) is None  # the dead child: this cue is parsed by the caller
    assert worker.failures == 1 and worker.pid not in (None, first)  # a fresh child was started
    _wait_for(lambda: _ready(worker))
    assert worker.parse(CUES[1]) == here.extract([CUES[1]])[0]
    second = worker.pid
    assert second is not None
    worker.release()
    assert worker.pid is None and not _alive(second)  # the last user's release stops (and reaps) it
    worker.acquire()  # the fixture's release pairs with this


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return False


def test_engine_recalls_equal_with_and_without_the_child(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock()
    with MemoryEngine(tmp_path / "data", embedder=embedder, clock=clock) as engine:
        engine.remember_many([{"content": text, "entity_id": "maya"} for text in MEMORIES])
        shared = cue_worker.WORKER
        requests = [
            {"strategies": ["analogical"], "top_k": 5},
            {"strategies": ["analogical"], "top_k": 5, "analogical_alpha": 0.0},
            {"strategies": ["similarity", "temporal", "causal", "analogical"], "entity_id": "maya", "top_k": 5},
        ]
        monkeypatch.setattr(config, "CUE_WORKER", False)
        here = [_ranked(engine.retrieve(build_request(cue, **r))) for cue in CUES[:2] for r in requests]
        assert shared.pid is None  # off: no child was started
        monkeypatch.setattr(config, "CUE_WORKER", True)
        engine.retrieve(build_request(CUES[2], strategies=["analogical"]))  # starts the child; parsed here meanwhile
        pid = shared.pid
        assert pid is not None
        _wait_for(lambda: _ready(shared))
        child = [_ranked(engine.retrieve(build_request(cue, **r))) for cue in CUES[:2] for r in requests]
        assert child == here
        assert shared.failures == 0 and shared.pid == pid  # every cue went to the same child
    assert shared.pid is None and not _alive(pid)  # close() released the last use: the child is gone
