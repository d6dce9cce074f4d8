"""`DerivedIndexes`: the derived indexes, built lazily from the record store and kept in step with each write.

The record store is the truth. The vector index (Chroma) is reconciled with it when first opened: pending
deletes are applied, unsynced memories upserted, and a count mismatch with no marks to explain it (say its
folder was deleted) repaired from the stored embeddings without the model. The timeline, graph and feature
indexes live in memory and are rebuilt from the store on first use.
"""

from __future__ import annotations

import gc
import logging
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from engine import config
from engine.analogy.plot import decode_plot
from engine.index import candidate_segment, lexical_segment
from engine.index.candidate_segment import CandidateSegment
from engine.index.candidates import CandidateTable
from engine.index.edge_graph import GraphIndex
from engine.index.feature_index import FeatureIndex
from engine.index.plot_index import PlotIndex
from engine.index.postings import LexicalPostings
from engine.index.timeline import TimelineIndex
from engine.index.vector import VectorIndex, stored_forms
from engine.models import Edge, MemoryKind
from engine.store import vector_files
from engine.store.interface import Storage
from engine.store.rows import MemoryRecord, to_micros

log = logging.getLogger(__name__)

VectorSource = VectorIndex | Callable[[], VectorIndex] | None

# Memories changed since the candidate segment that are held in memory before the next segment is written
# (fewer for a small store: a quarter of its rows, at least `CANDIDATE_MERGE_MIN`); a reopen reads at most
# this many from the store, and writes them into a segment when they are `CANDIDATE_MERGE_MIN` or more, so the
# next process does not read them again.
CANDIDATE_MERGE_AT = 20_000
CANDIDATE_MERGE_MIN = 1_000


