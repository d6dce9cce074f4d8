"""Importance from restatement and explicit dates (the pure part of engine.ingest.salience)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.ingest import salience
from engine.ingest.salience import _Statement


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_an_event_restated_by_three_documents_outranks_a_detail() -> None:
    event = unit(1, 0.1, 0)
    day = {
        ("acme", 1): [
            _Statement("A", "a.md", True, event),
            _Statement("B", "b.md", False, unit(1, 0.2, 0)),
            _Statement("C", "c.md", False, unit(1, 0, 0.15)),
            _Statement("D", "a.md", False, unit(0, 0, 1)),  # a different fact that day
            _Statement("E", "a.md", False, unit(1, 0.1, 0.01)),  # a document does not restate itself
        ]
    }
    importance = salience.compute(day)
    assert importance["A"] == pytest.approx(0.5 + 0.2 + 0.1)  # canonical: two extra documents, dated
    assert importance["B"] == importance["C"] == salience.RESTATEMENT
    assert importance["D"] == importance["E"] == pytest.approx(0.5)


def test_the_dated_statement_is_the_canonical_one_and_days_do_not_mix() -> None:
    v = unit(1, 1, 0)
    groups = {
        ("acme", 1): [_Statement("A", "a.md", False, v), _Statement("Z", "b.md", True, v)],
        ("acme", 2): [_Statement("Q", "c.md", False, v)],
    }
    importance = salience.compute(groups)
    assert importance["Z"] == pytest.approx(0.7) and importance["A"] == salience.RESTATEMENT
    assert importance["Q"] == pytest.approx(0.5)


def test_importance_is_capped() -> None:
    v = unit(0, 1, 0)
    groups = {("acme", 1): [_Statement(str(i), f"{i}.md", True, v) for i in range(9)]}
    assert salience.compute(groups)["0"] == salience.CEILING
