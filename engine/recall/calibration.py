"""The fused relevance as a calibrated number in [0, 1] that the composite score can weigh against recency.

A fused recall adds per-query z-scores of several signals (engine/recall/fusion.py); the sum is evidence on an
open scale. The composite score assumes a relevance in [0, 1] whose difference between a good and a poor match
is large next to a recency or reinforcement step, as a cosine's is. So the fused score is mapped through

    relevance = logistic(SLOPE * z + INTERCEPT),   z = (fused - mean) / std over the query's candidate pool

- z: how far a candidate's evidence stands above the rest of *this* query's pool, in standard deviations.
  It does not depend on how many signals were fused or how they were weighted, so one fit serves every
  fused mix; a pool whose candidates all have the same evidence gets z = 0 for all.
- SLOPE, INTERCEPT (engine/recall/calibration_fit.py): a logistic regression of "this candidate is one the
  question's evidence names" on z, fitted on LoCoMo's tuning half only (benchmarks/calibrate.py) with each
  question's relevant and other candidates given equal total weight. The result is the probability of
  relevance at even prior odds, i.e. a calibrated likelihood ratio: the base rate (one relevant memory among
  ten or among a hundred thousand) is left out because it depends on the store's size, not on the evidence.

The mapping is strictly increasing, so it never changes the fused order; it only gives relevance the spread
the default weights assume (docs/calibration.md).
"""

from __future__ import annotations

import numpy as np

from engine.recall import calibration_fit


def standardised(fused: np.ndarray) -> np.ndarray:
    """Each candidate's fused score in standard deviations from the pool's mean (all 0 for a constant pool)."""
    if fused.size == 0:
        return np.zeros(0)
    mean, std = float(fused.mean()), float(fused.std())
    if not std > 1e-12:
        return np.zeros_like(fused, dtype=np.float64)
    return (fused - mean) / std


def from_z(z: np.ndarray | float) -> np.ndarray:
    """The calibrated relevance of standardised evidence `z` (strictly increasing in z, in (0, 1))."""
    x = calibration_fit.SLOPE * np.asarray(z, dtype=np.float64) + calibration_fit.INTERCEPT
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(x, -60.0, 60.0))))


def calibrated(fused: np.ndarray) -> np.ndarray:
    """The calibrated relevance of every candidate of one query's pool, from its fused scores."""
    return from_z(standardised(fused))
