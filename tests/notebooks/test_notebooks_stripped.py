"""Notebooks are committed without outputs: diffs stay readable and no run's data (or machine path) leaks in.

Strip a notebook before committing with `.venv/bin/nbstripout notebooks/*.ipynb` (or "Clear All Outputs" in
Jupyter); `.venv/bin/nbstripout --install` makes git do it on every commit.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tests.notebooks import NOTEBOOKS, NOTEBOOKS_DIR

EXPECTED = {"01_tour", "02_weight_tuning", "03_timelines_and_graphs", "04_locomo_evaluation"}
# An absolute path in a cell: a home or temp folder, a drive letter. Notebooks resolve paths from their folder.
ABSOLUTE_PATH = re.compile(r"""["'](?:/(?:home|Users|root|tmp|var|work|mnt|opt)/|[A-Za-z]:\\)""")


def test_every_notebook_is_here() -> None:
    assert {p.stem for p in NOTEBOOKS} >= EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stripped(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {index} has outputs")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {index} has an execution count")
        if "execution" in cell.get("metadata", {}):
            problems.append(f"cell {index} has execution timing metadata")
    if "widgets" in nb.metadata:
        problems.append("the notebook stores widget state")
    assert not problems, f"{path.name} is not stripped ({'; '.join(problems)}): run .venv/bin/nbstripout {path.name}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_uses_the_python3_kernel(path: Path) -> None:
    """`python3` is the kernel of the interpreter that runs it (the venv's ipykernel), on any machine."""
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_absolute_paths(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    found = [(i, m.group(0)) for i, cell in enumerate(nb.cells) for m in ABSOLUTE_PATH.finditer(cell.source)]
    assert not found, f"{path.name}: absolute paths in cells {found}; resolve paths from {NOTEBOOKS_DIR.name}/"
