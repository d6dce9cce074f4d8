"""Indexing a hostile folder: links out of it are not followed, FIFOs do not hang it, a pathological file is
skipped with a reason instead of aborting the run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.ingest.documents import discover, read_document
from engine.ingest.summary import Skipped


def test_links_out_of_the_folder_are_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("# Private\n\nThe root password is hunter2.\n")
    secret.chmod(0o600)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nThe vendor renewed the contract.\n")
    (folder / "inner.md").symlink_to(folder / "notes.md")  # a link within the folder is fine
    (folder / "leak.md").symlink_to(secret)
    files, skipped, _ = discover([folder])
    assert sorted(display for _, display in files) == ["docs/inner.md", "docs/notes.md"]
    assert [(s.path, s.reason) for s in skipped] == [
        ("docs/leak.md", "a link to outside the indexed folder (not followed)")
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_skipped_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    result = read_document(fifo, "pipe.md")  # reading it would block forever
    assert isinstance(result, Skipped) and result.reason == "not a regular file"


def test_json_nested_100000_deep_is_skipped_with_a_reason(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    result = read_document(deep, "deep.json")
    assert isinstance(result, Skipped) and result.reason.startswith(("cannot be parsed", "not a chat"))
