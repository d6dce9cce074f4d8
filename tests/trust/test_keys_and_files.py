"""Keys, file modes and damaged files, from outside (issue 30, items 7, 8 and 12): concurrent `hebbs keys`
processes lose nothing and never undo a revocation; everything `hebbs` writes is its user's alone; the
data-dir lock survives a deleted `.owner.lock`; a damaged record store or vector index is one line that
names the file and what to do."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import MemoryEngine
from engine.embedding import SentenceTransformerEmbedder
from engine.errors import StoreError
from interfaces.auth import AuthenticationError, KeyRing
from interfaces.cli import main
from tests.trust.servers import HEBBS


def _hebbs(data: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([HEBBS, "--data-dir", str(data), *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def _create(data: Path, name: str) -> dict[str, str]:
    done = _hebbs(data, "keys", "create", "--name", name, "--format", "json")
    assert done.returncode == 0, done.stderr
    made: dict[str, str] = json.loads(done.stdout)
    return made


# --- item 7: key races ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_ten_concurrent_creates_keep_every_key(tmp_path: Path) -> None:
    with ThreadPoolExecutor(10) as pool:
        made = list(pool.map(lambda n: _create(tmp_path, f"agent-{n}"), range(10)))
    ring = KeyRing(tmp_path)
    assert sorted(r.name for r in ring.records()) == sorted(f"agent-{n}" for n in range(10))
    assert all(ring.verify(m["key"]) for m in made)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".api_keys")]  # no temp file left


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(3))
def test_a_revocation_racing_creates_is_never_undone(tmp_path: Path, round_: int) -> None:
    first = [_create(tmp_path, f"old-{n}") for n in range(4)]
    revoked, kept = first[:2], first[2:]
    with ThreadPoolExecutor(8) as pool:
        revocations = [pool.submit(_hebbs, tmp_path, "keys", "revoke", m["id"]) for m in revoked]
        creations = [pool.submit(_create, tmp_path, f"new-{n}") for n in range(6)]
        assert all(f.result().returncode == 0 for f in revocations)
        new = [f.result() for f in creations]
    ring = KeyRing(tmp_path)
    assert not any(ring.verify(m["key"]) for m in revoked)
    assert all(ring.verify(m["key"]) for m in kept + new)
    assert len(ring.records()) == 2 + 6
    # A revoked key cannot come back, not even as the first key from HEBBS_API_KEY.
    with pytest.raises(AuthenticationError, match="revoked"):
        ring.add(revoked[0]["key"], "again")


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """An empty data dir this process cannot write: mode 0500, or for root a read-only bind mount."""
    data = tmp_path / "data"
    data.mkdir()
    if os.geteuid() != 0:
        data.chmod(0o500)
        yield data
        data.chmod(0o700)
        return
    view = tmp_path / "read-only-view"
    view.mkdir()
    if subprocess.run(["mount", "--bind", str(data), str(view)], capture_output=True).returncode != 0:
        pytest.skip("cannot bind-mount here: no read-only data dir for root")
    try:
        assert subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], capture_output=True).returncode == 0
        yield view
    finally:
        subprocess.run(["umount", "-l", str(view)], capture_output=True)


@pytest.mark.slow
def test_a_read_only_data_dir_is_one_line_for_keys_and_serve(read_only_dir: Path) -> None:
    created = _hebbs(read_only_dir, "keys", "create")
    assert created.returncode == 1 and created.stderr.count("\n") == 1, created.stderr
    assert "cannot change the API keys" in created.stderr and "Read-only" in created.stderr
    served = _hebbs(read_only_dir, "serve", "--rest-port", "0", "--grpc-port", "0")
    assert served.returncode == 1 and served.stderr.count("\n") == 1, served.stderr
    assert served.stderr.startswith("hebbs: error: ")


# --- item 8: file modes and the lock --------------------------------------------------------------------
def _modes(root: Path) -> dict[str, str]:
    """Every path under `root` (and root) that another user could read, with its mode."""
    loose = {}
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode & 0o077:
            loose[str(path.relative_to(root.parent))] = oct(mode)
    return loose


@pytest.mark.slow
def test_everything_the_cli_writes_is_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for args in (["remember", "Initech's CTO resigned on Friday.", "--entity-id", "initech"],
                 ["keys", "create"], ["recall", "who resigned", "--strategy", "similarity"], ["stats"]):
        done = _hebbs(data, *args)
        assert done.returncode == 0, done.stderr
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Plan\n\nUmbrella Corp will open a lab in Oslo next spring.\n")
    assert _hebbs(data, "index", str(notes)).returncode == 0
    assert {p.name for p in data.iterdir()} >= {"records.sqlite3", "chroma", "api_keys.json", ".owner.lock"}
    assert _modes(data) == {}


def test_the_python_api_creates_a_private_data_dir(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    data = tmp_path / "fresh" / "data"
    with MemoryEngine(data, embedder=embedder) as engine:
        engine.remember("Hooli's launch slipped to May.")
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        records = sorted(p for p in data.iterdir() if p.name.startswith("records.sqlite3"))
        assert len(records) >= 2  # the store and its WAL
        assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in records} == {p.name: "0o600" for p in records}


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A process that holds a data dir open (a Python API user), with `hebbs` as its program name."""
    data = tmp_path / "data"
    script = ("import sys; from engine import MemoryEngine; e = MemoryEngine(sys.argv[1]); "
              "e.remember('a secret plan to buy Globex'); print('ready', flush=True); sys.stdin.read()")
    proc = subprocess.Popen([str(Path(HEBBS).with_name("python")), "-c", script, str(data)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield proc, data
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=120)


def test_the_lock_file_names_only_pid_and_program(owner: tuple[subprocess.Popen[str], Path]) -> None:
    proc, data = owner
    assert (data / ".owner.lock").read_text() == f"pid {proc.pid} (-c)\n"
    assert stat.S_IMODE((data / ".owner.lock").stat().st_mode) == 0o600


def test_deleting_the_lock_file_does_not_free_the_store(owner: tuple[subprocess.Popen[str], Path]) -> None:
    proc, data = owner
    (data / ".owner.lock").unlink()
    refused = _hebbs(data, "remember", "a second writer")
    assert refused.returncode == 1 and "is in use" in refused.stderr and refused.stderr.count("\n") == 1
    result = CliRunner().invoke(main, ["--data-dir", str(data), "list"])
    assert result.exit_code == 1 and "is in use" in result.stderr


# --- item 12: damaged files -----------------------------------------------------------------------------
def _damage(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.write(b"this is not a database file " * 40)


def test_a_damaged_record_store_is_one_line_naming_it(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    data = tmp_path / "data"
    with MemoryEngine(data, embedder=embedder) as engine:
        engine.remember("Soylent's audit found two missing invoices.")
    _damage(data / "records.sqlite3")
    for args in (["list"], ["recall", "audit"], ["remember", "more"]):
        done = _hebbs(data, *args)
        assert done.returncode == 1, done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert str(data / "records.sqlite3") in done.stderr and "backup" in done.stderr
    with pytest.raises(StoreError, match="records.sqlite3 is damaged"):
        MemoryEngine(data, embedder=embedder)


@pytest.mark.slow
def test_a_damaged_vector_index_says_delete_it_and_is_rebuilt(tmp_path: Path,
                                                              embedder: SentenceTransformerEmbedder) -> None:
    data = tmp_path / "data"
    with MemoryEngine(data, embedder=embedder) as engine:
        kept = engine.remember("Soylent's audit found two missing invoices.")
    _damage(data / "chroma" / "chroma.sqlite3")
    done = _hebbs(data, "stats")
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert str(data / "chroma") in done.stderr and "delete that folder" in done.stderr
    for path in sorted((data / "chroma").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (data / "chroma").rmdir()
    # A new process (this one's Chroma client still holds the deleted file) rebuilds it from the records.
    stats = _hebbs(data, "stats", "--format", "json")
    assert stats.returncode == 0 and json.loads(stats.stdout)["vector_index"] == 1, stats.stderr
    found = _hebbs(data, "recall", "missing invoices audit", "--strategy", "similarity", "--format", "json")
    assert found.returncode == 0 and kept.id in found.stdout, found.stderr
