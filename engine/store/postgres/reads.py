"""What recall and the derived indexes read in bulk from PostgreSQL, and the vector-index bookkeeping
(`RecallReadStorage`, `VectorSyncStorage`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from engine.models import EdgeType
from engine.store.postgres.connection import PostgresConnection
from engine.store.rows import CandidateColumns, FusionRow, ScoreInputs


class RecallReads(PostgresConnection):
    def score_inputs(self, ids: Sequence[str]) -> ScoreInputs:
        rows = self._query_ids("SELECT id, importance, created_at, access_count FROM memories", ids)
        if not rows:
            return ScoreInputs([], np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        found, importance, created, access = zip(*rows, strict=True)
        return ScoreInputs(list(found), np.array(importance, dtype=np.float64), np.array(created, dtype=np.int64),
                           np.array(access, dtype=np.int64))

    def created_at_of(self, ids: Sequence[str]) -> dict[str, int]:
        return dict(self._query_ids("SELECT id, created_at FROM memories", ids))

    def fusion_rows(self, ids: Sequence[str], with_embeddings: bool) -> dict[str, FusionRow]:
        columns = f"id, episode, {'embedding' if with_embeddings else 'NULL'}, entity_id"
        return {r[0]: FusionRow(r[1], None if r[2] is None else np.frombuffer(r[2], dtype=np.float32), r[3])
                for r in self._query_ids(f"SELECT {columns} FROM memories", ids)}

    def candidate_rows(self) -> tuple[int, CandidateColumns, list[tuple[str, str]]]:
        """Read in one REPEATABLE READ transaction with the change number of the same snapshot."""
        with self._pool.connection() as conn:
            conn.autocommit = False
            try:
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM changes").fetchone()[0])
                count = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
                width = conn.execute("SELECT length(embedding) FROM memories LIMIT 1").fetchone()
                matrix = np.empty((count, (width[0] // 4) if width else 0), dtype=np.float32)
                ids: list[str] = []
                episodes: list[str] = []
                entities: list[str | None] = []
                shared: dict[str | None, str | None] = {}
                with conn.cursor(name="candidates") as cur:
                    cur.execute("SELECT id, episode, embedding, entity_id FROM memories")
                    while batch := cur.fetchmany(4096):
                        start = len(ids)
                        for n, (memory_id, episode, blob, entity) in enumerate(batch, start):
                            matrix[n] = np.frombuffer(blob, dtype=np.float32)
                            ids.append(memory_id)
                            episodes.append(shared.setdefault(episode, episode))  # type: ignore[arg-type]
                            entities.append(shared.setdefault(entity, entity))
                edges = [tuple(r) for r in conn.execute(
                    "SELECT source, target FROM edges WHERE type = %s", (EdgeType.FOLLOWED_BY.value,)
                ).fetchall()]
            finally:
                conn.rollback()
                conn.autocommit = True
        return seq, CandidateColumns(ids, episodes, entities, matrix[: len(ids)]), edges

    def timeline_rows(self) -> list[tuple[str, int, str]]:
        return [tuple(r) for r in self._query(
            "SELECT entity_id, created_at, id FROM memories WHERE entity_id IS NOT NULL")]

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {r[0]: np.frombuffer(r[1], dtype=np.float32)
                for r in self._query_ids("SELECT id, embedding FROM memories", ids)}

    def all_embeddings(self, batch: int = 5000) -> Iterator[list[tuple[str, np.ndarray]]]:
        last = ""
        while True:
            rows = self._query("SELECT id, embedding FROM memories WHERE id > %s ORDER BY id LIMIT %s", (last, batch))
            if not rows:
                return
            yield [(r[0], np.frombuffer(r[1], dtype=np.float32)) for r in rows]
            last = rows[-1][0]


class VectorSync(RecallReads):
    """Vector-index bookkeeping of this process: every replica keeps its own vector index (see
    engine/store/postgres/__init__.py), so which vectors reached it, which deletes it still owes and whether
    its files need scrubbing are this process's facts, kept here, not rows every replica would share."""

    def _vector_state(self) -> tuple[set[str], set[str]]:
        """(ids whose vectors this process's index holds, ids it still has to drop), created on first use."""
        if not hasattr(self, "_synced"):
            self._synced: set[str] = set()
            self._owed: set[str] = set()
            self._erase = False
        return self._synced, self._owed

    def unsynced(self) -> list[tuple[str, np.ndarray]]:
        synced, _ = self._vector_state()
        out: list[tuple[str, np.ndarray]] = []
        for batch in self.all_embeddings():
            out.extend((i, v) for i, v in batch if i not in synced)
        return out

    def count_unsynced(self) -> int:
        synced, _ = self._vector_state()
        return sum(1 for r in self._query("SELECT id FROM memories") if r[0] not in synced)

    def mark_synced(self, ids: Sequence[str]) -> None:
        self._vector_state()[0].update(ids)

    def mark_all_unsynced(self) -> None:
        self._vector_state()[0].clear()

    def pending_deletes(self) -> list[str]:
        return sorted(self._vector_state()[1])

    def clear_pending_deletes(self, ids: Sequence[str]) -> None:
        self._vector_state()[1].difference_update(ids)

    def vectors_changed(self, written: Sequence[str] = (), deleted: Sequence[str] = (), *, synced: bool = False,
                        erase: bool = False) -> None:
        """After a commit: the written memories' vectors are in the index (`synced`) or not yet; the deleted
        ones are owed to it."""
        held, owed = self._vector_state()
        (held.update if synced else held.difference_update)(written)
        held.difference_update(deleted)
        owed.update(deleted)
        self._erase = self._erase or (erase and bool(deleted))

    def erase_pending(self) -> bool:
        self._vector_state()
        return self._erase

    def clear_erase_pending(self) -> None:
        self._vector_state()
        self._erase = False
