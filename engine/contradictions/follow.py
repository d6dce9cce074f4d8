"""`ContradictionChecks`: each write's contradiction check, run after the write like relational structures.

The check parses each new statement and the near statements of its entity it is compared with (spaCy,
engine/contradictions/detect.py): several texts per memory, so a `remember_many` that waited for it ran at
under half the embedding's throughput. A write instead commits each memory to check with a durable "check
pending" mark (the record store's `pending_checks`, in the write's own transaction:
`MemoryRecord.check_pending`) and returns. The checks then run in the order written, the way
engine/structures.py extracts pending structures:

- at the read barrier `catch_up`, before anything reads contradiction candidates (`contradiction_prepare`,
  whichever transport or page asks): every pending check runs first, so no candidate is missed. It is cheap
  when nothing is pending: one `Storage.version()` compared with the last version at which nothing was;
- in the structure follower's idle worker (`StructureFollower.also_idle`), in small batches once no write
  has come for a while and no structure is pending, so a bulk import in the foreground is not slowed.

A check stores its candidates and clears its marks in one transaction (`Storage.propose_contradictions`), so
a process that exits before the check leaves the marks, and the store reopened runs the check then. A check
that fails is logged and its mark cleared, as a failed check after a write always was: a candidate search
fails neither the write nor a read. Recall's `contradicts` marks need no barrier: those edges come only from
an agent's verdict on a candidate it has read.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from engine.clock import Clock
from engine.contradictions.review import CHECKED_KINDS, ContradictionReview
from engine.models import Memory
from engine.store.interface import Storage

# Pending checks run per transaction by the read barrier (a larger batch reads each entity's window once for
# more of its memories: 10,000 pending checks of the benchmark corpus took 3.4 s in batches of 256, 1.7 s of
# 1,024 and 1.1 s of 4,096), and per batch by the idle worker (16 memories are compared with up to 80 texts:
# ~0.1-0.3 s of spaCy, so the worker gives way quickly to a write or a close).
CHECK_CATCHUP_BATCH = 4096
CHECK_IDLE_BATCH = 16

log = logging.getLogger(__name__)


def needs_check(memory: Memory) -> bool:
    """Whether a written memory is checked for contradictions: a statement (episode or proposition) about an
    entity; documents, insights and revisions are not."""
    return bool(memory.entity_id) and memory.kind in CHECKED_KINDS


class ContradictionChecks:
    """Runs pending contradiction checks: on demand before a read (`catch_up`) and when idle (`work_one_batch`)."""

    def __init__(self, store: Storage, review: ContradictionReview, clock: Clock) -> None:
        self._store = store
        self._review = review
        self._clock = clock
        self._checking = threading.Lock()  # one check at a time (barrier or worker)
        self._nothing_pending_at: tuple[int, int] | None = None  # a store version with nothing pending

    def catch_up(self) -> int:
        """Run every pending check now (the barrier before candidates are read). Returns how many candidates
        this call proposed; 0 at once when the store has not changed since nothing was pending. A read-only
        store cannot store candidates: its pending checks wait for a writer."""
        if self._store.read_only or self._store.version() == self._nothing_pending_at:
            return 0
        with self._checking:
            proposed = 0
            while True:
                version = self._store.version()  # read before the pending rows: a later write moves it
                batch = self._store.pending_checks(CHECK_CATCHUP_BATCH)
                if not batch:
                    self._nothing_pending_at = version
                    return proposed
                proposed += self._check(batch)

    def work_one_batch(self) -> bool:
        """One small batch for the idle worker; False when nothing is pending."""
        if self._store.read_only:
            return False
        with self._checking:
            version = self._store.version()
            batch = self._store.pending_checks(CHECK_IDLE_BATCH)
            if not batch:
                self._nothing_pending_at = version
                return False
            self._check(batch)
            return True

    def pending(self) -> int:
        """How many memories wait for their check (read from the store: other engines' writes count)."""
        return self._store.count_pending_checks()

    def _check(self, batch: Sequence[str]) -> int:
        """Check a batch; when that fails, each memory alone, so one bad text costs only its own check."""
        try:
            return self._review.check(batch, self._clock.now())
        except Exception:  # noqa: BLE001 - the write is durable; a candidate search must fail neither it nor a read
            if len(batch) == 1:
                log.exception("contradiction check of memory %s failed; it stays unchecked", batch[0])
                self._store.propose_contradictions([], batch)
                return 0
        return sum(self._check([memory_id]) for memory_id in batch)
