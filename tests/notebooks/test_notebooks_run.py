"""Every notebook runs top to bottom, as a user would run it: in `notebooks/`, in a fresh kernel.

The kernel is the `python3` kernel of the interpreter running the tests (ipykernel's own kernel spec, so the
venv's), never a `python3` kernel spec some other Python installed in the user's Jupyter folders. Any cell
error fails the test with the cell's traceback. Each notebook has a time budget for the whole run; the
target is under two minutes on a laptop, and the time taken is printed and recorded as a test property.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

from tests.notebooks import NOTEBOOKS, NOTEBOOKS_DIR

# Seconds for a whole notebook. Generous: CI machines are shared and slower than a laptop.
BUDGET_SECONDS = 600
BUDGETS: dict[str, int] = {}  # per-notebook overrides, by file name


def native_kernel_spec_manager() -> KernelSpecManager:
    """Kernel specs from ipykernel itself only: `python3` is then always this interpreter."""
    return KernelSpecManager(kernel_dirs=[])


def test_python3_kernel_is_this_interpreter() -> None:
    spec = native_kernel_spec_manager().get_kernel_spec("python3")
    assert Path(spec.argv[0]).resolve() == Path(sys.executable).resolve()


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path: Path, record_property: Callable[[str, object], None]) -> None:
    nb = nbformat.read(path, as_version=4)
    budget = BUDGETS.get(path.name, BUDGET_SECONDS)
    deadline = time.monotonic() + budget
    client = NotebookClient(
        nb,
        km=AsyncKernelManager(kernel_name="python3", kernel_spec_manager=native_kernel_spec_manager()),
        # The budget is for the whole notebook: each cell may use what the cells before it left.
        timeout_func=lambda cell: max(1, int(deadline - time.monotonic())),
        startup_timeout=120,
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},  # cwd, so relative paths work as in Jupyter
    )
    started = time.monotonic()
    client.execute()
    seconds = time.monotonic() - started
    record_property("seconds", round(seconds, 1))
    print(f"{path.name} ran in {seconds:.1f} s")
