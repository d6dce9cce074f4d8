"""Offline contradiction candidates: statements that cannot both hold, or a newer one that revises an older."""

from __future__ import annotations

from collections.abc import Sequence

from engine.contradictions.detect import Finding, Statement, compare, statement

__all__ = ["Finding", "Statement", "compare", "detect_pairs", "statement"]


def detect_pairs(pairs: Sequence[tuple[str, str]]) -> list[Finding | None]:
    """A finding (or None) for each (older, newer) pair of texts, parsed in one batch by the shared spaCy."""
    from engine.ingest.nlp import load

    texts = sorted({text for pair in pairs for text in pair})
    parsed = {text: statement(doc) for text, doc in zip(texts, load().pipe(texts), strict=True)}
    return [compare(parsed[a], parsed[b]) for a, b in pairs]
