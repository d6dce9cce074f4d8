"""Ingestion: turn a user's notes and documents into memories every recall strategy can use.

`hebbs index PATH...` (and `MemoryEngine.ingest`) reads Markdown, plain text and JSON chat transcripts,
splits them into propositions, extracts entities, dates, causal and relation edges and relational
structure with spaCy (offline; an LLM extractor is optional), and writes them idempotently.

It writes through `engine.writer.Writer` (the engine's one write path) and the record store's public
methods; it never imports the facade. This `__init__` stays import-light: spaCy is loaded only when
something is actually analysed.
"""

from engine.ingest.summary import IngestSummary

__all__ = ["IngestSummary"]
