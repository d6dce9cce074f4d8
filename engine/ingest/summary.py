"""What one indexing run did, for the CLI's summary and for callers of `MemoryEngine.ingest`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that was not indexed, and why (shown as one line in the summary)."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass
class IngestSummary:
    """Counts of one run. `documents_*`, `propositions_*` and `messages_*` split the work into new, changed,
    kept, removed. Conversations (JSON chats) count as documents; their messages are not propositions."""

    documents_indexed: int = 0  # new or changed documents analysed in this run
    documents_unchanged: int = 0  # same content hash as last time: not analysed again
    documents_removed: int = 0  # indexed before under the given folders, gone now: forgotten
    propositions_added: int = 0
    propositions_kept: int = 0  # unchanged propositions of changed documents: same ids and access counts
    propositions_removed: int = 0
    propositions_total: int = 0  # propositions of every document under the given paths, after the run
    conversations: int = 0  # of the documents, JSON chat transcripts (one memory per message)
    conversations_skipped: int = 0  # read, but a message could not be stored (listed in `skipped`)
    messages_added: int = 0
    messages_kept: int = 0  # unchanged messages of changed conversations: same ids and access counts
    messages_removed: int = 0
    messages_total: int = 0  # messages of every conversation under the given paths, after the run
    entities: int = 0  # entities with memories after the run (as `stats` counts them)
    edges: dict[str, int] = field(default_factory=dict)  # derived edges in the store after the run, by type
    skipped: list[Skipped] = field(default_factory=list)
    extractor: str = "offline"
    llm_fallbacks: int = 0  # documents the LLM extractor failed on, analysed offline instead
    seconds: float = 0.0
    phase_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def documents(self) -> int:
        return self.documents_indexed + self.documents_unchanged

    @property
    def propositions_per_second(self) -> float:
        """New propositions per second of work (loading the models, once per process, not counted)."""
        working = self.seconds - self.phase_seconds.get("loading models", 0.0)
        return self.propositions_added / working if working > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "documents_indexed": self.documents_indexed,
            "documents_unchanged": self.documents_unchanged,
            "documents_removed": self.documents_removed,
            "propositions": self.propositions_total,
            "propositions_added": self.propositions_added,
            "propositions_kept": self.propositions_kept,
            "propositions_removed": self.propositions_removed,
            "conversations": self.conversations,
            "messages": self.messages_total,
            "messages_added": self.messages_added,
            "messages_kept": self.messages_kept,
            "messages_removed": self.messages_removed,
            "entities": self.entities,
            "edges": dict(sorted(self.edges.items())),
            "skipped": [s.to_dict() for s in self.skipped],
            "extractor": self.extractor,
            "llm_fallbacks": self.llm_fallbacks,
            "seconds": round(self.seconds, 3),
            "propositions_per_second": round(self.propositions_per_second, 1),
            "phase_seconds": {k: round(v, 3) for k, v in self.phase_seconds.items()},
        }
