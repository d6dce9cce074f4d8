"""Tombstones: what is left of a memory forgotten by criteria or by the auto-forget sweep, for audit.

One row per forgotten memory: its id, when and why it went, and the SHA-256 of its content, never the content
itself (a tombstone proves that a given text was forgotten without keeping it). Kept in the record store's own
file, written in the same transaction as nothing else: a tombstone is written after the forget committed, so a
crash between the two loses the tombstone, never the forget.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.models import iso
from engine.store.interface import Storage
from engine.store.rows import from_micros, to_micros

_TABLES = """
CREATE TABLE IF NOT EXISTS tombstones (
    memory_id TEXT NOT NULL,
    forgotten_at INTEGER NOT NULL,
    content_sha256 TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tombstones_time ON tombstones (forgotten_at)
"""


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Tombstone:
    memory_id: str
    forgotten_at: datetime
    content_sha256: str
    reason: str  # "criteria" or "sweep"

    def to_dict(self) -> dict[str, Any]:
        return {"memory_id": self.memory_id, "forgotten_at": iso(self.forgotten_at),
                "content_sha256": self.content_sha256, "reason": self.reason}


class Tombstones:
    def __init__(self, store: Storage) -> None:
        self.store = store
        self._ready = False

    def add(self, stones: Sequence[Tombstone]) -> None:
        if not stones:
            return
        if not self._ready:
            self.store.ensure_tables(_TABLES)
            self._ready = True
        with self.store.transaction(counted=False) as cur:
            cur.executemany(
                "INSERT INTO tombstones (memory_id, forgotten_at, content_sha256, reason) VALUES (?, ?, ?, ?)",
                [(s.memory_id, to_micros(s.forgotten_at), s.content_sha256, s.reason) for s in stones],
            )

    def newest(self, limit: int = 100) -> list[Tombstone]:
        """The newest tombstones first."""
        if not self.store.read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tombstones'"):
            return []
        rows = self.store.read("SELECT memory_id, forgotten_at, content_sha256, reason FROM tombstones "
                               "ORDER BY forgotten_at DESC, rowid DESC LIMIT ?", (limit,))
        return [Tombstone(r[0], from_micros(r[1]), r[2], r[3]) for r in rows]  # type: ignore[arg-type]
