"""`Storage`: the record store's interface, the one every layer above the store is written against.

`engine.store.records.RecordStore` (SQLite, engine/store/sqlite/) is the reference implementation; a second
backend (PostgreSQL) implements the same protocols. The store is the source of truth: every derived index
is built or reconciled from it, `version()` tells an in-memory cache cheaply whether anything changed, and
the change log (`changes_since`) which memories did, so the cache catches up instead of being rebuilt.

Nothing above the store sees SQL or a cursor: the modules that keep their own rows in the store (the
ingestion ledger, the entity registry, replies under idempotency keys) read and write through the typed
methods of `Bookkeeping`, and rows that must commit with memories or edges travel as an `AlsoWrite`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np

from engine.models import Edge, Memory, MemoryKind
from engine.store.lexical import LexicalDump
from engine.store.rows import (
    AlsoWrite,
    CandidateColumns,
    DecayInputs,
    EntityRecord,
    FusionRow,
    KeyDocument,
    LedgerRow,
    LinkRow,
    MemoryRecord,
    PendingPair,
    ScoreInputs,
    Tombstone,
)


class Transactions(Protocol):
    """Connection and versions: the store's version and its metadata."""

    read_only: bool
    shared: bool  # other engines may write it at the same time (PostgreSQL): see engine/index/replica.py

    def close(self) -> None: ...

    def version(self) -> tuple[int, int]:
        """Changes whenever the store may have changed: (this connection's counted commits, SQLite's
        `data_version`, which moves when another connection, in this process or another, commits). An
        in-memory cache built at one version is valid while the version is the same."""
        ...

    def change_seq(self) -> int:
        """The number of the store's latest change (0 for none), see `changes_since`."""
        ...

    def changes_since(self, seq: int) -> tuple[int, list[str]] | None:
        """The change log, what in-memory indexes catch up from instead of rebuilding: (the latest change
        number, the ids of the memories changed after change `seq`, each once, in the order of its latest
        change), read at once. Change numbers increase with every change, in commit order: a change made
        visible after the reader read number n must get a number above n (PostgreSQL: assign them under a
        lock held until commit, not from a bare sequence). A memory changes when it is inserted or deleted;
        when its content, context, entity id, kind, created_at or embedding is updated (access counts,
        importance, structures and vector sync marks do not count); when an edge touching it is added or
        removed (both ends); and when its lexical window row is rewritten. The log keeps one entry per id
        (its latest change), deleted ids included. None: this store keeps no log (a read-only store older
        than it); the reader rebuilds what it holds when `version()` moves."""
        ...

    def listen(self, callback: Callable[[], None]) -> None:
        """Call `callback` (on a thread of the store's) soon after another engine commits, where the store
        can tell (PostgreSQL's LISTEN/NOTIFY); a store that cannot does nothing."""
        ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database and truncate it: deleted text must not linger in the
        WAL. (A reader in another process can keep it from completing; the next checkpoint finishes it.)"""
        ...


class MemoryStorage(Protocol):
    """Memories: written with their edges and pending marks in one transaction; read whole."""

    def insert(
        self,
        records: Sequence[MemoryRecord],
        edges: Sequence[Edge],
        also: AlsoWrite | None = None,
        *,
        synced: bool = False,
    ) -> None:
        """Insert memories and their edges atomically; `also` writes rows that must commit with them.
        `synced`: their vectors are in the vector index already (upserted before this commit, see
        `DerivedIndexes.commit_with_vectors`), so they are stored marked synced rather than marked after."""
        ...

    def revise(self, updated: MemoryRecord, revision: MemoryRecord, edge: Edge) -> None:
        """Replace a memory's state and keep the old state as a revision memory, atomically."""
        ...

    def delete(self, ids: Sequence[str], *, erase: bool = False) -> list[str]:
        """Delete memories (and, by cascade, their edges); returns the ids that existed. With `erase`, the
        same transaction records that the vector index's files still need scrubbing (ERASE_PENDING), so a
        crash before that is finished on the next open."""
        ...

    def record_access(self, ids: Sequence[str], when: datetime) -> None:
        """access_count + 1 and last_accessed_at = `when` for each id (a recall's results). Committed without
        waiting for a flush of its own: a power cut may lose the last counts, a crash of the process never."""
        ...

    def set_importances(self, values: Sequence[tuple[str, float]]) -> None:
        """Set importance per memory id, in one transaction."""
        ...

    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]: ...

    def existing(self, ids: Iterable[str]) -> set[str]: ...

    def ids_matching(self, fragment: str, limit: int = 10) -> list[str]:
        """Ids that start or end with `fragment` (ids are upper-case base32; case is ignored), at most `limit`."""
        ...

    def list_memories(
        self,
        *,
        entity_id: str | None = None,
        kind: MemoryKind | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
        min_importance: float | None = None,
        include_revisions: bool = True,
        limit: int = 100,
        offset: int = 0,
        contains: str | None = None,
    ) -> tuple[list[Memory], int]:
        """One page of the memories that pass every filter, newest first, and how many pass in all;
        `contains` keeps those whose content holds the text (case-insensitive for ASCII letters)."""
        ...

    def ids_of_kind(self, kind: MemoryKind) -> list[str]: ...

    def ids_of_entity(self, entity_id: str) -> list[str]: ...

    def count(self) -> int: ...

    def decay_inputs(
        self,
        *,
        entity_id: str | None = None,
        kind: MemoryKind | None = None,
        accessed_before: datetime | None = None,
        access_count_below: int | None = None,
    ) -> list[DecayInputs]:
        """(id, importance, created_at, last_accessed_at, access_count) of the memories that pass every given
        filter (`accessed_before`: last accessed, or created if never, before that time), revisions left out
        unless `kind` is revision: what a forget by criteria and the auto-forget sweep read (issue 29)."""
        ...

    def count_entities(self) -> int: ...

    def ingested_propositions(self) -> list[tuple[str, str, int, dict[str, Any], np.ndarray, float]]:
        """(id, entity_id, created_at us, context, embedding, importance) of propositions with an entity:
        what salience reads."""
        ...


