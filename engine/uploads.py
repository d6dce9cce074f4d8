"""Uploaded source files (the workbench and /v1/upload keep them under `<data dir>/uploads`): once a forget leaves no
memory indexed from a file, the file goes too, so forgetting a document does not leave its text on disk."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from engine.store.interface import Storage
from engine.store.ledger import Ledger

# Files uploaded through the workbench, kept under the data dir; deleted once no memory comes from them.
UPLOADS_DIRNAME = "uploads"

log = logging.getLogger(__name__)


def uploads_dir(data_dir: Path) -> Path:
    return data_dir / UPLOADS_DIRNAME


def remove_unreferenced_uploads(data_dir: Path, store: Storage) -> list[Path]:
    """Delete the uploaded files no memory was indexed from any more; returns them."""
    folder = uploads_dir(data_dir)
    if not folder.is_dir():
        return []
    referenced = Ledger(store).sources()
    removed = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        if str(path.resolve()) not in referenced:
            try:
                path.unlink()
                removed.append(path)
            except OSError as exc:  # reported, never fatal: the memories are already forgotten
                log.warning("could not delete the uploaded file %s: %s", path.name, exc)
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir() and not p.is_symlink()), reverse=True):
        with contextlib.suppress(OSError):  # a folder emptied by the deletes goes too (rmdir refuses others)
            sub.rmdir()
    return removed