class DerivedIndexes:
    """Holds every derived index; `apply` / `add_edges` / `drop` follow committed writes."""

    def __init__(self, store: Storage, data_dir: Path, vector_index: VectorSource = None) -> None:
        self._store = store
        self._data_dir = data_dir
        self._vector_source = vector_index
        self._lock = threading.RLock()
        self._vectors: VectorIndex | None = None
        self._timeline: TimelineIndex | None = None
        self._graph: GraphIndex | None = None
        self._structures: FeatureIndex | None = None
        # Memories left out of the feature index because their structure was pending when it was built or
        # written; they join it once extracted (here or by another engine: see `awaiting_structures`).
        self._awaiting: set[str] = set()
        self._plots: PlotIndex | None = None
        self._plots_awaiting: set[str] = set()  # the same, for the plot index (built on a story cue's first recall)
        self._revisions: set[str] | None = None
        self._candidates: CandidateTable | None = None
        self._candidates_at: tuple[int, int] | None = None  # the store's version it was last caught up at
        self._candidate_folder = data_dir / candidate_segment.DIRNAME
        self._deferring = 0  # bulk imports under way (`deferred`)
        # Caught up after each write (`_follow`) and before each search; its segment lives in the data dir.
        self._postings = LexicalPostings(store, data_dir / lexical_segment.DIRNAME)
        # Held from a batch's vector upsert to its records' commit (`commit_with_vectors`) and by an erasure's
        # rebuild and queue purge, which would otherwise drop vectors the store does not hold yet.
        self._upsert_first = threading.Lock()

    # --- lazy builds ---------------------------------------------------------------------------------
    @property
    def vectors(self) -> VectorIndex:
        with self._lock:
            if self._vectors is None:
                source = self._vector_source
                if isinstance(source, VectorIndex):
                    index = source
                elif source is not None:
                    index = source()
                elif self._store.read_only:
                    index = VectorIndex.open_snapshot(self._data_dir / config.VECTOR_DIRNAME)
                else:
                    index = VectorIndex.open_embedded(self._data_dir / config.VECTOR_DIRNAME)
                if self._store.read_only:
                    self._reconcile_copy(index)
                else:
                    self._reconcile(index)
                self._vectors = index
            return self._vectors

    @property
    def vectors_open(self) -> bool:
        return self._vectors is not None

    def open_vectors_meanwhile(self) -> threading.Thread | None:
        """Open the vector index on a side thread (None if it is open already). Importing Chroma takes
        seconds of a cold start; begun before the model loads or spaCy analyses, the two overlap (the model's
        session is built without the GIL). A failure is left for the first real use to raise: it opens the
        index again itself."""
        if self._vectors is not None:
            return None

        def open_index() -> None:
            try:
                if self._vector_source is None:
                    # The import (most of the wait) outside the indexes' lock: the timeline and the cue's
                    # embedding, which need that lock, are built meanwhile instead of queueing behind it.
                    import chromadb  # noqa: F401
                self.vectors  # noqa: B018 - the property opens and reconciles the index
            except Exception as exc:  # noqa: BLE001 - the first use reopens it and raises there
                log.debug("vector index not opened ahead of its first use: %s", exc)

        thread = threading.Thread(target=open_index, name="hebbs-open-vectors", daemon=True)
        thread.start()
        return thread

    def _reconcile(self, index: VectorIndex) -> None:
        """Bring the vector index in line with the record store: pending deletes, an erasure a crash
        interrupted, then unsynced upserts."""
        store = self._store
        pending = store.pending_deletes()
        if pending:
            index.delete(pending)
            store.clear_pending_deletes(pending)
        if store.erase_pending():
            self._erase(index, None)
        # Synced memories must all be in the index; unsynced ones may be there already (a revised memory, a
        # crash in the middle of an upsert). Anything outside those bounds has no mark to explain it (say
        # the index folder was deleted): repair it in full.
        total, count = store.count(), index.count()
        if count > total:  # vectors of a batch that never committed (a crash before its commit): drop them
            self._drop_strays(index)
            count = index.count()
        if not total - store.count_unsynced() <= count <= total:
            log.warning("vector index out of step with the record store; rebuilding it")
            self._drop_strays(index)
            store.mark_all_unsynced()
        self._add_unsynced(index, mark=True)

    def _reconcile_copy(self, index: VectorIndex) -> None:
        """The same for a read-only store's private copy of its index, without marking anything in the store
        (it cannot be written): what the store no longer holds leaves the copy, what it holds unsynced joins it."""
        self._drop_strays(index)
        self._add_unsynced(index, mark=False)

    def _drop_strays(self, index: VectorIndex) -> None:
        """Remove from the index every id the record store no longer holds."""
        in_index = index.all_ids()
        index.delete(sorted(in_index - self._store.existing(in_index)))

    def _add_unsynced(self, index: VectorIndex, *, mark: bool) -> None:
        """Upsert the store's unsynced memories, in chunks; `mark`: record them as synced after each chunk."""
        unsynced = self._store.unsynced()
        for start in range(0, len(unsynced), 5000):
            chunk = unsynced[start : start + 5000]
            index.upsert([i for i, _ in chunk], np.stack([v for _, v in chunk]))
            if mark:
                self._store.mark_synced([i for i, _ in chunk])

    @property
    def timeline(self) -> TimelineIndex:
        with self._lock:
            if self._timeline is None:
                revisions = self.revision_ids()
                with _bulk_build():
                    rows = (r for r in self._store.timeline_rows() if r[2] not in revisions)
                    self._timeline = TimelineIndex(rows)
            return self._timeline

    def entity_names(self) -> tuple[str, ...]:
        """Every entity with a memory (revisions aside), sorted: the timeline's list when it is built, else the
        candidate table's (a recall's unnamed cue needs the names, not the timeline: building that for them
        made a reopened store's first recall read every memory)."""
        timeline = self._timeline  # (an attribute read: not behind the lock a vector index opening holds)
        if timeline is not None:
            return timeline.entities()
        return self.candidates().entities(self.revision_ids())

    def has_entity(self, entity_id: str) -> bool:
        """Whether memories use this entity id, answered from the timeline when it is built (False when it is
        not: building it for this question would cost more than asking the store)."""
        with self._lock:
            timeline = self._timeline
        return timeline is not None and timeline.has(entity_id)

    @property
    def graph(self) -> GraphIndex:
        with self._lock:
            if self._graph is None:
                with _bulk_build():
                    self._graph = GraphIndex(self._store.edges())
            return self._graph

    @property
    def feature_index(self) -> FeatureIndex:
        with self._lock:
            if self._structures is None:
                revisions = self.revision_ids()
                pending = self._store.pending_structure_ids()
                with _bulk_build():
                    self._structures = FeatureIndex(
                        (i, features) for i, features in self._store.features()
                        if i not in revisions and i not in pending
                    )
                self._awaiting = pending - revisions
            return self._structures

    @property
    def plot_index(self) -> PlotIndex:
        """The stored plots (engine/index/plot_index.py), built on a story cue's first analogical recall from the
        structures that keep one (a store of short facts reads a few rows)."""
        with self._lock:
            if self._plots is None:
                revisions = self.revision_ids()
                pending = self._store.pending_structure_ids()
                with _bulk_build():
                    self._plots = PlotIndex((i, decode_plot(plot)) for i, plot in self._store.plots()
                                            if i not in revisions and i not in pending)
                self._plots_awaiting = pending - revisions
            return self._plots

    def candidates(self) -> CandidateTable:
        """The candidate table (engine/index/candidates.py), built on first use and caught up with the store's
        change log when the store moved since (`Storage.version`: one cheap read while nothing changed)."""
        version = self._store.version()  # read first: a commit meanwhile is caught up now or next time
        # The first use maps the segment (reading its files to check them) before taking the lock: a reopened
        # store's first recall opens the vector index meanwhile, holding the lock for seconds at a million.
        segment = self._load_candidates() if self._candidates is None else None
        with self._lock:
            if self._candidates is None:  # the segment was looked for above: missing or unusable means a rebuild
                self._candidates = CandidateTable.on(segment) if segment is not None else self._rebuild_candidates()
            if self._candidates_at != version:
                self._catch_up()
                self._candidates_at = version
            assert self._candidates is not None
            return self._candidates

    def _catch_up(self) -> None:
        """Bring the candidate table to the store's latest change: opened from its segment in the data dir
        (or rebuilt from the store, see `_rebuild_candidates`), then the memories changed since are read again
        (rows and links), never the whole store, unless more than half of the table changed (reading it all
        is cheaper then) or the store keeps no change log. Once the changes held are many, or a quarter of
        the rows are retired versions, the next segment is written. Called with the lock held."""
        table = self._candidates
        first = self._candidates_at is None  # this process's first catch-up (the segment as the last one left it)
        if table is None:
            table = self._candidates = self._open_candidates()
        caught = self._store.changes_since(table.seq)
        if caught is None or len(caught[1]) > max(CANDIDATE_MERGE_AT, len(table) // 2):
            self._candidates = self._rebuild_candidates()
            return
        seq, changed = caught
        for start in range(0, len(changed), CANDIDATE_MERGE_AT):
            chunk = changed[start : start + CANDIDATE_MERGE_AT]
            rows = self._store.fusion_rows(chunk, with_embeddings=True)
            last = start + CANDIDATE_MERGE_AT >= len(changed)  # a segment merged before then keeps the old
            # change number: the next open reads the rest again
            table.catch_up(seq if last else table.seq, chunk, rows, self._store.followed_by_neighbours(list(rows)))
            table = self._candidates = self._merge_candidates(table)
        table.seq = seq
        if first and len(changed) >= CANDIDATE_MERGE_MIN and table.segment.seq != seq:
            # Read from the store on open, the changes are written into a segment at this change number now: else
            # every later process (each `hebbs recall`) reads them again, until writes reach the merge threshold
            # (a 100k store built without `bulk`: 3.2 s of every fresh process's first recall, 40,000 changes).
            self._candidates = CandidateTable.on(self._saved(table.merged()))

    def _open_candidates(self) -> CandidateTable:
        """The table on its segment in the data dir, or rebuilt when that is missing or unusable."""
        segment = self._load_candidates()
        return CandidateTable.on(segment) if segment is not None else self._rebuild_candidates()

    def _load_candidates(self) -> CandidateSegment | None:
        """The candidate segment in the data dir, mapped; None when missing or unusable (see `CandidateSegment.load`;
        a segment replaced meanwhile is only older: the catch-up reads the changes since)."""
        key = self._postings.store_key()
        return CandidateSegment.load(self._candidate_folder, key, self._store.change_seq()) if key else None

    def _rebuild_candidates(self) -> CandidateTable:
        """The table from the whole record store (one pass), its segment saved in the data dir."""
        with _bulk_build():
            seq, columns, edges = self._store.candidate_rows()
            segment = CandidateTable(seq, columns, edges, self._postings.store_key()).segment
        return CandidateTable.on(self._saved(segment))

    def _merge_candidates(self, table: CandidateTable, force: bool = False) -> CandidateTable:
        """The table on a new segment once it holds many changes, or once a quarter of its rows are retired
        versions (those are left out); `force`: now, without any retired row (an erasure)."""
        compact = force or table.retired > max(CANDIDATE_MERGE_MIN, (len(table) + table.retired) // 4)
        if compact or table.held > max(CANDIDATE_MERGE_MIN, min(CANDIDATE_MERGE_AT, len(table) // 4)):
            return CandidateTable.on(self._saved(table.merged(compact)))
        return table

    def _saved(self, segment: CandidateSegment) -> CandidateSegment:
        """The segment saved and mapped back when it can be (else held in memory)."""
        if not segment.store_key or self._store.read_only:
            return segment
        try:
            return segment.save(self._candidate_folder)
        except OSError as exc:
            log.warning("candidate segment not saved (%s); kept in memory", exc)
            return segment

    def _erase_candidates(self) -> None:
        """Forgotten memories leave the candidate segment's files: a segment without retired rows, now."""
        with self._lock:
            self._catch_up()
            assert self._candidates is not None
            self._candidates = self._merge_candidates(self._candidates, force=True)
            self._candidates_at = None

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """A bulk import: the catch-up each commit does (`_follow`) waits for the end and is done once there.

        Caught up after every batch, the posting lists re-read each batch's rows and, as they grow, merged
        their segment again and again (the largest share of a profiled 20,000-memory build). Caught up once at
        the end, the changes are read once, or, when they are most of the store, the segments are rebuilt in
        one pass. A recall meanwhile still sees every commit (it catches up first).
        """
        with self._lock:
            self._deferring += 1
        try:
            yield
        finally:
            with self._lock:
                self._deferring -= 1
                if not self._deferring:
                    self._follow()

    def _follow(self) -> None:
        """Right after a commit of this engine: recall's segments catch up with it now (opened first if need
        be), so the next recall pays nothing for it and the next open finds them written, unless a bulk import
        defers it (`deferred`). With the lock held."""
        if self._deferring:
            return
        self._candidates_at = self._store.version()
        self._catch_up()
        self._postings.catch_up()

    def lexical_postings(self) -> LexicalPostings | None:
        """BM25 from posting lists in memory (engine/index/postings.py), caught up with the store's change log."""
        return self._postings

    def revision_ids(self) -> set[str]:
        """Revision memories: history, never returned by a strategy."""
        with self._lock:
            if self._revisions is None:
                self._revisions = set(self._store.ids_of_kind(MemoryKind.REVISION))
            return self._revisions

    def warm(self) -> None:
        """Build every index now (a server or a benchmark pays the cost up front, not on first recall)."""
        for _ in (self.vectors, self.timeline, self.graph, self.feature_index):
            pass
        self.candidates()
        self._postings.catch_up()  # the lexical segment mapped (or built)

    # --- a batch's vectors upserted before its commit -----------------------------------------------------
    def commit_with_vectors(self, ids: Sequence[str], vectors: np.ndarray, commit: Callable[[bool], None]) -> bool:
        """Upsert a batch's vectors, then run `commit(synced)`, the records' transaction: with `synced` (also
        returned) the records are stored marked synced, which spares the separate transaction that marks
        them after an upsert (`apply`). If the upsert fails, `synced` is False and `apply` upserts after the
        commit as usual; if the commit fails, the vectors leave the index again (or, after a crash in
        between, the next open drops them: `_reconcile`; recall only returns ids the store holds)."""
        index = self.vectors  # opened (and reconciled) before the lock: the open may erase, which takes it
        try:
            with self._upsert_first:
                try:
                    index.upsert(ids, vectors)
                    synced = True
                except Exception as exc:  # noqa: BLE001 - the commit goes ahead; `apply` upserts after it
                    log.warning("vector index not updated before the commit (%s); retried after it", exc)
                    synced = False
                commit(synced)
            return synced
        except BaseException:
            try:
                index.delete(ids)
            except Exception as exc:  # noqa: BLE001 - strays the next open drops
                log.warning("vectors of an uncommitted write left in the vector index (%s)", exc)
            raise

    # --- follow committed writes ---------------------------------------------------------------------------
    def apply(
        self, records: Sequence[MemoryRecord], edges: Sequence[Edge], *, vectors_synced: bool = False
    ) -> None:
        """After a commit: upsert vectors (then mark them synced) unless `vectors_synced` (upserted before the
        commit and stored marked synced: `commit_with_vectors`), and update the built in-memory indexes."""
        if records and not vectors_synced:
            ids = [r.memory.id for r in records]
            try:
                self.vectors.upsert(ids, np.stack([r.embedding for r in records]))
                self._store.mark_synced(ids)
            except Exception as exc:  # noqa: BLE001 - after the durable point nothing may report failure
                # The records are committed (durable) and still marked unsynced: the next open of the vector
                # index upserts them. Telling the caller the write failed would make it retry: duplicates.
                log.warning("vector index not updated (%s); it is reconciled when next opened", exc)
                with self._lock:
                    self._vectors = None
        with self._lock:
            for r in records:
                m = r.memory
                if m.kind == MemoryKind.REVISION:
                    if self._revisions is not None:
                        self._revisions.add(m.id)
                    continue
                if self._timeline is not None and m.entity_id is not None:
                    self._timeline.add(m.entity_id, to_micros(m.created_at), m.id)
                if self._structures is not None:
                    if r.structure_pending:
                        self._structures.remove([m.id])
                        self._awaiting.add(m.id)
                    else:
                        self._structures.add(m.id, r.structure.get("features", []))
                if self._plots is not None:
                    if r.structure_pending:
                        self._plots.remove([m.id])
                        self._plots_awaiting.add(m.id)
                    else:
                        self._plots.add(m.id, decode_plot(r.structure.get("plot")))
            self._add_to_graph(edges)
            self._follow()

    def add_edges(self, edges: Sequence[Edge]) -> None:
        """After a commit of edges alone."""
        with self._lock:
            self._add_to_graph(edges)
            self._follow()

    def _add_to_graph(self, edges: Iterable[Edge]) -> None:
        if self._graph is not None:
            for e in edges:
                self._graph.add(e)

    def others_changed(self, ids: Sequence[str]) -> None:
        """Memories another engine on a shared store changed (engine/index/replica.py): what is gone leaves
        every index; what exists is taken in again as it now is (vector, timeline place, features, edges)."""
        existing = self._store.existing(ids)
        self.drop([i for i in ids if i not in existing])
        present = [i for i in ids if i in existing]
        if not present:
            return
        records = [r for r in (self._store.get_record(i) for i in present) if r is not None]
        edges = self._store.edges_among(sorted({e.source if e.target == i else e.target for i in present
                                                for e in self._store.edges_of(i)} | set(present)))
        with self._lock:
            if self._timeline is not None:
                self._timeline.remove(present)
            if self._graph is not None:
                self._graph.remove_nodes(present)
        self.apply(records, edges)

    def unplace(self, ids: Sequence[str]) -> None:
        """Take memories off the timeline before they are re-added at a new place (a revised entity)."""
        with self._lock:
            if self._timeline is not None:
                self._timeline.remove(ids)

    def drop(self, ids: Sequence[str]) -> None:
        """After a committed delete: remove from the vector index (clearing the pending marks) and the rest."""
        if not ids:
            return
        try:
            self.vectors.delete(ids)
            self._store.clear_pending_deletes(ids)
        except Exception as exc:  # noqa: BLE001 - the delete is committed; pending marks finish it on reopen
            log.warning("vector index not updated after a delete (%s); it is reconciled when next opened", exc)
            with self._lock:
                self._vectors = None
        with self._lock:
            for index in (self._timeline, self._structures, self._plots):
                if index is not None:
                    index.remove(ids)
            if self._graph is not None:
                self._graph.remove_nodes(ids)
            if self._revisions is not None:
                self._revisions.difference_update(ids)
            self._awaiting.difference_update(ids)
            self._plots_awaiting.difference_update(ids)
            self._follow()

    def structures_replaced(self) -> None:
        """Structures were re-extracted in bulk: rebuild the feature and plot indexes on next use."""
        with self._lock:
            self._structures = self._plots = None
            self._awaiting, self._plots_awaiting = set(), set()

    def awaiting_structures(self) -> set[str]:
        """Memories the built feature or plot index leaves out because their structure was pending."""
        with self._lock:
            return self._awaiting | self._plots_awaiting

    def structures_filled(self, items: Iterable[tuple[str, dict[str, Any]]]) -> None:
        """Pending structures were extracted and stored (id, structure): the feature and plot indexes take them
        in."""
        with self._lock:
            for memory_id, structure in items:
                if self._structures is not None and memory_id in self._awaiting:
                    self._structures.add(memory_id, structure.get("features", []))
                if self._plots is not None and memory_id in self._plots_awaiting:
                    self._plots.add(memory_id, decode_plot(structure.get("plot")))
                self._awaiting.discard(memory_id)
                self._plots_awaiting.discard(memory_id)

    def erase(self, forgotten_vectors: Sequence[np.ndarray]) -> None:
        """After a committed, dropped delete: make sure no file of the vector index holds a forgotten vector
        (in any form Chroma keeps it, see `stored_forms`)."""
        self._erase(self.vectors, [form for v in forgotten_vectors for form in stored_forms(v)])

    def _erase(self, index: VectorIndex, needles: Sequence[bytes] | None) -> None:
        """Scrub the vector index's files, then clear the store's erase mark and checkpoint its WAL.

        Chroma's delete leaves the vector in its write-ahead queue and, once flushed, in the HNSW segment
        file. The queue rows of ids the store no longer has are deleted and Chroma's SQLite file VACUUMed
        (cheap). The HNSW file is rewritten, by rebuilding the collection from the stored embeddings, only
        when a forgotten vector is found in it (`needles` None, after a crash, means: assume it is).
        """
        if index.path is not None:
            with self._upsert_first:  # a batch upserted ahead of its commit commits before this, or after
                if needles is None or _files_hold(_segment_files(index.path), needles):
                    log.info("rebuilding the vector index so forgotten vectors leave its files")
                    index.rebuild(self._store.all_embeddings())
                    with index.exclusive():
                        orphans = vector_files.orphan_segment_dirs(index.path)
                    for orphan in orphans:
                        shutil.rmtree(orphan, ignore_errors=True)
                with index.exclusive():  # Chroma's file, opened by a second SQLite library in this process
                    vector_files.purge_queue(index.path, self._store.existing)
        self._store.purge_deleted_text()
        self._postings.erase()
        self._erase_candidates()
        self._store.clear_erase_pending()
        self._store.checkpoint()

    def edges_replaced(self) -> None:
        """Derived edges were replaced in bulk (ingestion's linking pass): rebuild the graph on next use."""
        with self._lock:
            self._graph = None


def _segment_files(chroma_dir: Path) -> list[Path]:
    return [p for d in chroma_dir.iterdir() if d.is_dir() for p in d.rglob("*") if p.is_file()]


def _files_hold(paths: Iterable[Path], needles: Sequence[bytes]) -> bool:
    """Whether any file contains any needle (read in overlapping blocks: memory stays bounded)."""
    if not needles:
        return False
    overlap = max(len(n) for n in needles) - 1
    keys = np.unique(np.array([np.frombuffer(n[:8], dtype=np.uint64)[0] for n in needles if len(n) >= 8]))
    for path in paths:
        try:
            with path.open("rb") as f:
                tail = b""
                while block := f.read(1 << 22):
                    data = tail + block
                    if _block_holds(data, needles, keys):
                        return True
                    tail = data[-overlap:] if overlap else b""
        except OSError:
            continue
    return False


def _block_holds(data: bytes, needles: Sequence[bytes], keys: np.ndarray) -> bool:
    """A few needles: plain substring search. Many (forgetting an entity): float32 vectors sit at 4-byte
    aligned offsets, so look their first 8 bytes up at every such offset at once, then confirm."""
    if len(needles) <= 8 or len(keys) == 0:
        return any(n in data for n in needles)
    wanted = set(needles)
    size = len(needles[0])
    for shift in (0, 4):
        usable = (len(data) - shift) // 8 * 8
        if usable <= 0:
            continue
        words = np.frombuffer(data, dtype=np.uint64, count=usable // 8, offset=shift)
        for index in np.flatnonzero(np.isin(words, keys)):
            start = shift + int(index) * 8
            if data[start : start + size] in wanted:
                return True
    return False


@contextmanager
def _bulk_build() -> Iterator[None]:
    """Pause the cyclic garbage collector while an index is rebuilt from the store.

    A rebuild allocates hundreds of thousands of objects that all stay alive; the collector kept rescanning
    them and took two thirds of the time to open a 100,000-memory store. Nothing built here forms cycles
    that need collecting, and the collector resumes as soon as the build ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # What was just built lives long: full collections need not walk it again (about 350 ms at 100k
        # memories). `gc.freeze` is process-wide: every object alive now is frozen, the host program's too.
        gc.freeze()
        if enabled:
            gc.enable()
