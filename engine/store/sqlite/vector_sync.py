"""Vector-index bookkeeping: which memories' vectors are not in the vector index yet, which deletes are
not applied to it yet, and whether its files still need scrubbing after a forget."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.store.sqlite.connection import ERASE_PENDING, SqliteConnection, chunks


class VectorSync(SqliteConnection):
    """Marks written in the same transaction as the write they follow, so a crash between the record
    store and the vector index is repaired on the next open."""

    # --- vector-index bookkeeping ------------------------------------------------------------------------
    def unsynced(self) -> list[tuple[str, np.ndarray]]:
        rows = self._query("SELECT id, embedding FROM memories WHERE vector_synced = 0")
        return [(r[0], np.frombuffer(r[1], dtype=np.float32)) for r in rows]

    def count_unsynced(self) -> int:
        return int(self._query("SELECT count(*) FROM memories WHERE vector_synced = 0")[0][0])

    def mark_synced(self, ids: Sequence[str]) -> None:
        """Not counted in `version`: whether a vector reached the vector index is nothing recall's caches hold."""
        with self.transaction(counted=False) as cur:
            for chunk in chunks(list(ids), 500):
                marks = ",".join("?" * len(chunk))
                cur.execute(f"UPDATE memories SET vector_synced = 1 WHERE id IN ({marks})", chunk)

    def mark_all_unsynced(self) -> None:
        with self.transaction() as cur:
            cur.execute("UPDATE memories SET vector_synced = 0")

    def pending_deletes(self) -> list[str]:
        return [r[0] for r in self._query("SELECT id FROM pending_vector_deletes")]

    def clear_pending_deletes(self, ids: Sequence[str]) -> None:
        """Not counted in `version`, like `mark_synced`: the memories are gone already."""
        with self.transaction(counted=False) as cur:
            cur.executemany("DELETE FROM pending_vector_deletes WHERE id = ?", [(i,) for i in ids])

    def erase_pending(self) -> bool:
        return self.get_meta(ERASE_PENDING) is not None

    def clear_erase_pending(self) -> None:
        with self.transaction() as cur:
            cur.execute("DELETE FROM meta WHERE key = ?", (ERASE_PENDING,))
