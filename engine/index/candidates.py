"""`CandidateTable`: what a fused recall reads of each candidate, held in memory.

A fused recall reads, for a pool of a few hundred candidates, each one's episode key, embedding and entity,
and the `followed_by` links around them; with an exact search it also compares the cue with every stored
embedding. Read from SQLite on every recall that cost about as much as the rest of the recall. The table
holds the same values, read from the record store in one pass once, with the store's change number
(`Storage.change_seq`) at the time, and then catches up with the store's change log (`catch_up`, called by
`DerivedIndexes` right after each write of this engine and before a recall once anything else committed):
the memories changed since are read again, whoever changed them. A new memory is appended, a changed one
appended again under its id with its old row retired, a forgotten one retired, and the changed memories'
`followed_by` links replaced. Rows are never changed in place: a recall holding an embedding row keeps
seeing the values it read. Once retired rows are a quarter of the table it is copied without them
(`compacted`, in memory: nothing is read from the store).

Values are exactly those of `Storage.fusion_rows` / `followed_by_neighbours` (tests/engine/
test_recall_parity.py compares recalls with and without the table); an exact search here is the cosine of
the cue with every stored embedding, what HNSW asked for every memory approximates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from engine.index.vector import Neighbour
from engine.store.rows import CandidateColumns, FusionRow


class CandidateTable:
    def __init__(
        self, seq: int, memories: CandidateColumns, edges: Iterable[tuple[str, str]]
    ) -> None:
        """`seq`: the change number the columns were read at; `memories`: every memory's id, episode key, entity
        id and embedding (`Storage.candidate_rows`); `edges`: every followed_by edge as (source, target)."""
        self.seq = seq
        count = len(memories.ids)
        width = memories.embeddings.shape[1] if memories.embeddings.ndim == 2 else 0
        # The store's matrix itself (no copy); the first append past it grows it.
        self._matrix = memories.embeddings if count else np.empty((16, width), dtype=np.float32)
        self._ids: list[str] = list(memories.ids)  # by row; a retired row keeps its old id
        self._keys: list[str] = list(memories.episodes)
        self._entities: list[str | None] = list(memories.entities)
        self._alive = np.zeros(len(self._matrix), dtype=bool)
        self._alive[:count] = True
        self.slot = {memory_id: n for n, memory_id in enumerate(self._ids)}  # id -> its current row
        # Each memory's row without its embedding, made once: most reads want just these (the embeddings are
        # gathered from the matrix in one step by `embeddings`).
        self._plain = {i: FusionRow(k, None, e) for i, k, e in zip(self._ids, self._keys, self._entities, strict=True)}
        self._retired = 0
        self._former: dict[str, int] = {}  # retired ids' last rows (never overwritten): for recalls in flight
        adjacent: dict[str, set[str]] = {}
        for a, b in edges:
            adjacent.setdefault(a, set()).add(b)
            adjacent.setdefault(b, set()).add(a)
        # Values are replaced, never changed in place, once the table is shared: a recall may be iterating one.
        # (Tuples: a frozenset of one or two ids costs four times the memory.)
        self._adjacent: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in adjacent.items()}

    def __len__(self) -> int:
        return len(self.slot)

    @property
    def retired(self) -> int:
        """Rows no id points to any more (forgotten or replaced): what a rebuild would reclaim."""
        return self._retired

    def rows(self, ids: Iterable[str], with_embeddings: bool) -> dict[str, FusionRow]:
        """`Storage.fusion_rows` of the given ids (those that exist)."""
        if not with_embeddings:
            plain = self._plain
            return {i: row for i in ids if (row := plain.get(i)) is not None}
        out: dict[str, FusionRow] = {}
        slot = self.slot
        for i in ids:
            n = slot.get(i)
            if n is not None:  # the matrix read after the slot: a row appended meanwhile may be in a grown one
                out[i] = FusionRow(self._keys[n], self._matrix[n], self._entities[n])
        return out

    def embeddings(self, ids: Sequence[str]) -> np.ndarray:
        """The stored embeddings of the given ids (each must exist), one row each, in order."""
        slot, former = self.slot, self._former  # an id forgotten since the caller read it: its last row
        rows = [n if (n := slot.get(i)) is not None else former[i] for i in ids]
        return self._matrix[rows]  # read after the slots (see `rows`)

    def followed_by(self, ids: Iterable[str]) -> dict[str, set[str]]:
        """`Storage.followed_by_neighbours`: both directions of the followed_by edges touching the ids."""
        out: dict[str, set[str]] = {}
        for i in ids:
            linked = self._adjacent.get(i)
            if linked:
                out.setdefault(i, set()).update(linked)
                for n in linked:
                    out.setdefault(n, set()).add(i)
        return out

    def locate(self, ids: Iterable[str]) -> tuple[list[str], list[int]]:
        """The ids that exist, in order, and their rows: what `episodes_at`, `entities_at` and `embeddings_at`
        read (a row is never changed in place, so rows located once stay valid for the recall)."""
        slot = self.slot
        found: list[str] = []
        rows: list[int] = []
        for i in ids:
            n = slot.get(i)
            if n is not None:
                found.append(i)
                rows.append(n)
        return found, rows

    def episodes_at(self, rows: Iterable[int]) -> list[str]:
        keys = self._keys
        return [keys[n] for n in rows]

    def entities_at(self, rows: Iterable[int]) -> list[str | None]:
        entities = self._entities
        return [entities[n] for n in rows]

    def embeddings_at(self, rows: Sequence[int]) -> np.ndarray:
        """The embeddings of the given rows, one row each (the matrix read after the rows were located)."""
        return self._matrix[np.asarray(rows, dtype=np.intp)]

    def neighbours(self, ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Every followed_by neighbour (both directions) of each of the ids that has one: the table's own
        tuples, shared (never changed in place), so nothing is built per id."""
        adjacent = self._adjacent
        return {i: linked for i in ids if (linked := adjacent.get(i))}

    def nearest(self, cue: np.ndarray, k: int) -> list[Neighbour]:
        """The k stored embeddings nearest the cue by cosine distance, exactly (ties: by id)."""
        if k <= 0 or not self.slot:
            return []
        end = len(self._ids)
        distances = 1.0 - self._matrix[:end] @ np.asarray(cue, dtype=np.float32)
        live = np.flatnonzero(self._alive[:end])
        k = min(k, len(live))
        best = live[np.argpartition(distances[live], k - 1)[:k]] if k < len(live) else live
        ordered = sorted(best.tolist(), key=lambda n: (float(distances[n]), self._ids[n]))
        return [Neighbour(self._ids[n], float(distances[n])) for n in ordered]

    # --- catching up with the store's changes (`DerivedIndexes`, under its lock) -----------------------------------
    def catch_up(
        self, seq: int, changed: Sequence[str], rows: Mapping[str, FusionRow], links: Mapping[str, Iterable[str]]
    ) -> None:
        """The store at change `seq`: the `changed` memories' current rows (`fusion_rows` with embeddings; a
        changed id without one was forgotten) and followed_by neighbours (`followed_by_neighbours`)."""
        for memory_id in changed:
            row = rows.get(memory_id)
            if row is None:
                self._retire(memory_id)
            elif not self._holds(memory_id, row):  # (an edge alone changes no row)
                self._append(memory_id, row)
            now = set(links.get(memory_id, ())) if row is not None else set()
            before = set(self._adjacent.get(memory_id, ()))
            for n in before - now:
                rest = tuple(x for x in self._adjacent.get(n, ()) if x != memory_id)
                if rest:
                    self._adjacent[n] = rest
                else:
                    self._adjacent.pop(n, None)
            for n in now - before:
                self._adjacent[n] = (*self._adjacent.get(n, ()), memory_id)
            if now:
                self._adjacent[memory_id] = tuple(sorted(now))
            else:
                self._adjacent.pop(memory_id, None)
        self.seq = seq

    def compacted(self) -> CandidateTable:
        """A copy without the retired rows (recalls holding this table keep it as it is)."""
        live = np.flatnonzero(self._alive[: len(self._ids)])
        columns = CandidateColumns(
            [self._ids[n] for n in live], [self._keys[n] for n in live], [self._entities[n] for n in live],
            self._matrix[live],
        )
        table = CandidateTable(self.seq, columns, ())
        table._adjacent = dict(self._adjacent)
        return table

    def _holds(self, memory_id: str, row: FusionRow) -> bool:
        n = self.slot.get(memory_id)
        return (n is not None and self._keys[n] == row.episode and self._entities[n] == row.entity_id
                and np.array_equal(self._matrix[n], row.embedding))  # type: ignore[arg-type]

    def _retire(self, memory_id: str) -> None:
        n = self.slot.get(memory_id)
        if n is not None:
            self._former[memory_id] = n
            del self.slot[memory_id]
            self._plain.pop(memory_id, None)
            self._alive[n] = False
            self._retired += 1

    def _append(self, memory_id: str, row: FusionRow) -> None:
        """A new row for the memory (its old one, if any, retired): rows a recall may hold stay as they were."""
        assert row.embedding is not None
        end = len(self._ids)
        width = len(row.embedding)
        if end == len(self._matrix) or width != self._matrix.shape[1]:  # grow by half: amortised appends; the
            # old buffer lives on in the rows recalls hold (a width change happens only to an empty table)
            grown = np.empty((max(16, end + end // 2), width), dtype=np.float32)
            if end:
                grown[:end] = self._matrix[:end]
            alive = np.zeros(len(grown), dtype=bool)
            alive[:end] = self._alive[:end]
            self._matrix, self._alive = grown, alive
        self._matrix[end] = row.embedding
        self._keys.append(row.episode)
        self._entities.append(row.entity_id)
        self._ids.append(memory_id)
        self._alive[end] = True
        old = self.slot.get(memory_id)
        self.slot[memory_id] = end
        self._plain[memory_id] = FusionRow(row.episode, None, row.entity_id)
        self._former.pop(memory_id, None)
        if old is not None:
            self._alive[old] = False
            self._retired += 1
