"""The PostgreSQL record store: the same `Storage` as the SQLite one, on a database several servers share."""

from __future__ import annotations

from engine.store.postgres.bookkeeping import Bookkeeping
from engine.store.postgres.memories import EdgeTable, MemoryTable
from engine.store.postgres.reviews import ReviewTables
from engine.store.postgres.structures import StructureTable
from engine.store.postgres.text import TextSearch


class PostgresStore(MemoryTable, EdgeTable, StructureTable, TextSearch, Bookkeeping, ReviewTables):
    """`PostgresStore(url)` connects (a pool) and creates the schema if the database has none. Memories and
    edges (with recall's bulk reads and this process's vector bookkeeping), structures, text, bookkeeping, reviews."""
