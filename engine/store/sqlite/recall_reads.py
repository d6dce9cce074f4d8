"""What recall and the derived indexes read in bulk: scoring columns, fusion rows, the candidate table,
the timeline and the stored embeddings."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from engine import config
from engine.models import EdgeType
from engine.store.rows import CandidateColumns, FusionRow, ScoreInputs
from engine.store.sqlite import changes
from engine.store.sqlite.connection import SqliteConnection

# The SQL expression of a memory's episode key (fusion_rows, candidate_rows).
EPISODE_KEY = "json_extract(context, " + ", ".join(f"'$.{k}'" for k in config.EPISODE_KEYS) + ")"


class RecallReads(SqliteConnection):
    """Column reads of many memories at once, without parsing whole memories."""

    def score_inputs(self, ids: Sequence[str]) -> ScoreInputs:
        """Importance, created_at (microseconds) and access_count of the given memories that exist, as columns:
        what the composite score needs, without reading and parsing whole memories."""
        sql = f"SELECT id, importance, created_at, access_count FROM memories {self._scores}"
        rows = self._query_ids(sql, ids)
        if not rows:
            return ScoreInputs([], np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        found, importance, created, access = zip(*rows, strict=True)
        return ScoreInputs(list(found), np.array(importance, dtype=np.float64), np.array(created, dtype=np.int64),
                           np.array(access, dtype=np.int64))

    def created_at_of(self, ids: Sequence[str]) -> dict[str, int]:
        """created_at (microseconds) of the given memories that exist."""
        return dict(self._query_ids(f"SELECT id, created_at FROM memories {self._scores}", ids))

    def fusion_rows(self, ids: Sequence[str], with_embeddings: bool) -> dict[str, FusionRow]:
        """Episode key, embedding (or None) and entity id of the given memories that exist, in one read: what a
        fused recall needs of each candidate. The key is the JSON array of the context's `config.EPISODE_KEYS`
        values (null where absent): equal keys, same episode; `NO_EPISODE` is a memory in none."""
        found: dict[str, FusionRow] = {}
        columns = f"id, {EPISODE_KEY}, {'embedding' if with_embeddings else 'NULL'}, entity_id"
        for r in self._query_ids(f"SELECT {columns} FROM memories", ids):
            found[r[0]] = FusionRow(r[1], None if r[2] is None else np.frombuffer(r[2], dtype=np.float32), r[3])
        return found

    def candidate_rows(self) -> tuple[int, CandidateColumns, list[tuple[str, str]]]:
        """Everything a recall's candidate table holds, read in one read transaction with the change number
        (`change_seq`) it was read at: (change number, every memory's id, episode key, entity id and
        embedding as `fusion_rows` gives them, every followed_by edge as (source, target)). The embeddings
        are copied into one matrix a few thousand rows at a time (never all the rows' blobs at once: at
        100,000 memories that doubled the peak memory); equal episode keys and entity ids share one string."""
        with self._lock:
            cur = self._conn.cursor()
            cur.execute("BEGIN")
            try:
                seq = changes.latest(cur) if self._logged else 0
                count = int(cur.execute("SELECT count(*) FROM memories").fetchone()[0])
                width = cur.execute("SELECT length(embedding) FROM memories LIMIT 1").fetchone()
                matrix = np.empty((count, (width[0] // 4) if width else 0), dtype=np.float32)
                ids: list[str] = []
                episodes: list[str] = []
                entities: list[str | None] = []
                shared: dict[str | None, str | None] = {}
                rows = cur.execute(f"SELECT id, {EPISODE_KEY}, embedding, entity_id FROM memories")
                while batch := rows.fetchmany(4096):
                    start = len(ids)
                    for n, (memory_id, episode, blob, entity) in enumerate(batch, start):
                        matrix[n] = np.frombuffer(blob, dtype=np.float32)
                        ids.append(memory_id)
                        episodes.append(shared.setdefault(episode, episode))  # type: ignore[arg-type]
                        entities.append(shared.setdefault(entity, entity))
                edges = cur.execute(
                    "SELECT source, target FROM edges WHERE type = ?", (EdgeType.FOLLOWED_BY.value,)
                ).fetchall()
            finally:
                cur.execute("COMMIT")
        return seq, CandidateColumns(ids, episodes, entities, matrix[: len(ids)]), edges

    def timeline_rows(self) -> list[tuple[str, int, str]]:
        """(entity_id, created_at in microseconds, id) of every memory that has an entity."""
        return self._query("SELECT entity_id, created_at, id FROM memories WHERE entity_id IS NOT NULL")

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        rows = self._query_ids("SELECT id, embedding FROM memories", ids)
        return {r[0]: np.frombuffer(r[1], dtype=np.float32) for r in rows}

    def all_embeddings(self, batch: int = 5000) -> Iterator[list[tuple[str, np.ndarray]]]:
        last = ""
        while True:
            rows = self._query("SELECT id, embedding FROM memories WHERE id > ? ORDER BY id LIMIT ?", (last, batch))
            if not rows:
                return
            yield [(r[0], np.frombuffer(r[1], dtype=np.float32)) for r in rows]
            last = rows[-1][0]
