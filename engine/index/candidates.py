"""`CandidateTable`: what a fused recall reads of each candidate, from files in the data dir.

A fused recall reads, for a pool of a few hundred candidates, each one's episode key, embedding and entity,
and the `followed_by` links around them; with an exact search it also compares the cue with every stored
embedding. Read from SQLite on every recall that cost about as much as the rest of the recall, and read
whole into Python objects on every open it made reopening grow with the store. The table is a segment
(engine/index/candidate_segment.py: memory-mapped arrays under `<data dir>/candidates/`, as of one change
number of the store) plus the changes since, held in memory: `catch_up` (called by `DerivedIndexes` right
after each write of this engine and before a recall once anything else committed) reads again the memories
changed since, whoever changed them. A new memory gets a new row, a changed one a new row under its id
with its old row retired, a forgotten one is retired, and the changed memories' `followed_by` links are
replaced. Rows are never changed in place: a recall holding a row keeps seeing the values it read. Once
the changes held are many, `merged` makes the next segment (only the new rows' embeddings are written).

Values are exactly those of `Storage.fusion_rows` / `followed_by_neighbours` (tests/engine/
test_recall_parity.py compares recalls with and without the table; tests/engine/test_change_log.py compares
the caught-up table with a rebuild); an exact search here is the cosine of the cue with every stored
embedding, what HNSW asked for every memory approximates.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence

import numpy as np

from engine.index.candidate_segment import CandidateSegment, assemble, encode_ids, row_dots
from engine.index.sorted_rows import members_of
from engine.index.vector import Neighbour
from engine.store.rows import CandidateColumns, FusionRow


class CandidateTable:
    def __init__(self, seq: int, memories: CandidateColumns, edges: Iterable[tuple[str, str]],
                 store_key: str = "") -> None:
        """The table of `Storage.candidate_rows` (a rebuild from the record store: `seq`, the change number the
        columns were read at; `memories`, every memory's id, episode key, entity id and embedding; `edges`,
        every followed_by edge as (source, target)), on a segment held in memory until saved."""
        count = len(memories.ids)
        row = {memory_id: n for n, memory_id in enumerate(memories.ids)}
        edges = list(edges)
        pairs = np.array([(row[a], row[b]) for a, b in edges if a in row and b in row], dtype=np.int64).reshape(-1, 2)
        codes: dict[str, int] = {}
        episodes = np.array([codes.setdefault(k, len(codes)) for k in memories.episodes], dtype=np.int32)
        entities = np.array([-1 if e is None else codes.setdefault(e, len(codes)) for e in memories.entities],
                            dtype=np.int32)
        width = memories.embeddings.shape[1] if memories.embeddings.ndim == 2 else 0
        block = np.ascontiguousarray(memories.embeddings, dtype=np.float32).reshape(count, width)
        links = (np.concatenate([pairs[:, 0], pairs[:, 1]]), np.concatenate([pairs[:, 1], pairs[:, 0]]))
        self._attach(assemble(seq, store_key, (block,), (("", 0),), encode_ids(memories.ids),
                              np.ones(count, dtype=bool), episodes, entities, list(codes), links))
        # An edge with an end that is no memory (a store that does not delete edges with their memories) has no
        # row to link: the links of its ends are held by id, as the store answers them.
        touched = {x for a, b in edges if a not in row or b not in row for x in (a, b)}
        if touched:
            held: dict[str, set[str]] = {}
            for a, b in edges:
                if a in touched:
                    held.setdefault(a, set()).add(b)
                if b in touched:
                    held.setdefault(b, set()).add(a)
            self._adjacent.update((i, tuple(sorted(linked))) for i, linked in held.items())

    @classmethod
    def on(cls, segment: CandidateSegment) -> CandidateTable:
        """The table as of a segment's change number (one loaded from the data dir); `catch_up` brings it on."""
        table = cls.__new__(cls)
        table._attach(segment)
        return table

    def _attach(self, segment: CandidateSegment) -> None:
        self.segment = segment
        self.seq = segment.seq
        self._base = segment.rows  # rows below are the segment's, the rest are held here
        self._alive = np.array(segment.alive, dtype=bool)  # every row's (a private copy: rows retire)
        self._matrix = np.empty((16, segment.width), dtype=np.float32)  # the rows added since, grown by half
        self._ids: list[str] = []  # rows added since: by row - base (a retired row keeps its old id)
        self._keys: list[str] = []
        self._entities: list[str | None] = []
        self._moved: dict[str, int] = {}  # id -> its current row (-1: forgotten), where it changed since
        self._former: dict[str, int] = {}  # retired ids' last rows: for recalls in flight
        # Ids whose followed_by neighbours changed since the segment -> them now (both directions; () for none).
        # Values are replaced, never changed in place: a recall may be iterating one.
        self._adjacent: dict[str, tuple[str, ...]] = {}
        self._live = segment.live
        self._retired = segment.rows - segment.live
        self._entity_names: tuple[tuple[int, int], tuple[str, ...]] | None = None
        self._names: list[str | None] = [*segment.strings, None]  # by code; -1 (no entity) is the last
        self._string_codes: dict[str, int] | None = None  # `_code_of`: made on first use
        self._new_strings: list[str] = []  # strings numbered after the segment's
        self._excluded_rows: tuple[tuple[int, int], np.ndarray] | None = None
        self._name_index: dict[str, list[int]] | None = None  # `named_at`: made on first use
        self._id_rank: np.ndarray | None = None  # `id_order`: made on first use

    @property
    def slot(self) -> Slots:
        """The live ids, as a read-only mapping to their rows (`id in table.slot`, `sorted(table.slot)`)."""
        return Slots(self)

    def __len__(self) -> int:
        return self._live

    @property
    def retired(self) -> int:
        """Rows no id points to any more (forgotten or replaced): what a compacting merge reclaims."""
        return self._retired

    @property
    def held(self) -> int:
        """Memories changed since the segment (each changed one's links are held, its row too if it moved):
        what the next segment would take in."""
        return len(self._adjacent)

    def rows(self, ids: Iterable[str], with_embeddings: bool) -> dict[str, FusionRow]:
        """`Storage.fusion_rows` of the given ids (those that exist)."""
        found, rows = self.locate(ids)
        keys, entities = self.episodes_at(rows), self.entities_at(rows)
        matrix = self.embeddings_at(rows) if with_embeddings and rows else None
        return {i: FusionRow(keys[n], None if matrix is None else matrix[n], entities[n])
                for n, i in enumerate(found)}

    def embeddings(self, ids: Sequence[str]) -> np.ndarray:
        """The stored embeddings of the given ids (each must exist, or have existed), one row each, in order."""
        rows = self._find(ids)
        for n in np.flatnonzero(rows < 0).tolist():  # an id forgotten since the caller read it: its last row
            former = self._former.get(ids[n])
            rows[n] = former if former is not None else int(self.segment.find([ids[n]])[0])
        if (rows < 0).any():
            raise KeyError("no stored embedding for some ids")
        return self.embeddings_at(rows)

    def followed_by(self, ids: Iterable[str]) -> dict[str, set[str]]:
        """`Storage.followed_by_neighbours`: both directions of the followed_by edges touching the ids."""
        out: dict[str, set[str]] = {}
        for i, linked in self.neighbours(ids).items():
            out.setdefault(i, set()).update(linked)
            for n in linked:
                out.setdefault(n, set()).add(i)
        return out

    def locate(self, ids: Iterable[str]) -> tuple[list[str], list[int]]:
        """The ids that exist, in order, and their rows: what `episodes_at`, `entities_at` and `embeddings_at`
        read (a row is never changed in place, so rows located once stay valid for the recall)."""
        ids = ids if isinstance(ids, list) else list(ids)
        rows = self._find(ids)
        if rows.min(initial=0) >= 0:
            return ids, rows.tolist()
        kept = np.flatnonzero(rows >= 0).tolist()
        return [ids[n] for n in kept], rows[kept].tolist()

    def episodes_at(self, rows: Iterable[int]) -> list[str]:
        return self._column_at(rows, self.segment.episodes, self._keys)  # type: ignore[return-value]

    def entities_at(self, rows: Iterable[int]) -> list[str | None]:
        return self._column_at(rows, self.segment.entities, self._entities)

    def named_at(self, rows: np.ndarray, words: Collection[str], name_words: Callable[[str], Collection[str]]
                 ) -> np.ndarray:
        """Whether each row's entity has a word of its name (`name_words`) among `words` (bool): the segment's rows
        by their entity codes, looked up in an index of every segment entity's name words (made on first use: one
        pass over the distinct entities, not a check of each candidate's entity on every recall), the rows added
        since by their entity."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros(len(rows), dtype=bool)
        if not words or not len(rows):
            return out
        segment, base = self.segment, self._base
        if self._name_index is None:
            index: dict[str, list[int]] = {}
            codes = segment.entities
            used = np.bincount(codes[codes >= 0], minlength=len(segment.strings)) if len(codes) else codes
            for code in np.flatnonzero(used).tolist():
                for word in name_words(segment.strings[code]):
                    index.setdefault(word, []).append(code)
            self._name_index = index
        named = sorted({code for word in words for code in self._name_index.get(word, ())})
        mine = rows < base
        if named:
            out[mine] = members_of(np.array(named, dtype=np.int64), segment.entities[rows[mine]].astype(np.int64))
        for n in np.flatnonzero(~mine).tolist():
            entity = self._entities[int(rows[n]) - base]
            out[n] = entity is not None and not set(name_words(entity)).isdisjoint(words)
        return out

    def id_order(self, rows: np.ndarray) -> np.ndarray | None:
        """A number per row that sorts the rows as their ids sort (each row's id's place among the segment's live
        ids), or None when some row was added since the segment (its place among them is not kept)."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) and rows.max() >= self._base:
            return None
        if self._id_rank is None:
            rank = np.full(self.segment.rows, -1, dtype=np.int64)
            rank[np.asarray(self.segment.sorted_rows)] = np.arange(self.segment.live)
            self._id_rank = rank
        return self._id_rank[rows]

    def _column_at(self, rows: Iterable[int], codes: np.ndarray, held: list[str | None] | list[str]
                   ) -> list[str | None]:
        """A string column at the given rows: the segment's codes looked up in one pass (code -1 is None, the
        last of `_names`), the rows added since from `held`."""
        rows = rows if isinstance(rows, list) else list(rows)
        base, names = self._base, self._names
        if not rows or max(rows) < base:
            return list(map(names.__getitem__, codes[rows].tolist()))
        return [names[codes[n]] if n < base else held[n - base] for n in rows]

    def embeddings_at(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """The embeddings of the given rows, one row each (the matrix read after the rows were located)."""
        rows = np.asarray(rows, dtype=np.int64)
        base, matrix = self._base, self._matrix
        if not len(rows) or rows.max() < base:
            return self.segment.embeddings_at(rows)
        if rows.min() >= base:
            return matrix[rows - base]
        out = np.empty((len(rows), matrix.shape[1]), dtype=np.float32)
        mine = rows < base
        out[mine] = self.segment.embeddings_at(rows[mine])
        out[~mine] = matrix[rows[~mine] - base]
        return out

    def neighbours(self, ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Every followed_by neighbour (both directions) of each of the ids that has one."""
        adjacent = self._adjacent
        out: dict[str, tuple[str, ...]] = {}
        rest: list[str] = []
        for i in ids:
            linked = adjacent.get(i)
            if linked is None:
                rest.append(i)
            elif linked:
                out[i] = linked
        if rest:
            out.update(self._segment_neighbours(rest))
        return out

    # --- a fused recall's pool by row number (engine/recall/fusion.py) ----------------------------------------
    def rows_of(self, ids: Sequence[str]) -> np.ndarray:
        """Each id's current row, or -1 (int64, one per id)."""
        return self._find(ids)

    def keys_at(self, rows: np.ndarray) -> np.ndarray:
        """The ids of the given rows as UTF-8 bytes (an `S` array): sorted, they are in the ids' order."""
        rows = np.asarray(rows, dtype=np.int64)
        base = self._base
        if not len(rows) or rows.max() < base:
            return self.segment.ids[rows]
        added = encode_ids([self._ids[r - base] for r in rows[rows >= base].tolist()], self.segment.ids.itemsize)
        out = np.empty(len(rows), dtype=added.dtype)
        mine = rows < base
        out[mine] = self.segment.ids[rows[mine]]
        out[~mine] = added
        return out

    def episode_codes_at(self, rows: np.ndarray) -> np.ndarray:
        """Each row's episode key as a number (int64): equal keys, equal numbers; `episode_key` names one."""
        rows = np.asarray(rows, dtype=np.int64)
        base = self._base
        if not len(rows) or rows.max() < base:
            return self.segment.episodes[rows].astype(np.int64)
        out = np.empty(len(rows), dtype=np.int64)
        mine = rows < base
        out[mine] = self.segment.episodes[rows[mine]]
        out[~mine] = [self._code_of(self._keys[r - base]) for r in rows[~mine].tolist()]
        return out

    def episode_key(self, code: int) -> str:
        """The episode key an `episode_codes_at` number stands for."""
        strings = self.segment.strings
        return strings[code] if code < len(strings) else self._new_strings[code - len(strings)]

    def _code_of(self, key: str) -> int:
        """A string's number: its index in the segment's strings, else one after them (made on first use)."""
        if self._string_codes is None:
            self._string_codes = {s: n for n, s in enumerate(self.segment.strings)}
        code = self._string_codes.get(key)
        if code is None:
            code = self._string_codes[key] = len(self.segment.strings) + len(self._new_strings)
            self._new_strings.append(key)
        return code

    def excluded_rows(self, excluded: Collection[str]) -> np.ndarray:
        """The current rows of the `excluded` ids (the revisions) that have one, sorted (made once per change)."""
        key = (self.seq, len(excluded))
        if self._excluded_rows is None or self._excluded_rows[0] != key:
            rows = self._find(list(excluded)) if excluded else np.zeros(0, dtype=np.int64)
            self._excluded_rows = (key, np.sort(rows[rows >= 0]))
        return self._excluded_rows[1]

    def link_rows(self, ids: Sequence[str], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every followed_by neighbour (both directions) of the given memories that exists, as (index into `ids`,
        the neighbour's current row) pairs: `neighbours` by row number, no id decoded. `rows`: each id's current
        row (-1 for none: such an id has only the links held by id). Unchanged memories' links come from the
        segment's compressed rows in one gather (a neighbour that moved or went since is followed by id);
        changed ones' from the links held by id."""
        rows = np.asarray(rows, dtype=np.int64)
        adjacent, base, segment = self._adjacent, self._base, self.segment
        held = (np.fromiter(map(adjacent.__contains__, ids), dtype=bool, count=len(ids)) if adjacent
                else np.zeros(len(ids), dtype=bool))
        plain = np.flatnonzero(~held & (rows >= 0) & (rows < base))
        starts = segment.adj_starts[rows[plain]]
        counts = segment.adj_starts[rows[plain] + 1] - starts
        total = int(counts.sum())
        source = np.repeat(plain, counts)
        offsets = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total, dtype=np.int64)
        target = segment.adj_rows[offsets].astype(np.int64)
        gone = np.flatnonzero(~self._alive[target])
        if len(gone):  # retired since the segment: the memory's row now (moved), or none (forgotten)
            moved = self._moved
            for n, memory_id in zip(gone.tolist(), segment.id_at(target[gone]), strict=True):
                target[n] = moved.get(memory_id, -1)
        changed = np.flatnonzero(held)
        if len(changed):  # the links held by id, every one looked up in one call (not one search per memory)
            lists = [adjacent[ids[n]] for n in changed.tolist()]
            counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
            if counts.sum():
                source = np.concatenate([source, np.repeat(changed, counts)])
                target = np.concatenate([target, self._find([i for linked in lists for i in linked])])
        keep = target >= 0
        return source[keep], target[keep]

    def entities(self, excluded: Collection[str]) -> tuple[str, ...]:
        """Every entity id of a memory not in `excluded` (the revisions), sorted: the timeline's `entities`
        without building the timeline (a count over the segment's entity codes, made once per change)."""
        key = (self.seq, len(excluded))
        if self._entity_names is not None and self._entity_names[0] == key:
            return self._entity_names[1]
        segment, base = self.segment, self._base
        keep = self._alive[:base].copy()
        if excluded:
            rows = segment.find(list(excluded))
            keep[rows[rows >= 0]] = False
        codes = segment.entities[keep]
        used = np.bincount(codes[codes >= 0], minlength=len(segment.strings))
        names = {segment.strings[c] for c in np.flatnonzero(used).tolist()}
        for n, (i, entity) in enumerate(zip(self._ids, self._entities, strict=True)):
            if entity is not None and self._alive[base + n] and i not in excluded:
                names.add(entity)
        found = tuple(sorted(names))
        self._entity_names = (key, found)
        return found

    def nearest(self, cue: np.ndarray, k: int) -> list[Neighbour]:
        """The k stored embeddings nearest the cue by cosine distance, exactly (ties: by id)."""
        if k <= 0 or not self._live:
            return []
        cue = np.asarray(cue, dtype=np.float32)
        end = self._base + len(self._ids)
        distances = 1.0 - np.concatenate([self.segment.products(cue), row_dots(self._matrix[: len(self._ids)], cue)])
        live = np.flatnonzero(self._alive[:end])
        k = min(k, len(live))
        best = live
        if k < len(live):  # the k nearest and every row as near as the k-th: a tie at the cut is settled by id
            near = distances[live]
            best = live[near <= np.partition(near, k - 1)[k - 1]]
        names = dict(zip(best.tolist(), self._id_at(best.tolist()), strict=True))
        ordered = sorted(names, key=lambda n: (float(distances[n]), names[n]))[:k]
        return [Neighbour(names[n], float(distances[n])) for n in ordered]

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
            before = set(self._linked(memory_id))
            for n in before - now:
                self._adjacent[n] = tuple(x for x in self._linked(n) if x != memory_id)
            for n in now - before:
                self._adjacent[n] = (*self._linked(n), memory_id)
            self._adjacent[memory_id] = tuple(sorted(now))
        self.seq = seq

    def merged(self, compact: bool = False) -> CandidateSegment:
        """The next segment: this one's rows and the changes held, as of `seq` (its new block not yet written).
        `compact`: without the retired rows (their embeddings leave the files; every block is written anew)."""
        segment, base, added = self.segment, self._base, len(self._ids)
        total = base + added
        alive = self._alive[:total].copy()
        current = np.arange(segment.rows, dtype=np.int64)  # a segment row -> its memory's current row (or -1)
        moved = list(self._moved)
        if moved:
            old = segment.find(moved)
            hit = old >= 0
            current[old[hit]] = np.array([self._moved[i] for i in moved], dtype=np.int64)[hit]
        # Links: the segment's, for rows whose links did not change, then the changed ones'.
        changed = self.segment.find(list(self._adjacent))
        keep = alive[:base].copy()
        keep[changed[changed >= 0]] = False
        counts = np.diff(segment.adj_starts)
        source = np.repeat(np.arange(base, dtype=np.int64), counts)
        target = current[segment.adj_rows.astype(np.int64)]
        mask = keep[source] & (target >= 0)
        held = list(self._adjacent.values())
        held_rows = np.repeat(self._find(list(self._adjacent)), [len(linked) for linked in held])
        linked_rows = self._find([n for linked in held for n in linked])
        both = (held_rows >= 0) & (linked_rows >= 0)
        pairs = (np.concatenate([source[mask], held_rows[both]]), np.concatenate([target[mask], linked_rows[both]]))
        strings = list(segment.strings)
        codes = {s: n for n, s in enumerate(strings)}
        episodes = np.concatenate([segment.episodes, np.array(
            [codes.setdefault(k, len(codes)) for k in self._keys], dtype=np.int32)])
        entities = np.concatenate([segment.entities, np.array(
            [-1 if e is None else codes.setdefault(e, len(codes)) for e in self._entities], dtype=np.int32)])
        strings.extend(list(codes)[len(strings):])
        ids = np.concatenate([segment.ids, encode_ids(self._ids)]) if added else np.asarray(segment.ids)
        blocks, files = list(segment.blocks), list(segment.block_files)
        if compact:
            rows = np.flatnonzero(alive)
            number = np.full(total, -1, dtype=np.int64)
            number[rows] = np.arange(len(rows))
            pairs = (number[pairs[0]], number[pairs[1]])
            return assemble(self.seq, segment.store_key, (self.embeddings_at(rows),), (("", 0),), ids[rows],
                            np.ones(len(rows), dtype=bool), episodes[rows], entities[rows], strings, pairs)
        if added:
            block = np.array(self._matrix[:added])
            while len(blocks) > 1 and len(blocks[-1]) <= 2 * len(block):  # fold small blocks: few files
                block = np.concatenate([blocks.pop(), block])
                files.pop()
            if len(blocks) == 1 and not len(blocks[0]):
                blocks, files = [], []
            blocks.append(block)
            files.append(("", 0))
        return assemble(self.seq, segment.store_key, tuple(blocks), tuple(files), ids, alive, episodes, entities,
                        strings, pairs)

    def _find(self, ids: Sequence[str]) -> np.ndarray:
        """Each id's current row, or -1 (int64)."""
        rows = self.segment.find(ids)
        moved = self._moved
        if moved:
            for n, r in enumerate(map(moved.get, ids)):
                if r is not None:
                    rows[n] = r
        return rows

    def _id_at(self, rows: Sequence[int]) -> list[str]:
        base = self._base
        mine = [r for r in rows if r < base]
        names = iter(self.segment.id_at(mine)) if mine else iter(())
        return [next(names) if r < base else self._ids[r - base] for r in rows]

    def _segment_neighbours(self, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The segment's links of ids whose links did not change since, from its compressed rows in one gather."""
        segment = self.segment
        rows = segment.find(ids)
        has = rows >= 0
        rows = rows[has]
        starts, ends = segment.adj_starts[rows], segment.adj_starts[rows + 1]
        counts = ends - starts
        if not counts.any():
            return {}
        offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        linked = segment.adj_rows[offsets + np.arange(int(counts.sum()))]
        names = [b.decode() for b in segment.ids[linked].tolist()]
        out: dict[str, tuple[str, ...]] = {}
        at = 0
        for i, count in zip([i for i, h in zip(ids, has.tolist(), strict=True) if h], counts.tolist(), strict=True):
            if count:
                out[i] = tuple(names[at : at + count])
                at += count
        return out

    def _linked(self, memory_id: str) -> tuple[str, ...]:
        linked = self._adjacent.get(memory_id)
        return linked if linked is not None else self._segment_neighbours([memory_id]).get(memory_id, ())

    def _holds(self, memory_id: str, row: FusionRow) -> bool:
        n = int(self._find([memory_id])[0])
        if n < 0:
            return False
        return (self.episodes_at([n])[0] == row.episode and self.entities_at([n])[0] == row.entity_id
                and np.array_equal(self.embeddings_at([n])[0], row.embedding))  # type: ignore[arg-type]

    def _retire(self, memory_id: str) -> None:
        n = int(self._find([memory_id])[0])
        if n >= 0:
            self._former[memory_id] = n
            self._moved[memory_id] = -1
            self._alive[n] = False
            self._live -= 1
            self._retired += 1

    def _append(self, memory_id: str, row: FusionRow) -> None:
        """A new row for the memory (its old one, if any, retired): rows a recall may hold stay as they were."""
        assert row.embedding is not None
        added = len(self._ids)
        width = len(row.embedding)
        if added == len(self._matrix) or width != self._matrix.shape[1]:  # grow by half: amortised appends; the
            # old buffer lives on in the rows recalls hold (a width change happens only to an empty table)
            grown = np.empty((max(16, added + added // 2), width), dtype=np.float32)
            if added:
                grown[:added] = self._matrix[:added]
            self._matrix = grown
        end = self._base + added
        if end >= len(self._alive):
            alive = np.zeros(max(16, end + end // 2), dtype=bool)
            alive[: len(self._alive)] = self._alive
            self._alive = alive
        self._matrix[added] = row.embedding
        self._keys.append(row.episode)
        self._entities.append(row.entity_id)
        self._ids.append(memory_id)
        self._alive[end] = True
        old = int(self._find([memory_id])[0])
        self._moved[memory_id] = end
        self._former.pop(memory_id, None)
        self._live += 1
        if old >= 0:
            self._alive[old] = False
            self._live -= 1
            self._retired += 1


class Slots(Mapping[str, int]):
    """A table's live ids and their rows, read through the table (nothing is copied)."""

    def __init__(self, table: CandidateTable) -> None:
        self._table = table

    def __getitem__(self, memory_id: str) -> int:
        row = int(self._table._find([memory_id])[0])  # noqa: SLF001
        if row < 0:
            raise KeyError(memory_id)
        return row

    def __contains__(self, memory_id: object) -> bool:
        return isinstance(memory_id, str) and int(self._table._find([memory_id])[0]) >= 0  # noqa: SLF001

    def __iter__(self) -> Iterator[str]:
        table = self._table
        end = table._base + len(table._ids)  # noqa: SLF001
        return iter(table._id_at(np.flatnonzero(table._alive[:end]).tolist()))  # noqa: SLF001

    def __len__(self) -> int:
        return len(self._table)
