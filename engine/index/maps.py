"""Page tables for the recall's memory maps, filled once, ahead of the recalls that read them.

The candidate and lexical segments are memory-mapped files (engine/index/candidate_segment.py,
engine/index/lexical_segment.py). Opening a segment checks each file's CRC, so its pages are in the OS's cache,
but not yet in this process's page tables: every first touch of a page is a fault. A default recall touches a
thousand rows scattered over the 1.5 GB of embeddings of a million memories (the fusion frame's gather) and
binary-searches posting lists of hundreds of thousands of rows, so for the first several hundred recalls after
an open most of their reads faulted: gathering 1,000 random embeddings cost 3.9 ms cold against 0.4 ms with
the page tables filled (benchmarks: docs/scaling.md). `populate_later` fills them on a background thread with
`madvise(MADV_POPULATE_READ)` (Linux 5.14+; a read of one byte a page elsewhere), which releases the GIL.

The pages stay the OS's clean file pages (dropped under memory pressure like any cache), but they count in the
process's resident size; maps larger than `config.POPULATE_MAPS_MAX_FRACTION` of the machine's memory are left
to fault in as they are read.
"""

from __future__ import annotations

import ctypes
import logging
import mmap
import os
import queue
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from engine import config

log = logging.getLogger(__name__)

MADV_POPULATE_READ = 22  # linux/mman.h; EINVAL before Linux 5.14
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
CGROUP_MEMORY_MAX = Path("/sys/fs/cgroup/memory.max")  # "max" when unlimited


def _madvise() -> Any:
    """libc's madvise, or None where it cannot be called (the fallback reads a byte a page)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    call.restype = ctypes.c_int
    return call


_MADVISE = _madvise()


def populate(arrays: Iterable[np.ndarray]) -> int:
    """Fill the page tables of every memory-mapped array now; answer the bytes filled. The arrays' contents are
    only read."""
    done = 0
    for array in arrays:
        if _is_mapped(array) and array.nbytes:
            _populate(array)
            done += array.nbytes
    return done


def fits_in_memory(size: int) -> bool:
    """Whether maps of `size` bytes are small enough to keep resident: `config.POPULATE_MAPS_MAX_FRACTION` of
    the machine's memory, or of the container's limit (cgroup v2 `memory.max`) where that is lower."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return False
    try:
        limit = CGROUP_MEMORY_MAX.read_text().strip()
    except OSError:
        limit = ""
    if limit.isdigit():
        total = min(total, int(limit))
    return size <= config.POPULATE_MAPS_MAX_FRACTION * total


def populate_later(arrays: Iterable[np.ndarray]) -> bool:
    """Fill the arrays' page tables on the background thread (one for the process, one job at a time); False
    when they are left to fault in (turned off, or too large for the machine's memory)."""
    mapped = [a for a in arrays if _is_mapped(a) and a.nbytes]
    if not mapped or not config.POPULATE_MAPS or not fits_in_memory(sum(a.nbytes for a in mapped)):
        return False
    _worker().put(mapped)  # the job holds the arrays, so their maps stay open until it is done
    return True


def wait_idle(timeout: float | None = None) -> bool:
    """Whether every job handed to the background thread is done (waiting up to `timeout` seconds)."""
    jobs = _JOBS
    if jobs is None:
        return True
    with jobs.all_tasks_done:
        return jobs.all_tasks_done.wait_for(lambda: not jobs.unfinished_tasks, timeout)


_JOBS: queue.Queue[list[np.ndarray]] | None = None
_JOBS_LOCK = threading.Lock()


def _worker() -> queue.Queue[list[np.ndarray]]:
    global _JOBS
    with _JOBS_LOCK:
        if _JOBS is None:
            _JOBS = queue.Queue()
            threading.Thread(target=_run, args=(_JOBS,), name="hebbs-populate", daemon=True).start()
        return _JOBS


def _run(jobs: queue.Queue[list[np.ndarray]]) -> None:
    while True:
        arrays = jobs.get()
        try:
            populate(arrays)
        except Exception:  # a map that cannot be read ahead is read as recalls touch it
            log.debug("filling page tables failed", exc_info=True)
        finally:
            del arrays
            jobs.task_done()


def _is_mapped(array: np.ndarray) -> bool:
    """Whether the array's memory is a file map (np.load's `mmap_mode` arrays and views of them)."""
    base: Any = array
    while base is not None:
        if isinstance(base, (np.memmap, mmap.mmap)):
            return True
        base = getattr(base, "base", None)
    return False


def _populate(array: np.ndarray) -> None:
    """One array's pages, in 64 MiB steps (a step that fails, e.g. on a kernel without MADV_POPULATE_READ,
    falls back to reading one byte a page, which faults each page in)."""
    start = array.__array_interface__["data"][0]
    end = start + array.nbytes
    first = start - start % _PAGE
    step = 64 << 20
    for at in range(first, end, step):
        length = min(step, end - at)
        if _MADVISE is not None and _MADVISE(at, length, MADV_POPULATE_READ) == 0:
            continue
        offset = max(at, start) - start
        raw = np.frombuffer(array.data, dtype=np.uint8, count=min(length, array.nbytes - offset), offset=offset) \
            if array.flags.c_contiguous else None
        if raw is None:
            return
        int(raw[::_PAGE].sum())  # one read a page: each page faulted in once
