"""`CandidateTable`: what a fused recall reads of each candidate, held in memory for stores of modest size.

A fused recall reads, for a pool of a few hundred candidates, each one's episode key, embedding and entity,
and the `followed_by` links around them; with an exact search it also compares the cue with every stored
embedding. Read from SQLite on every recall that cost about as much as the rest of the recall. The table
holds the same values, read from the record store in one pass like every index, with the store's
`version` at the time: it is valid while the version is the same (the version moves with every write of
this engine that can change these values and with every commit of any other connection, another engine
instance or process included), and is rebuilt on the first recall after a change. Access counting, which a
recall itself writes, does not move the version.

Values are exactly those of `RecordStore.fusion_rows` / `followed_by_neighbours` (tests/engine/
test_recall_parity.py compares recalls with and without the table); an exact search here is the cosine of
the cue with every stored embedding, what HNSW asked for every memory approximates.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from engine.index.vector import Neighbour
from engine.store.records import FusionRow


class CandidateTable:
    def __init__(
        self,
        version: tuple[int, int],
        memories: Sequence[tuple[str, str, bytes, str | None]],
        edges: Iterable[tuple[str, str]],
    ) -> None:
        """`memories`: (id, episode key, embedding bytes, entity id) of every memory; `edges`: every
        followed_by edge as (source, target)."""
        self.version = version
        self.ids = [m[0] for m in memories]
        self.slot = {memory_id: n for n, memory_id in enumerate(self.ids)}
        width = len(memories[0][2]) // 4 if memories else 0
        matrix = np.empty((len(memories), width), dtype=np.float32)
        for n, m in enumerate(memories):
            matrix[n] = np.frombuffer(m[2], dtype=np.float32)
        self.matrix = matrix
        self._rows = {m[0]: FusionRow(m[1], matrix[n], m[3]) for n, m in enumerate(memories)}
        self._plain = {m[0]: FusionRow(m[1], None, m[3]) for m in memories}
        adjacent: dict[str, set[str]] = {}
        for a, b in edges:
            adjacent.setdefault(a, set()).add(b)
            adjacent.setdefault(b, set()).add(a)
        self._adjacent = adjacent

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self, ids: Iterable[str], with_embeddings: bool) -> dict[str, FusionRow]:
        """`RecordStore.fusion_rows` of the given ids (those that exist)."""
        table = self._rows if with_embeddings else self._plain
        return {i: table[i] for i in ids if i in table}

    def embeddings(self, ids: Sequence[str]) -> np.ndarray:
        """The stored embeddings of the given ids (each must exist), one row each, in order."""
        return self.matrix[[self.slot[i] for i in ids]]

    def followed_by(self, ids: Iterable[str]) -> dict[str, set[str]]:
        """`RecordStore.followed_by_neighbours`: both directions of the followed_by edges touching the ids."""
        out: dict[str, set[str]] = {}
        for i in ids:
            linked = self._adjacent.get(i)
            if linked:
                out.setdefault(i, set()).update(linked)
                for n in linked:
                    out.setdefault(n, set()).add(i)
        return out

    def nearest(self, cue: np.ndarray, k: int) -> list[Neighbour]:
        """The k stored embeddings nearest the cue by cosine distance, exactly (ties: by id)."""
        if k <= 0 or not self.ids:
            return []
        distances = 1.0 - self.matrix @ np.asarray(cue, dtype=np.float32)
        k = min(k, len(self.ids))
        best = np.argpartition(distances, k - 1)[:k] if k < len(self.ids) else np.arange(len(self.ids))
        ordered = sorted(best.tolist(), key=lambda n: (float(distances[n]), self.ids[n]))
        return [Neighbour(self.ids[n], float(distances[n])) for n in ordered]
