"""What waits for an agent's review, SQLite's side: contradiction candidates and reflect sessions (what each
is for: engine/contradictions/review.py, engine/reflect/service.py). Their tables are part of the store's
schema (connection.py); pending pairs and pending checks go away with their memory (ON DELETE CASCADE)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from engine.store.rows import EXPIRED_KEPT_SECONDS, PendingPair
from engine.store.sqlite.connection import SqliteConnection, chunks

_PAIR_COLUMNS = "pending_id, memory_a, memory_b, verdict, reason, confidence, similarity, detail, created_at"


class ReviewTables(SqliteConnection):
    def propose_contradictions(self, pairs: Sequence[PendingPair], checked: Sequence[str] = ()) -> None:
        with self.transaction(counted=False) as cur:
            cur.executemany("DELETE FROM pending_checks WHERE id = ?", [(i,) for i in checked])
            for p in pairs:
                cur.execute(
                    f"INSERT INTO pending_contradictions ({_PAIR_COLUMNS}) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT "
                    "EXISTS (SELECT 1 FROM pending_contradictions WHERE (memory_a = ? AND memory_b = ?) OR "
                    "(memory_a = ? AND memory_b = ?))",
                    (p.pending_id, p.memory_a, p.memory_b, p.verdict, p.reason, p.confidence, p.similarity, p.detail,
                     p.created_at, p.memory_a, p.memory_b, p.memory_b, p.memory_a))

    def pending_checks(self, limit: int) -> list[str]:
        try:
            return [r[0] for r in self._query("SELECT id FROM pending_checks ORDER BY rowid LIMIT ?", (limit,))]
        except sqlite3.OperationalError:  # a read-only store written before checks could be pending
            return []

    def checks_pending_among(self, ids: Sequence[str]) -> set[str]:
        try:
            return {r[0] for r in self._query_ids("SELECT id FROM pending_checks", ids)}
        except sqlite3.OperationalError:
            return set()

    def count_pending_checks(self) -> int:
        try:
            return int(self._query("SELECT count(*) FROM pending_checks")[0][0])
        except sqlite3.OperationalError:
            return 0

    def pending_contradictions(self, limit: int) -> list[PendingPair]:
        rows = self._query(f"SELECT {_PAIR_COLUMNS} FROM pending_contradictions ORDER BY confidence DESC, "
                           "created_at, pending_id LIMIT ?", (limit,))
        return [PendingPair(*row) for row in rows]

    def pending_contradictions_by_id(self, pending_ids: Sequence[str]) -> dict[str, PendingPair]:
        found: dict[str, PendingPair] = {}
        for chunk in chunks(list(pending_ids), 500):
            marks = ",".join("?" * len(chunk))
            for row in self._query(f"SELECT {_PAIR_COLUMNS} FROM pending_contradictions WHERE pending_id IN "
                                   f"({marks})", chunk):
                found[row[0]] = PendingPair(*row)
        return found

    def resolve_contradictions(self, pending_ids: Sequence[str]) -> None:
        with self.transaction(counted=False) as cur:
            cur.executemany("DELETE FROM pending_contradictions WHERE pending_id = ?", [(i,) for i in pending_ids])

    def open_reflect_session(self, session_id: str, clusters: Sequence[Sequence[str]], expires_at: float) -> None:
        with self.transaction(counted=False) as cur:
            cur.execute("DELETE FROM reflect_sessions WHERE expires_at < ?", (expires_at - EXPIRED_KEPT_SECONDS,))
            cur.execute("INSERT INTO reflect_sessions (session_id, clusters, expires_at) VALUES (?, ?, ?)",
                        (session_id, json.dumps([list(c) for c in clusters]), expires_at))

    def reflect_session(self, session_id: str) -> tuple[list[list[str]], float] | None:
        rows = self._query("SELECT clusters, expires_at FROM reflect_sessions WHERE session_id = ?", (session_id,))
        return (json.loads(rows[0][0]), float(rows[0][1])) if rows else None

    def close_reflect_session(self, session_id: str) -> None:
        with self.transaction(counted=False) as cur:
            cur.execute("DELETE FROM reflect_sessions WHERE session_id = ?", (session_id,))
