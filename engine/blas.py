"""One BLAS thread for the small products of a recall, shared safely by concurrent recalls.

A fused recall multiplies a pool of about a thousand embeddings by the cue (and the unnamed cue): 0.1 ms of
arithmetic. OpenBLAS splits such a product over its threads, and on a busy machine waking them cost up to 8 ms
a product (measured on a 1,000,000-memory store: 5.8 ms p50 for the cue's product in a recall, 0.1-0.2 ms with
one thread; the results are the same bits, each output being one thread's dot product either way).
`one_thread()` limits BLAS to one thread while any recall is inside it: the first to enter sets the limit, the
last to leave restores what was there, so concurrent recalls cannot leave the process limited.
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


@contextmanager
def one_thread() -> Iterator[None]:
    global _inside, _controller, _restore
    with _lock:
        if _inside == 0:
            if _controller is None:
                from threadpoolctl import ThreadpoolController

                _controller = ThreadpoolController()
            _restore = _controller.limit(limits=1, user_api="blas")
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _restore is not None:
                _restore.restore_original_limits()
                _restore = None
