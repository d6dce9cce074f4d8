"""Ingestion: turn a user's notes and documents into memories every recall strategy can use.

`hebbs index PATH...` (and `MemoryEngine.index`) reads Markdown, plain text and JSON chat transcripts,
splits them into propositions, extracts entities, dates, causal and relation edges and relational
structure with spaCy (offline; an LLM extractor is optional), and writes them idempotently.

This package's `__init__` stays import-light: the facade imports the entity registry from here on every
recall, and spaCy is only loaded when something is actually analysed.
"""

from engine.ingest.summary import IndexSummary

__all__ = ["IndexSummary"]
