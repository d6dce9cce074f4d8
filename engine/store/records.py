"""The record store: one SQLite file in WAL mode, the source of truth for memories, edges and counters.

Every index (Chroma, timeline, graph) is rebuilt or reconciled from here. Embeddings are stored with the
memory so the vector index can be rebuilt without the model. Writes that must reach Chroma are marked
(`vector_synced = 0`, `pending_vector_deletes`) in the same transaction as the write itself, so a crash
between the two stores is repaired on the next open (a remember whose vectors reached Chroma just before
its transaction stores them marked synced: `DerivedIndexes.commit_with_vectors`).

`RecordStore` is the SQLite reference implementation of `engine.store.interface.Storage`, assembled from
one class per table and concern (engine/store/sqlite/) over one connection.
"""

from __future__ import annotations

from engine.store.sqlite.edges import EdgeTable
from engine.store.sqlite.memories import MemoryTable
from engine.store.sqlite.recall_reads import RecallReads
from engine.store.sqlite.structures import StructureTable
from engine.store.sqlite.text_search import TextSearch
from engine.store.sqlite.vector_sync import VectorSync


class RecordStore(MemoryTable, EdgeTable, StructureTable, RecallReads, VectorSync, TextSearch):
    """The SQLite record store: `RecordStore(path)` opens (or creates) the file."""
