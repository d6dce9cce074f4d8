"""`StructureFollower`: relational structures as a derived index that follows writes.

Extracting a memory's structure (spaCy's parse, engine/analogy/text.py) costs about as much CPU as embedding
it, so a write commits the memory with a durable "structure pending" mark
(the record store's `pending_structures` table, same transaction) and returns. The structure is then
extracted, like the HNSW graph is derived from the stored vectors, by

- the read barrier `catch_up`, run before anything reads structures (analogical recall, `structure_of`,
  re-extraction): every pending structure is extracted and stored first, so no caller sees a stale one.
  It is cheap when nothing is pending: one `Storage.version()` compared with the last version at which
  nothing was pending (that version also moves when another engine or process commits);
- the idle worker, a thread started by this engine's first deferred write (or `start_if_pending`), which
  extracts small batches once no write has come for `STRUCTURE_IDLE_SECONDS`, so a bulk import in
  the foreground is not slowed; it stops at `close` after at most the batch in hand. Other work deferred
  the same way (the contradiction checks, engine/contradictions/follow.py) is handed to it with
  `also_idle`, and runs once no structure is pending.

Storing is idempotent and safe against races: a structure is written only while its memory is still
pending and still has the text it was extracted from (`Storage.set_structures(pending_only=True)`), in
one transaction under the store's write lock. A crash leaves pending marks, never a lost structure.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Protocol

from engine.analogy.episode_graph import GRAPH_VERSION
from engine.analogy.text import StructureExtractor
from engine.clock import Clock
from engine.errors import StoreError
from engine.index.derived import DerivedIndexes
from engine.store.interface import Storage

# The idle worker starts extracting once no write has come for this long (engine clock), in batches of
# STRUCTURE_IDLE_BATCH texts (~0.1-0.3 s of spaCy each, so it gives way quickly to a write or a close).
STRUCTURE_IDLE_SECONDS = 2.0
STRUCTURE_IDLE_BATCH = 16

log = logging.getLogger(__name__)
# Pending structures extracted per transaction by the read barrier.
STRUCTURE_CATCHUP_BATCH = 512
# What re-extracting one stored memory's structure costs (spaCy, short texts on a 2-core machine): the estimate
# the one-off re-extraction after an extractor upgrade announces.
REEXTRACT_SECONDS_EACH = 0.004


class IdleWork(Protocol):
    """More work deferred from the write path, done by the idle worker in small batches."""

    def work_one_batch(self) -> bool:
        """Do one small batch; False when nothing is pending."""
        ...

    def pending(self) -> int: ...


class StructureFollower:
    """Extracts pending structures: on demand before a read (`catch_up`) and in the background when idle."""

    def __init__(
        self, store: Storage, indexes: DerivedIndexes, extractor: Callable[[], StructureExtractor], clock: Clock
    ) -> None:
        self._store = store
        self._indexes = indexes
        self._extractor = extractor
        self._clock = clock
        self._extracting = threading.Lock()  # one extraction at a time (barrier or worker)
        self._nothing_pending_at: tuple[int, int] | None = None  # a store version with nothing pending
        self._wake = threading.Condition()
        self._last_write: datetime | None = None
        self._writes = 0  # commits seen: the worker sleeps only if none came since it found nothing pending
        self._holds = 0  # bulk writes in progress (`held`): no idle time while one runs
        self._closing = False
        self._worker: threading.Thread | None = None
        self._failed: BaseException | None = None
        self._reextracting = threading.Lock()
        self._versions_checked = False  # stale structures are re-extracted before the first analogical recall
        self._also: list[IdleWork] = []

    # --- the read barrier --------------------------------------------------------------------------------
    def catch_up(self) -> int:
        """Extract and store every pending structure now (the barrier before any read of structures).
        Returns how many this call stored; 0 at once when the store has not changed since nothing was pending."""
        if self._store.version() == self._nothing_pending_at:
            return 0
        with self._extracting:
            stored = 0
            while True:
                version = self._store.version()  # read before the pending rows: a later write moves it
                batch = self._store.pending_structures(STRUCTURE_CATCHUP_BATCH)
                if not batch:
                    self._join_extracted_elsewhere()
                    self._nothing_pending_at = version
                    return stored
                written = self._extract(batch)
                if not written and batch == self._store.pending_structures(STRUCTURE_CATCHUP_BATCH):
                    raise StoreError("pending relational structures could not be stored")  # never loop forever
                stored += written

    def pending(self) -> int:
        """How many memories wait for their structure (read from the store: other engines' writes count)."""
        return self._store.count_pending_structures()

    def _extract(self, batch: Sequence[tuple[str, str]]) -> int:
        """Extract and store one batch of (id, content); the feature index takes in what was stored."""
        structures = self._extractor().extract([content for _, content in batch])
        rows = [(i, content, s) for (i, content), s in zip(batch, structures, strict=True)]
        written = set(self._store.set_structures(rows, pending_only=True))
        self._indexes.structures_filled((i, s) for i, _, s in rows if i in written)
        return len(written)

    def _join_extracted_elsewhere(self) -> None:
        """Memories this engine's feature or plot index left out as pending that another engine (or process) has
        extracted since: read their stored structures."""
        awaiting = self._indexes.awaiting_structures()
        if awaiting:
            self._indexes.structures_filled(self._store.extracted_structures(sorted(awaiting)))

    # --- re-extraction -----------------------------------------------------------------------------------
    def before_analogical_read(self) -> None:
        """The barrier before an analogical recall: no pending structure is missed, and (once per engine)
        structures another extractor version wrote are re-extracted."""
        self.catch_up()
        if not self._versions_checked:
            self.reextract()

    def reextract(self, all_memories: bool = False) -> int:
        """Re-extract stored structures written by another extractor version (or every one) and rebuild the
        feature index, as every index is rebuilt from the record store. Returns how many were rebuilt."""
        self.catch_up()
        with self._reextracting:
            self._versions_checked = True
            extractor = self._extractor()
            if all_memories:
                stale = self._store.stale_structures(-1)
            elif getattr(extractor, "name", "") != "episode":
                return 0
            else:
                stale = self._store.stale_structures(GRAPH_VERSION)
            if stale:  # a wait of about 4 ms a memory, once: say so where the user sees it (the CLI's stderr)
                log.warning("re-extracting the relational structures of %d %s for extractor version %d "
                            "(once per store, after an upgrade; about %d s)", len(stale),
                            "memory" if len(stale) == 1 else "memories", GRAPH_VERSION,
                            max(1, round(len(stale) * REEXTRACT_SECONDS_EACH)))
            for start in range(0, len(stale), 1000):
                chunk = stale[start : start + 1000]
                found = extractor.extract([content for _, content in chunk])
                self._store.set_structures([(i, c, s) for (i, c), s in zip(chunk, found, strict=True)])
            if stale:
                self._indexes.structures_replaced()
            return len(stale)

    # --- the idle worker ---------------------------------------------------------------------------------
    def wrote(self, pending: int) -> None:
        """After each commit: note the time (the worker waits for a pause) and start the worker if this
        write left structures pending."""
        with self._wake:
            self._last_write = self._clock.now()
            self._writes += 1
            if pending:
                self._start()
            self._wake.notify_all()

    @contextmanager
    def held(self) -> Iterator[None]:
        """A bulk write (an ingest) in progress: the pauses between its commits (a batch being analysed) are
        not idle time, so the worker does not parse beside it; it waits for a pause after the last commit."""
        with self._wake:
            self._holds += 1
        try:
            yield
        finally:
            with self._wake:
                self._holds -= 1
                self._last_write = self._clock.now()
                self._wake.notify_all()

    def also_idle(self, work: IdleWork) -> None:
        """Have the idle worker do `work` too, once no structure is pending."""
        self._also.append(work)

    def start_if_pending(self) -> None:
        """Start the worker when the store holds pending structures or other pending work (a server opening an
        earlier store)."""
        if not self._store.read_only and (self.pending() or any(work.pending() for work in self._also)):
            with self._wake:
                self._start()
                self._wake.notify_all()

    def nudge(self) -> None:
        """Make the worker look again now (its clock may have moved: tests inject one)."""
        with self._wake:
            self._wake.notify_all()

    def close(self, timeout: float = 30.0) -> None:
        """Stop the worker after the batch in hand (what is left stays pending, durable)."""
        with self._wake:
            self._closing = True
            self._wake.notify_all()
            worker = self._worker
        if worker is not None:
            worker.join(timeout)

    @property
    def worker_failed(self) -> BaseException | None:
        return self._failed

    def _start(self) -> None:
        """Start the worker thread once (the caller holds `_wake`)."""
        if self._worker is None and not self._closing and not self._store.read_only:
            self._worker = threading.Thread(target=self._run, name="hebbs-structures", daemon=True)
            self._worker.start()

    def _idle_for(self) -> float:
        """Seconds left before the engine counts as idle (0: idle now)."""
        if self._holds:
            return STRUCTURE_IDLE_SECONDS
        if self._last_write is None:
            return 0.0
        quiet = (self._clock.now() - self._last_write).total_seconds()
        return max(0.0, STRUCTURE_IDLE_SECONDS - quiet)

    def _run(self) -> None:
        try:
            while True:
                with self._wake:
                    if self._closing:
                        return
                    wait = self._idle_for()
                    if wait > 0:
                        self._wake.wait(min(wait, 1.0))  # the engine's clock may be injected: look again
                        continue
                    writes = self._writes
                if not self._work_one_batch():
                    with self._wake:
                        if not self._closing and self._writes == writes:
                            self._wake.wait()  # nothing pending: sleep until a write (or close) wakes it
        except Exception as exc:  # noqa: BLE001 - the barrier extracts what is left and raises there
            self._failed = exc
            log.warning("background structure extraction stopped (%s); reads extract pending ones", exc)

    def _work_one_batch(self) -> bool:
        """Extract one small batch if any is pending, else one batch of the other idle work; False when
        nothing is pending."""
        with self._extracting:
            if self._closing:
                return True
            version = self._store.version()
            batch = self._store.pending_structures(STRUCTURE_IDLE_BATCH)
            if batch:
                self._extract(batch)
                return True
            self._join_extracted_elsewhere()
            self._nothing_pending_at = version
        return any(not self._closing and work.work_one_batch() for work in self._also)
