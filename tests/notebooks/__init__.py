"""The notebooks under test: every `notebooks/*.ipynb`, one pytest param each."""

from __future__ import annotations

from pathlib import Path

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
