"""Offline contradiction candidates: statements that cannot both hold, or a newer one that revises an older."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from engine.contradictions.detect import Finding, Statement, compare, statement

__all__ = ["Finding", "Statement", "compare", "detect_pairs", "statement"]


PARSED_KEPT = 4_096  # statements kept by text: a memory checked against several new ones is parsed once
_parsed: OrderedDict[str, Statement] = OrderedDict()
_lock = threading.Lock()


def detect_pairs(pairs: Sequence[tuple[str, str]]) -> list[Finding | None]:
    """A finding (or None) for each (older, newer) pair of texts, the texts not parsed recently parsed in one
    batch by the shared spaCy."""
    from engine.ingest.nlp import load

    with _lock:
        known = {text: _parsed[text] for pair in pairs for text in pair if text in _parsed}
    texts = sorted({text for pair in pairs for text in pair} - set(known))
    # The checks read tags, lemmas and the parse, never entities: without NER a parse costs half (the same
    # statements for every labelled pair).
    docs = load().pipe(texts, disable=["ner"])
    parsed = {**known, **{text: statement(doc) for text, doc in zip(texts, docs, strict=True)}}
    with _lock:
        for text, parsed_statement in parsed.items():
            _parsed[text] = parsed_statement
            _parsed.move_to_end(text)
        while len(_parsed) > PARSED_KEPT:
            _parsed.popitem(last=False)
    return [compare(parsed[a], parsed[b]) for a, b in pairs]
