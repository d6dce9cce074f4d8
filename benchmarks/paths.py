"""Where the benchmarks read and write, always resolved from the repository root (never absolute in the repo)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"
CACHE_DIR = REPO_ROOT / "benchmarks" / ".cache"
DOCS_DIR = REPO_ROOT / "docs"

LOCOMO_ENV = "HEBBS_LOCOMO_PATH"
# The data set lives beside the repo (CC BY-NC 4.0): it is read from there and never copied in.
DEFAULT_LOCOMO = Path("..") / "shared" / "data" / "locomo10.json"


def locomo_path(explicit: str | Path | None = None) -> Path:
    """The LoCoMo file: an explicit path, else `$HEBBS_LOCOMO_PATH`, else `../shared/data/locomo10.json`
    resolved against the repository root (not the working directory, so any cwd works)."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(LOCOMO_ENV)
    if env:
        return Path(env).expanduser()
    return (REPO_ROOT / DEFAULT_LOCOMO).resolve()


def display(path: Path) -> str:
    """A path as the docs show it: relative to the repo root when possible, so no machine path leaks."""
    try:
        return os.path.relpath(path.resolve(), REPO_ROOT)
    except ValueError:
        return path.name


def write_json(path: Path, data: Any) -> None:
    """A results file as the benchmarks keep them: indented JSON with a final newline, its folder made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def save_by_size(path: Path, size: int, run: dict[str, Any]) -> None:
    """Keep one run per store size in a results file: this size's entry replaced, the other sizes' kept."""
    runs = json.loads(path.read_text()) if path.exists() else {}
    runs[str(size)] = run
    write_json(path, runs)
