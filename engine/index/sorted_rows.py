"""Membership in a sorted array by binary search: cheaper than `np.isin` or `np.setdiff1d` (which sort both
arrays together) when one side is sorted already, as a segment's posting lists and row numbers are."""

from __future__ import annotations

import numpy as np


def members_of(sorted_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Whether each of `rows` is in `sorted_rows` (ascending)."""
    if not len(sorted_rows):
        return np.zeros(len(rows), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_rows, rows), len(sorted_rows) - 1)
    return sorted_rows[at] == rows
