"""A full disk and a read-only data dir, on a real small tmpfs (skipped where mounting is not allowed):
one-line StoreErrors, no acknowledged write lost, no stored write reported as failed, reads (recall by
similarity through a private copy of the vector index included) still work."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import MemoryEngine
from engine.analogy.text import EpisodeExtractor
from engine.embedding import Embedder
from engine.errors import StoreError
from engine.store.records import RecordStore
from interfaces.cli import main
from tests.trust.crash_worker import HashEmbedder


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = _run("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'mount failed'})")
    try:
        yield mount
    finally:
        _run("umount", "-l", str(mount))


def test_a_full_disk_is_a_store_error_and_loses_nothing_acknowledged(tmpfs: Path) -> None:
    data = tmpfs / "data"
    acknowledged: list[str] = []
    failure: StoreError | None = None
    with MemoryEngine(data, embedder=HashEmbedder()) as engine:
        for n in range(2000):
            try:
                batch = engine.remember_many([{"content": f"filling the disk {n} {'x' * 2000} {j}"} for j in range(20)])
            except StoreError as exc:
                failure = exc
                break
            acknowledged.extend(m.id for m in batch)
        assert failure is not None, "the 3 MB disk never filled"
        assert "\n" not in str(failure) and "disk is full" in str(failure)
        found = engine.get_many(acknowledged)
        assert len(found) == len(acknowledged)  # every acknowledged write is readable
        assert engine.list_page(limit=1).total == len(acknowledged)  # and the failed one left nothing behind


def test_a_read_only_store_can_be_read_not_written(tmpfs: Path, embedder: Embedder) -> None:
    written = tmpfs / "data"
    # The real model: the CLI below recalls with the configured model, and a store is searched only with the
    # model that wrote it.
    with MemoryEngine(written, embedder=embedder) as engine:
        kept = engine.remember("The cooling fan of rack 7 was replaced.", entity_id="rack-7")
    data = tmpfs.parent / "read-only-view"  # the same files through a read-only bind mount
    data.mkdir()
    assert _run("mount", "--bind", str(written), str(data)).returncode == 0
    try:
        assert _run("mount", "-o", "remount,bind,ro", str(data)).returncode == 0
        _read_only_checks(data, kept.id, kept.content, embedder)
    finally:
        _run("umount", "-l", str(data))


def _read_only_checks(data: Path, kept_id: str, content: str, embedder: Embedder) -> None:
    with MemoryEngine(data, embedder=embedder) as engine:
        assert engine.get(kept_id).content == content
        assert [m.id for m in engine.list_memories(entity_id="rack-7")] == [kept_id]
        found = engine.recall(content, strategies=["similarity"], top_k=1)  # needs Chroma, opened read-only
        assert [r.memory.id for r in found] == [kept_id]
        # Its structure was left pending by the write; reading it extracts it in
        # memory, since the file cannot be written.
        assert engine.pending_structures() == 1
        assert engine.structure_of(kept_id) == EpisodeExtractor().extract([content])[0]
        analogs = engine.recall(content, strategies=["analogical"], analogical_alpha=0.0, top_k=1)
        assert [r.memory.id for r in analogs] == [kept_id] and engine.pending_structures() == 0
        with pytest.raises(StoreError) as raised:
            engine.remember("Another memory.")
        assert "read-only" in str(raised.value) and "\n" not in str(raised.value)
    result = CliRunner().invoke(main, ["--data-dir", str(data), "get", kept_id, "--format", "json"])
    assert result.exit_code == 0, result.stderr
    result = CliRunner().invoke(main, ["--data-dir", str(data), "recall", "rack 7 fan", "--format", "json"])
    assert result.exit_code == 0 and kept_id in result.stdout, result.stderr
    result = CliRunner().invoke(main, ["--data-dir", str(data), "forget", kept_id])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and "read-only" in result.stderr
    store = RecordStore(data / "records.sqlite3")
    try:
        assert store.read_only and store.existing([kept_id]) == {kept_id}
        assert store.count_pending_structures() == 1  # the file is unchanged: still pending for a writer
    finally:
        store.close()
