"""What every backend's lexical (BM25) index shares: its two tables' names, the idf of Okapi BM25, and the
shape of a whole-index read (`LexicalDump`).

`memory_text` holds each memory's own content, `window_text` its context window (engine/store/sqlite/fulltext.py
says how windows are made). Scores are the same on every backend: the engine's postings (engine/index/
postings.py) and each store's own search use this idf.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

TABLES = ("memory_text", "window_text")


def idf(rows: int, containing: int) -> float:
    """Lucene's BM25 idf, log(1 + (N - n + 0.5) / (n + 0.5)): positive even for a term in most rows."""
    return math.log(1.0 + (rows - containing + 0.5) / (containing + 0.5))


@dataclass(frozen=True, slots=True)
class TablePostings:
    """Every posting list of one lexical table: the terms in ascending UTF-8 byte order, term n's postings at
    `rows[starts[n]:starts[n + 1]]` (row numbers ascending) with their `counts` (occurrences), and each row's
    length in tokens (`lengths` of the rows `numbered`)."""

    terms: list[str]
    starts: np.ndarray  # int64, len(terms) + 1
    rows: np.ndarray  # int32
    counts: np.ndarray  # int32
    numbered: np.ndarray  # int64 row numbers
    lengths: np.ndarray  # int64


@dataclass(frozen=True, slots=True)
class LexicalDump:
    """The whole lexical index as read in one transaction, with the change number (`Storage.change_seq`) it
    was read at: each row number's memory id and both tables' postings."""

    seq: int
    row_numbers: np.ndarray  # int64
    row_ids: list[str]
    tables: dict[str, TablePostings]


def collect(batches: Iterable[Sequence[tuple[str, int, int]]]) -> tuple[list[str], np.ndarray, np.ndarray,
                                                                          np.ndarray]:
    """(terms, starts, rows, counts) of `TablePostings` from (term, row, occurrences) triples sorted by term
    (UTF-8 byte order) then row, in batches (a store streams them: never all rows as Python tuples at once)."""
    terms: list[str] = []
    starts: list[int] = []
    rows: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    done, last = 0, None
    for batch in batches:
        names, numbers, occurrences = zip(*batch, strict=True)
        rows.append(np.array(numbers, dtype=np.int32))
        counts.append(np.array(occurrences, dtype=np.int32))
        for n, term in enumerate(names):
            if term != last:
                terms.append(term)
                starts.append(done + n)
                last = term
        done += len(batch)
    starts.append(done)
    empty = np.zeros(0, dtype=np.int32)
    return (terms, np.array(starts, dtype=np.int64), np.concatenate(rows) if rows else empty,
            np.concatenate(counts) if counts else empty)
