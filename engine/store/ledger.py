"""The ingestion ledger: which memories came from which document, with their content hashes.

One row per `document`, `proposition` or conversation `message` memory, kept by the record store (each
backend in its own table). Rows go away with their memory, so forgetting a memory by hand never leaves the
ledger pointing at it. Re-indexing compares hashes here: an unchanged document is not analysed again; in a
changed one, propositions whose hash is unchanged keep their ids (and access counts). Rows are written in
the same transaction as their memories (`AlsoWrite.ledger`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.store.interface import Storage
from engine.store.rows import LedgerRow, LinkRow

DOCUMENT = "document"
PROPOSITION = "proposition"
MESSAGE = "message"  # one turn of a conversation (a JSON chat transcript); its analysis holds the file's stamp

__all__ = ["DOCUMENT", "MESSAGE", "PROPOSITION", "Ledger", "LedgerRow", "LinkRow"]


class Ledger:
    def __init__(self, store: Storage) -> None:
        self.store = store

    def sources(self) -> set[str]:
        """Every source file that still has a memory (empty before the first ingestion)."""
        return self.store.ledger_sources()

    def documents(self) -> dict[str, tuple[str, str]]:
        """source -> (document memory id, content hash)."""
        return self.store.ledger_documents()

    def propositions(self, source: str) -> dict[str, str]:
        """content hash -> memory id of a document's propositions."""
        return self.store.ledger_hashes(source, PROPOSITION)

    def conversations(self) -> dict[str, str]:
        """source -> stamp of every conversation that still has a message."""
        return self.store.ledger_conversations()

    def messages(self, source: str) -> dict[str, str]:
        """chained content hash -> memory id of a conversation's messages."""
        return self.store.ledger_hashes(source, MESSAGE)

    def role_counts(self, sources: Sequence[str]) -> dict[str, int]:
        """How many memories of each role the given sources have."""
        return self.store.ledger_role_counts(sources)

    def derived_from(self, memory_ids: Sequence[str]) -> list[str]:
        """The propositions indexed from the documents among `memory_ids` (what forgetting them forgets too)."""
        return self.store.ledger_derived_from(memory_ids)

    def memory_ids(self, sources: Iterable[str]) -> list[str]:
        return self.store.ledger_memory_ids(sources)

    def count_propositions(self, sources: Sequence[str]) -> int:
        return self.store.ledger_count(PROPOSITION, sources)

    def link_rows(self) -> list[LinkRow]:
        return self.store.ledger_link_rows()
