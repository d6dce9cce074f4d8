"""What every backend's lexical (BM25) index shares: its two tables' names and the idf of Okapi BM25.

`memory_text` holds each memory's own content, `window_text` its context window (engine/store/sqlite/fulltext.py
says how windows are made). Scores are the same on every backend: the engine's in-memory postings
(engine/index/postings.py) and each store's own search use this idf.
"""

from __future__ import annotations

import math

TABLES = ("memory_text", "window_text")


def idf(rows: int, containing: int) -> float:
    """Lucene's BM25 idf, log(1 + (N - n + 0.5) / (n + 0.5)): positive even for a term in most rows."""
    return math.log(1.0 + (rows - containing + 0.5) / (containing + 0.5))
