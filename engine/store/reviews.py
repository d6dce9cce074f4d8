"""What waits for an agent's review, in the record store's own file: contradiction candidates and reflect
sessions.

- `pending_contradictions`: one row per candidate pair (older memory `a`, newer `b`), with the check's
  verdict (contradiction or revision), reason, confidence and the pair's cosine similarity. Rows go away with
  either memory (ON DELETE CASCADE) and when a verdict is committed; a pair is proposed once.
- `reflect_sessions`: what `reflect_prepare` handed out (clusters of memory ids) under a session id, valid
  until `expires_at` (unix seconds); `reflect_commit` reads it back to check an agent's sources.

A backend implements these two tables and the methods below; nothing else of the engine reads them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from engine.store.interface import Storage

_TABLES = """
CREATE TABLE IF NOT EXISTS pending_contradictions (
    pending_id TEXT PRIMARY KEY,
    memory_a TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    memory_b TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    verdict TEXT NOT NULL,
    reason TEXT NOT NULL,
    confidence REAL NOT NULL,
    similarity REAL NOT NULL,
    detail TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (memory_a, memory_b)
);
CREATE INDEX IF NOT EXISTS pending_contradictions_b ON pending_contradictions (memory_b);
CREATE TABLE IF NOT EXISTS reflect_sessions (
    session_id TEXT PRIMARY KEY,
    clusters TEXT NOT NULL,
    expires_at REAL NOT NULL
)
"""


@dataclass(frozen=True, slots=True)
class PendingPair:
    """A contradiction candidate waiting for a verdict: `a` the older memory, `b` the newer."""

    pending_id: str
    memory_a: str
    memory_b: str
    verdict: str  # what the check suggests: contradiction or revision
    reason: str  # negation, opposites, values, revision
    confidence: float
    similarity: float
    detail: str
    created_at: int  # microseconds

    def to_dict(self) -> dict[str, object]:
        return {"pending_id": self.pending_id, "memory_id_a": self.memory_a, "memory_id_b": self.memory_b,
                "suggested": self.verdict, "reason": self.reason, "confidence": self.confidence,
                "similarity": self.similarity, "detail": self.detail, "created_at_us": self.created_at}


class Reviews:
    """The two review tables of one record store (created on first use)."""

    def __init__(self, store: Storage) -> None:
        self.store = store
        self._ready = False

    def _ensure(self) -> None:
        if not self._ready:
            self.store.ensure_tables(_TABLES)
            self._ready = True

    # --- contradiction candidates ----------------------------------------------------------------------
    def propose(self, pairs: Sequence[PendingPair]) -> None:
        """Store candidates; a pair already pending (either order) is left as it is."""
        if not pairs:
            return
        self._ensure()
        with self.store.transaction(counted=False) as cur:
            for p in pairs:
                cur.execute(
                    "INSERT INTO pending_contradictions (pending_id, memory_a, memory_b, verdict, reason, confidence,"
                    " similarity, detail, created_at) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 "
                    "FROM pending_contradictions WHERE (memory_a = ? AND memory_b = ?) OR (memory_a = ? AND "
                    "memory_b = ?))",
                    (p.pending_id, p.memory_a, p.memory_b, p.verdict, p.reason, p.confidence, p.similarity,
                     p.detail, p.created_at, p.memory_a, p.memory_b, p.memory_b, p.memory_a))

    def pending(self, limit: int) -> list[PendingPair]:
        """The candidates waiting for a verdict, most confident first (then oldest)."""
        self._ensure()
        rows = self.store.read(
            "SELECT pending_id, memory_a, memory_b, verdict, reason, confidence, similarity, detail, created_at "
            "FROM pending_contradictions ORDER BY confidence DESC, created_at, pending_id LIMIT ?", (limit,))
        return [PendingPair(*row) for row in rows]

    def pending_by_id(self, pending_ids: Sequence[str]) -> dict[str, PendingPair]:
        self._ensure()
        found: dict[str, PendingPair] = {}
        for start in range(0, len(pending_ids), 500):
            chunk = list(pending_ids[start:start + 500])
            marks = ",".join("?" * len(chunk))
            for row in self.store.read(
                "SELECT pending_id, memory_a, memory_b, verdict, reason, confidence, similarity, detail, created_at "
                f"FROM pending_contradictions WHERE pending_id IN ({marks})", chunk):
                found[row[0]] = PendingPair(*row)
        return found

    def resolve(self, pending_ids: Sequence[str]) -> None:
        """Drop candidates whose verdict was committed (in the caller's write, after its edges)."""
        self._ensure()
        with self.store.transaction(counted=False) as cur:
            cur.executemany("DELETE FROM pending_contradictions WHERE pending_id = ?", [(i,) for i in pending_ids])

    # --- reflect sessions ------------------------------------------------------------------------------
    def open_session(self, session_id: str, clusters: Sequence[Sequence[str]], expires_at: float) -> None:
        """Keep a prepared session's clusters (memory ids) until `expires_at`; expired sessions are dropped."""
        self._ensure()
        with self.store.transaction(counted=False) as cur:
            cur.execute("DELETE FROM reflect_sessions WHERE expires_at < ?", (expires_at - 2 * 24 * 3600,))
            cur.execute("INSERT INTO reflect_sessions (session_id, clusters, expires_at) VALUES (?, ?, ?)",
                        (session_id, json.dumps([list(c) for c in clusters]), expires_at))

    def session(self, session_id: str) -> tuple[list[list[str]], float] | None:
        """(clusters, expires_at) of a session, or None if there is no such session."""
        self._ensure()
        rows = self.store.read("SELECT clusters, expires_at FROM reflect_sessions WHERE session_id = ?",
                               (session_id,))
        return (json.loads(rows[0][0]), float(rows[0][1])) if rows else None

    def close_session(self, session_id: str) -> None:
        self._ensure()
        with self.store.transaction(counted=False) as cur:
            cur.execute("DELETE FROM reflect_sessions WHERE session_id = ?", (session_id,))
