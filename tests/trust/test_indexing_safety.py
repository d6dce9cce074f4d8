"""Indexing a hostile folder: links out of it are not followed, FIFOs do not hang it, a pathological file (one
that cannot be parsed, or takes longer than the per-file time budget) is skipped with a reason instead of
aborting or stalling the run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.big_markdown import generate
from engine import MemoryEngine
from engine.ingest.documents import discover, read_document
from engine.ingest.summary import Skipped
from engine.store.records import RecordStore
from interfaces.cli import main
from tests.trust.crash_worker import HashEmbedder


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


def test_a_file_over_its_time_budget_is_skipped_and_the_run_goes_on(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a-log.md").write_text(generate(0.15), encoding="utf-8")  # about 2,000 sentences: seconds of spaCy
    (folder / "b-note.md").write_text("# Note\n\nThe vendor renewed the contract because the price fell.\n")
    with MemoryEngine(tmp_path / "data", embedder=HashEmbedder()) as engine:
        summary = engine.ingest([folder], file_seconds=0.5)
        assert [s.path for s in summary.skipped] == ["docs/a-log.md"]
        assert summary.skipped[0].reason.startswith("analysis took over the per-file time budget of 0.5 s")
        assert summary.documents_indexed == 1
        sources = {m.context.get("source") for m in engine.list_memories(limit=1000)}
        assert sources == {"docs/b-note.md"}  # nothing of the file over budget was stored


@pytest.mark.parametrize(("args", "env"), [
    (["--file-seconds", "-1"], {}),
    (["--file-seconds", "nan"], {}),
    ([], {"HEBBS_INDEX_FILE_SECONDS": "soon"}),
])
def test_a_bad_time_budget_is_a_usage_error(tmp_path: Path, args: list[str], env: dict[str, str]) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.md").write_text("# Note\n\nThe vendor renewed the contract.\n")
    data = tmp_path / "data"
    result = CliRunner().invoke(main, ["--data-dir", str(data), "index", str(folder), *args], env=env)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert "budget" in result.stderr or "seconds" in result.stderr
    assert not (data / "records.sqlite3").exists() or RecordStore(data / "records.sqlite3").count() == 0
