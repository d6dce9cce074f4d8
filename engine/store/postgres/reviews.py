"""What waits for an agent's review in PostgreSQL: contradiction candidates and reflect sessions
(`ReviewStorage`; what each is for: engine/contradictions/review.py, engine/reflect/service.py)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

from engine.store.postgres.connection import PostgresConnection
from engine.store.rows import EXPIRED_KEPT_SECONDS, PendingPair

_PAIR_COLUMNS = ", ".join(f.name for f in dataclasses.fields(PendingPair))  # the table's columns, in order


class ReviewTables(PostgresConnection):
    def propose_contradictions(self, pairs: Sequence[PendingPair], checked: Sequence[str] = ()) -> None:
        with self.transaction(counted=False) as cur:
            if checked:
                cur.execute("DELETE FROM pending_checks WHERE id = ANY(%s)", (list(checked),))
            for p in pairs:
                cur.execute(
                    f"INSERT INTO pending_contradictions ({_PAIR_COLUMNS}) SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s"
                    " WHERE NOT EXISTS (SELECT 1 FROM pending_contradictions WHERE (memory_a = %s AND memory_b = %s)"
                    " OR (memory_a = %s AND memory_b = %s)) ON CONFLICT DO NOTHING",
                    (p.pending_id, p.memory_a, p.memory_b, p.verdict, p.reason, p.confidence, p.similarity, p.detail,
                     p.created_at, p.memory_a, p.memory_b, p.memory_b, p.memory_a))

    def pending_checks(self, limit: int) -> list[str]:
        return [r[0] for r in self._query("SELECT id FROM pending_checks ORDER BY seq LIMIT %s", (limit,))]

    def checks_pending_among(self, ids: Sequence[str]) -> set[str]:
        return {r[0] for r in self._query("SELECT id FROM pending_checks WHERE id = ANY(%s)", (list(ids),))}

    def count_pending_checks(self) -> int:
        return int(self._query("SELECT count(*) FROM pending_checks")[0][0])

    def pending_contradictions(self, limit: int) -> list[PendingPair]:
        rows = self._query(f"SELECT {_PAIR_COLUMNS} FROM pending_contradictions ORDER BY confidence DESC,"
                           " created_at, pending_id LIMIT %s", (limit,))
        return [PendingPair(*row) for row in rows]

    def pending_contradictions_by_id(self, pending_ids: Sequence[str]) -> dict[str, PendingPair]:
        rows = self._query(f"SELECT {_PAIR_COLUMNS} FROM pending_contradictions WHERE pending_id = ANY(%s)",
                           (list(pending_ids),))
        return {row[0]: PendingPair(*row) for row in rows}

    def resolve_contradictions(self, pending_ids: Sequence[str]) -> None:
        with self.transaction(counted=False) as cur:
            cur.execute("DELETE FROM pending_contradictions WHERE pending_id = ANY(%s)", (list(pending_ids),))

    def open_reflect_session(self, session_id: str, clusters: Sequence[Sequence[str]], expires_at: float) -> None:
        with self.transaction(counted=False) as cur:
            cur.execute("DELETE FROM reflect_sessions WHERE expires_at < %s", (expires_at - EXPIRED_KEPT_SECONDS,))
            cur.execute("INSERT INTO reflect_sessions (session_id, clusters, expires_at) VALUES (%s, %s, %s)",
                        (session_id, json.dumps([list(c) for c in clusters]), expires_at))

    def reflect_session(self, session_id: str) -> tuple[list[list[str]], float] | None:
        rows = self._query("SELECT clusters, expires_at FROM reflect_sessions WHERE session_id = %s", (session_id,))
        return (json.loads(rows[0][0]), float(rows[0][1])) if rows else None

    def close_reflect_session(self, session_id: str) -> None:
        with self.transaction(counted=False) as cur:
            cur.execute("DELETE FROM reflect_sessions WHERE session_id = %s", (session_id,))
