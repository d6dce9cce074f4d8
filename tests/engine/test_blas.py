"""`engine.blas.one_thread`: BLAS runs on one thread inside it, the same bits come out, and the limit the
process had is back once the last of several overlapping recalls leaves it (a per-call restore would leave the
process limited when two recalls overlap)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController

from engine import blas
from engine.blas import one_thread


def _blas_threads() -> list[int]:
    """Thread counts of the BLAS libraries `one_thread` governs: numpy's (a BLAS another package loads later,
    e.g. scipy's own, is no part of a recall's products)."""
    governed = {c.filepath for c in blas._blas().lib_controllers}  # noqa: SLF001
    return [p["num_threads"] for p in ThreadpoolController().info()
            if p["user_api"] == "blas" and p["filepath"] in governed]


@pytest.fixture
def two_threads() -> None:
    """The process's BLAS on two threads (whatever the machine), as it is on a multi-core machine."""
    controller = ThreadpoolController()
    if not _blas_threads():
        pytest.skip("numpy has no BLAS threadpool here")
    limits = controller.limit(limits=2, user_api="blas")
    yield
    limits.restore_original_limits()


def test_one_thread_inside_and_the_same_bits(two_threads: None) -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((1200, 384)).astype(np.float32)
    cue = rng.standard_normal(384).astype(np.float32)
    outside = matrix @ cue
    with one_thread():
        assert set(_blas_threads()) == {1}
        inside = matrix @ cue
    assert set(_blas_threads()) == {2}
    assert np.array_equal(inside, outside)


def test_overlapping_recalls_restore_the_limit_once_the_last_leaves(two_threads: None) -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[set[int]] = []

    def first() -> None:
        with one_thread():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        with one_thread():
            second_in.set()
            first_out.wait(10)
            seen.append(set(_blas_threads()))  # the first left: still one thread while this one is inside

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen == [{1}]
    assert set(_blas_threads()) == {2}


def test_a_limit_set_on_one_thread_is_restored_from_another(two_threads: None) -> None:
    """The first recall in sets the limit, the last out (another thread) restores it."""
    entered, leave = threading.Event(), threading.Event()

    def first() -> None:
        with one_thread():
            entered.set()
            leave.wait(10)

    def second() -> None:
        entered.wait(10)
        with one_thread():
            leave.set()
            entered.wait(10)

    a = threading.Thread(target=first)
    a.start()
    entered.wait(10)
    assert set(_blas_threads()) == {1}
    b = threading.Thread(target=second)
    b.start()
    for t in (a, b):
        t.join(20)
    assert set(_blas_threads()) == {2}
    with one_thread():  # and the next recall, on this thread, can still set it
        assert set(_blas_threads()) == {1}
    assert set(_blas_threads()) == {2}