class EdgeStorage(Protocol):
    """Edges between memories."""

    def add_edges(self, edges: Sequence[Edge]) -> None: ...

    def edges(self) -> list[Edge]: ...

    def edges_of(self, memory_id: str) -> list[Edge]: ...

    def edges_among(self, ids: Sequence[str]) -> list[Edge]:
        """Every stored edge whose two ends are both among `ids`."""
        ...

    def ids_with_revisions(self, ids: Sequence[str]) -> list[str]:
        """The ids plus, transitively, the revision memories that hold their earlier states."""
        ...

    def count_edges(self) -> int: ...

    def count_edges_by_type(self, origin: str) -> dict[str, int]:
        """Edges whose `attrs.origin` is `origin` (derived by ingestion), counted by type."""
        ...

    def replace_derived_edges(
        self, origin: str, edges: Sequence[Edge], also: AlsoWrite | None = None
    ) -> None:
        """Swap every edge of `attrs.origin == origin` for `edges`, atomically (`also` commits with them)."""
        ...

    def followed_by_neighbours(self, ids: Sequence[str]) -> dict[str, set[str]]:
        """Both directions of the followed_by edges touching the given memories."""
        ...


class StructureStorage(Protocol):
    """Relational structures and their pending marks."""

    def get_record(self, memory_id: str) -> MemoryRecord | None: ...

    def structures(self) -> list[tuple[str, dict[str, Any]]]: ...

    def features(self) -> list[tuple[str, list[str]]]:
        """(id, structure["features"]) of every memory. SQLite extracts the list, so opening a store parses
        a few bytes per memory instead of its whole structure."""
        ...

    def structure_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """The stored structures of some memories as their JSON text, unparsed: analogical recall parses
        each distinct text once per process (engine/analogy/text.py `stored_episode`)."""
        ...

    def stale_structures(self, version: int) -> list[tuple[str, str]]:
        """(id, content) of memories whose structure was written by another extractor version."""
        ...

    def set_structures(self, structures: Sequence[tuple[str, str, dict[str, Any]]], *, pending_only: bool = False
                       ) -> list[str]:
        """Store structures extracted from (id, content): a rebuild after the extractor changed, or (with
        `pending_only`) the catch-up of pending ones. A structure is written only while the memory still has
        that content (a revise meanwhile leaves it pending for its new text) and, with `pending_only`, only
        if still pending (another engine or process may have stored it first): idempotent under the write
        lock. Clears the pending marks of what it wrote; returns those ids. A read-only store keeps them in
        memory for this process."""
        ...

    def pending_structures(self, limit: int) -> list[tuple[str, str]]:
        """(id, content) of up to `limit` memories whose structure is not extracted yet, oldest ids first."""
        ...

    def count_pending_structures(self) -> int: ...

    def pending_structure_ids(self) -> set[str]: ...

    def plots(self) -> list[tuple[str, dict[str, Any]]]:
        """(id, structure["plot"]) of every memory whose structure keeps a plot (engine/analogy/plot.py): the plot
        index's build reads these few, not every structure."""
        ...

    def extracted_structures(self, ids: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
        """(id, structure) of those of the memories whose structure is extracted."""
        ...


class RecallReadStorage(Protocol):
    """Column reads of many memories at once (ranking, fusion, the candidate table, the timeline)."""

    def score_inputs(self, ids: Sequence[str]) -> ScoreInputs:
        """Importance, created_at (microseconds) and access_count of the given memories that exist, as columns:
        what the composite score needs, without reading and parsing whole memories."""
        ...

    def created_at_of(self, ids: Sequence[str]) -> dict[str, int]:
        """created_at (microseconds) of the given memories that exist."""
        ...

    def fusion_rows(self, ids: Sequence[str], with_embeddings: bool) -> dict[str, FusionRow]:
        """Episode key, embedding (or None) and entity id of the given memories that exist, in one read: what a
        fused recall needs of each candidate. The key is the JSON array of the context's `config.EPISODE_KEYS`
        values (null where absent): equal keys, same episode; `NO_EPISODE` is a memory in none."""
        ...

    def candidate_rows(self) -> tuple[int, CandidateColumns, list[tuple[str, str]]]:
        """Everything a recall's candidate table holds, read in one read transaction with the change number
        (`change_seq`) it was read at: (change number, every memory's id, episode key, entity id and
        embedding as `fusion_rows` gives them, every followed_by edge as (source, target)). The embeddings
        are copied into one matrix a few thousand rows at a time (never all the rows' blobs at once: at
        100,000 memories that doubled the peak memory); equal episode keys and entity ids share one string."""
        ...

    def timeline_rows(self) -> list[tuple[str, int, str]]:
        """(entity_id, created_at in microseconds, id) of every memory that has an entity."""
        ...

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    def all_embeddings(self, batch: int = 5000) -> Iterator[list[tuple[str, np.ndarray]]]: ...


class VectorSyncStorage(Protocol):
    """Vector-index bookkeeping, written in the same transaction as the write it follows."""

    def unsynced(self) -> list[tuple[str, np.ndarray]]: ...

    def count_unsynced(self) -> int: ...

    def mark_synced(self, ids: Sequence[str]) -> None:
        """Not counted in `version`: whether a vector reached the vector index is nothing recall's caches hold."""
        ...

    def mark_all_unsynced(self) -> None: ...

    def pending_deletes(self) -> list[str]: ...

    def clear_pending_deletes(self, ids: Sequence[str]) -> None:
        """Not counted in `version`, like `mark_synced`: the memories are gone already."""
        ...

    def erase_pending(self) -> bool: ...

    def clear_erase_pending(self) -> None: ...


class FullTextStorage(Protocol):
    """Full-text BM25 search over memories and their context windows."""

    def purge_deleted_text(self) -> None:
        """Drop forgotten memories' terms from the text index's segments (see `fulltext.purge_deleted`)."""
        ...

    def lexical_search(self, table: str, words: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The best `limit` BM25 matches of any of the words in `memory_text` or `window_text` (see fulltext),
        with the saturation and length normalisation of `config.LEXICAL_BM25_K1` / `LEXICAL_BM25_B`."""
        ...

    def lexical_terms(self, words: Sequence[str]) -> list[str]:
        """The index terms (stems) of cue words, as the lexical tables' tokenizer makes them."""
        ...

    def lexical_totals(self, table: str) -> tuple[int, float]:
        """(rows, mean length in tokens) of a lexical table."""
        ...

    def lexical_dump(self) -> LexicalDump:
        """The whole lexical index (each row number's memory id, both tables' postings and row lengths), read
        in one read transaction with the change number it was read at: what engine/index/lexical_segment.py
        builds its arrays from when it has none (or a damaged one)."""
        ...

    def lexical_documents(self, table: str, ids: Sequence[str]) -> dict[str, tuple[int, int, dict[str, int]]]:
        """Each given memory's row of a lexical table, if it has one: (row number, length in tokens, {index
        term: occurrences}), what posting lists held in memory need to follow a change of those memories
        (the same numbers `lexical_dump` gives for those rows)."""
        ...

    def lexical_marks(self, match: str, texts: Mapping[str, str]) -> dict[str, str]:
        """The given texts (memory id -> content) with the words matching an FTS5 expression in [brackets]."""
        ...


class Bookkeeping(Protocol):
    """The rows other modules keep in the store: the ingestion ledger (engine/store/ledger.py), the entity
    registry (entities.py) and replies under idempotency keys (replies.py)."""

    def ledger_sources(self) -> set[str]: ...

    def ledger_documents(self) -> dict[str, tuple[str, str]]:
        """source -> (document memory id, content hash)."""
        ...

    def ledger_hashes(self, source: str, role: str) -> dict[str, str]:
        """content hash -> memory id of one source's memories of one role."""
        ...

    def ledger_conversations(self) -> dict[str, str]:
        """source -> the newest stamp of every conversation that still has a message."""
        ...

    def ledger_role_counts(self, sources: Sequence[str]) -> dict[str, int]: ...

    def ledger_derived_from(self, memory_ids: Sequence[str]) -> list[str]:
        """The propositions indexed from the documents among `memory_ids`."""
        ...

    def ledger_memory_ids(self, sources: Iterable[str]) -> list[str]: ...

    def ledger_count(self, role: str, sources: Sequence[str]) -> int: ...

    def ledger_rows(self, memory_ids: Sequence[str]) -> list[LedgerRow]:
        """The ledger rows of the given memories, whole (what a migration copies)."""
        ...

    def ledger_link_rows(self) -> list[LinkRow]:
        """Every ledger row with its memory's entity and time, by source and position."""
        ...

    def entity_records(self) -> list[EntityRecord]: ...

    def save_entities(self, records: Sequence[tuple[EntityRecord, Sequence[str]]]) -> None:
        """Upsert entities and add their aliases, in one transaction."""
        ...

    def purge_unreferenced_entities(self) -> int:
        """Delete the entities no memory is about and no ledger row mentions; how many went."""
        ...

    def count_registered_entities(self) -> int: ...

    def entities_with_alias(self, aliases: Sequence[str]) -> set[str]: ...

    def entities_with_prefix(self, prefix: str) -> set[str]:
        """Entities whose id or an alias starts with `prefix` (taken literally)."""
        ...

    def entity_registered(self, entity_id: str) -> bool: ...

    def entity_has_memories(self, entity_id: str) -> bool: ...

    def entity_types(self, ids: Sequence[str]) -> dict[str, str]: ...

    def get_reply(self, key: str) -> tuple[str, str] | None:
        """(operation, reply) kept under an idempotency key, or None."""
        ...

    def put_reply(self, key: str, operation: str, reply: str, keep: int) -> None:
        """Keep a reply under its key, then only the newest `keep` keys."""
        ...

    def add_tombstones(self, stones: Sequence[Tombstone]) -> None:
        """Keep tombstones of forgotten memories (engine/store/tombstones.py; issue 29): not tied to memories."""
        ...

    def tombstones(self, limit: int) -> list[Tombstone]:
        """The newest `limit` tombstones, newest first."""
        ...


class ReviewStorage(Protocol):
    """What waits for an agent's review: contradiction candidates (engine/contradictions/review.py; a pending
    pair goes away with either memory), the memories still to be checked for them (engine/contradictions/
    follow.py) and reflect sessions (engine/reflect/service.py)."""

    def propose_contradictions(self, pairs: Sequence[PendingPair], checked: Sequence[str] = ()) -> None:
        """Store candidates; a pair already pending, in either order, is left as it is. Clears the pending
        check marks of `checked` (the memories whose check found them) in the same transaction."""
        ...

    def pending_checks(self, limit: int) -> list[str]:
        """Ids of up to `limit` memories whose contradiction check has not run yet, in the order written (the
        write's transaction marks them: `MemoryRecord.check_pending`)."""
        ...

    def checks_pending_among(self, ids: Sequence[str]) -> set[str]:
        """Which of these memories still wait for their contradiction check."""
        ...

    def count_pending_checks(self) -> int: ...

    def pending_contradictions(self, limit: int) -> list[PendingPair]:
        """Candidates waiting for a verdict, most confident first, then oldest."""
        ...

    def pending_contradictions_by_id(self, pending_ids: Sequence[str]) -> dict[str, PendingPair]: ...

    def resolve_contradictions(self, pending_ids: Sequence[str]) -> None:
        """Drop candidates whose verdict was applied."""
        ...

    def open_reflect_session(self, session_id: str, clusters: Sequence[Sequence[str]], expires_at: float) -> None:
        """Keep a session's clusters (memory ids) until `expires_at` (unix seconds); long-expired ones go."""
        ...

    def reflect_session(self, session_id: str) -> tuple[list[list[str]], float] | None:
        """(clusters, expires_at) of a session, or None if there is none."""
        ...

    def close_reflect_session(self, session_id: str) -> None: ...


class CopyStorage(Protocol):
    """What a migration (engine/store/migrate.py) reads and writes whole: the tables of `rows.COPIED_TABLES`."""

    def table_rows(self, table: str) -> list[tuple[Any, ...]]:
        """Every row of one of `rows.COPIED_TABLES`, its columns in that order."""
        ...

    def add_table_rows(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        """Insert rows of one of `rows.COPIED_TABLES` in one transaction, leaving out those whose key columns
        match a row already there (so a copy run twice adds nothing the second time)."""
        ...

    def row_counts(self) -> dict[str, int]:
        """Rows in each of `rows.COUNTED_TABLES`."""
        ...


@runtime_checkable
class KeyStorage(Protocol):
    """API keys in a store several servers share (PostgreSQL): a key made or revoked through one server is
    honoured by every other from its next request. A store one server owns (SQLite) leaves the keys to a file
    in its data dir (interfaces/auth.py)."""

    def api_keys(self) -> str | None:
        """The key document (`KeyDocument.text`), None if no key was ever stored."""
        ...

    def changing_api_keys(self) -> AbstractContextManager[KeyDocument]:
        """The key document, locked against every other writer of it until the block ends, when what the block
        left in `text` is stored (nothing is, if it raised)."""
        ...


class Storage(
    Transactions,
    MemoryStorage,
    EdgeStorage,
    StructureStorage,
    RecallReadStorage,
    VectorSyncStorage,
    FullTextStorage,
    Bookkeeping,
    ReviewStorage,
    CopyStorage,
    Protocol,
):
    """Everything the engine asks of its record store."""
