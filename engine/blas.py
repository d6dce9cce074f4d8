"""One BLAS thread for the small products of a recall, shared safely by concurrent recalls.

A fused recall multiplies a pool of about a thousand embeddings by the cue (and the unnamed cue): 0.1 ms of
arithmetic. OpenBLAS splits such a product over its threads, and on a busy machine waking them cost up to 8 ms
a product (measured on a 1,000,000-memory store: 5.8 ms p50 for the cue's product in a recall, 0.1-0.2 ms with
one thread; the results are the same bits, each output being one thread's dot product either way).

OpenBLAS built on pthreads (numpy's wheels) has one thread pool for the process, and threadpoolctl lets only
one "controlling" thread change its size: `one_thread()` counts the recalls inside it, the first to enter sets
one thread and the last to leave restores what was there (each making itself the controlling thread first), so
overlapping recalls on several threads cannot leave the process limited. With an OpenMP build the limit is per
thread, and each recall sets and restores its own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_inside = 0
_controller: Any = None
_restore: Any = None


def _blas() -> Any:
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController().select(user_api="blas")
    return _controller


@contextmanager
def one_thread() -> Iterator[None]:
    global _inside, _restore
    blas = _blas()
    if not blas.lib_controllers:
        yield
        return
    if all(getattr(c, "threading_layer", "") == "openmp" for c in blas.lib_controllers):
        with blas.limit(limits=1):  # per-thread limits
            yield
        return
    with _lock:
        if _inside == 0:
            _take_control()
            # Each library's count read and set directly: `blas.limit` first reads every library's whole `info()`
            # (version, architecture, ...), 13 us a recall step, for the same counts and the same calls.
            _restore = [(c, c.get_num_threads()) for c in blas.lib_controllers]
            for c, _ in _restore:
                c.set_num_threads(1)
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _restore is not None:
                _take_control()
                for c, count in _restore:
                    if count is not None:
                        c.set_num_threads(count)
                _restore = None
                _take_control()


def _take_control() -> None:
    """Let this thread change the shared pool's size (threadpoolctl honours one controlling thread only)."""
    from threadpoolctl import OpenBLASController

    OpenBLASController.clear_controlling_thread(force=True)
