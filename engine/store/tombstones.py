"""Tombstones: what is left of a memory forgotten by criteria or by the auto-forget sweep, for audit.

One per forgotten memory: its id, when and why it went, and the SHA-256 of its content, never the content
itself (a tombstone proves that a given text was forgotten without keeping it). The store keeps them
(`add_tombstones` / `tombstones`), not tied to memories. They are written after the forget committed, so a
crash between the two loses a tombstone, never the forget.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from engine.store.interface import Storage
from engine.store.rows import Tombstone

__all__ = ["Tombstone", "Tombstones", "content_hash"]


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


class Tombstones:
    def __init__(self, store: Storage) -> None:
        self.store = store

    def add(self, stones: Sequence[Tombstone]) -> None:
        if stones:
            self.store.add_tombstones(stones)

    def newest(self, limit: int = 100) -> list[Tombstone]:
        """The newest tombstones first."""
        return self.store.tombstones(limit)
