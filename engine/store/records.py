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

import contextlib
import os
import sqlite3
from pathlib import Path

from engine.store.errors import as_store_error
from engine.store.sqlite.bookkeeping import Bookkeeping
from engine.store.sqlite.edges import EdgeTable
from engine.store.sqlite.memories import MemoryTable
from engine.store.sqlite.recall_reads import RecallReads
from engine.store.sqlite.reviews import ReviewTables
from engine.store.sqlite.structures import StructureTable
from engine.store.sqlite.text_search import TextSearch
from engine.store.sqlite.vector_sync import VectorSync


class RecordStore(
    MemoryTable, EdgeTable, StructureTable, RecallReads, VectorSync, TextSearch, Bookkeeping, ReviewTables
):
    """The SQLite record store: `RecordStore(path)` opens (or creates) the file."""


def make_private_dir(folder: Path) -> None:
    """Create a data dir readable by its owner only (0700); one that exists keeps its mode."""
    if not folder.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)


def open_record_store(path: Path) -> RecordStore:
    """The record store at `path`. A new file is created 0600 before SQLite opens it: SQLite gives its WAL and
    shared-memory files the database file's mode, so the memories' text is never readable by other users.
    A file SQLite cannot read is a one-line `StoreError` naming the data dir."""
    if not path.exists() and os.access(path.parent, os.W_OK):
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        return RecordStore(path)
    except sqlite3.DatabaseError as exc:
        raise as_store_error(exc, path.parent) from exc
