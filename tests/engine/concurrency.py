"""Reads in other threads while this thread writes: the harness of the tests that race recalls with writes."""

from __future__ import annotations

import threading
from collections.abc import Callable


def failures_beside(
    read: Callable[[int], object], write: Callable[[], None], readers: int = 2, min_reads: int = 0
) -> list[BaseException]:
    """Run `write` here while `readers` threads each call `read(n)` for n = 0, 1, ... until `write` has returned
    and they have read at least `min_reads` times. A reader stops at its first error; the errors are returned."""
    failures: list[BaseException] = []
    done = threading.Event()

    def read_until_done() -> None:
        n = 0
        while not done.is_set() or n < min_reads:
            try:
                read(n)
            except BaseException as exc:  # noqa: BLE001 - collected and asserted on by the caller
                failures.append(exc)
                return
            n += 1

    threads = [threading.Thread(target=read_until_done) for _ in range(readers)]
    for t in threads:
        t.start()
    try:
        write()
    finally:
        done.set()
        for t in threads:
            t.join()
    return failures
