"""Membership in a sorted array by binary search: cheaper than `np.isin` or `np.setdiff1d` (which sort both
arrays together) when one side is sorted already, as a segment's posting lists and row numbers are."""

from __future__ import annotations

import numpy as np


def positions_in(sorted_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Where each of `rows` is in `sorted_rows` (ascending: its first place), or -1 (int64, one per row)."""
    if not len(sorted_rows):
        return np.full(len(rows), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_rows, rows), len(sorted_rows) - 1)
    return np.where(sorted_rows[at] == rows, at, -1)


def members_of(sorted_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Whether each of `rows` is in `sorted_rows` (ascending)."""
    return positions_in(sorted_rows, rows) >= 0
