"""One owner per data dir: a second process is refused with the owner named; the same process may reopen."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine import MemoryEngine
from engine.embedding import SentenceTransformerEmbedder
from engine.errors import DataDirLockedError
from engine.lock import DataDirLock

OPEN_AND_COUNT = textwrap.dedent(
    """
    import sys
    from engine import MemoryEngine
    from engine.errors import HebbsError
    try:
        with MemoryEngine(sys.argv[1]) as engine:
            print("opened", engine.stats()["memories"])
    except HebbsError as exc:
        print(f"{type(exc).__name__}: {exc}")
        sys.exit(3)
    """
)


def other_process(data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", OPEN_AND_COUNT, str(data_dir)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_a_second_process_is_refused_and_told_who_owns_the_data_dir(
    data_dir: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with MemoryEngine(data_dir, embedder=embedder) as engine:
        engine.remember("the owner wrote this")
        refused = other_process(data_dir)
        assert refused.returncode == 3, refused.stderr
        assert refused.stdout.startswith("DataDirLockedError: ")
        assert f"pid {os.getpid()}" in refused.stdout and "--server" in refused.stdout
        # The refused process changed nothing: the owner still reads its memory.
        assert engine.stats()["memories"] == 1
    opened = other_process(data_dir)  # released on close
    assert opened.returncode == 0 and opened.stdout.split() == ["opened", "1"], opened


def test_the_cli_is_refused_with_one_line_naming_the_owner(
    data_dir: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with MemoryEngine(data_dir, embedder=embedder):
        cli = subprocess.run([str(Path(sys.executable).with_name("hebbs")), "--data-dir", str(data_dir), "stats"],
                             capture_output=True, text=True, timeout=120)
    assert cli.returncode == 1
    assert cli.stderr.count("\n") == 1 and cli.stderr.startswith("hebbs: error: data dir ")
    assert f"in use by pid {os.getpid()}" in cli.stderr


def test_the_same_process_may_open_a_data_dir_twice_and_reopen_it(
    data_dir: Path, embedder: SentenceTransformerEmbedder
) -> None:
    first = MemoryEngine(data_dir, embedder=embedder)
    second = MemoryEngine(data_dir, embedder=embedder)
    first.close()
    assert other_process(data_dir).returncode == 3  # still held by `second`
    second.close()
    second.close()  # closing twice is harmless
    with MemoryEngine(data_dir, embedder=embedder) as again:
        assert again.stats()["memories"] == 0
    with DataDirLock(data_dir):  # nothing left held: the OS lock can be taken afresh
        pass


def test_a_dead_owner_leaves_no_stale_lock(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from engine.lock import DataDirLock; DataDirLock(sys.argv[1]).acquire();"
         " print('held', flush=True); sys.stdin.read()", str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(DataDirLockedError, match=f"pid {holder.pid}"):
        DataDirLock(tmp_path).acquire()
    holder.kill()
    holder.wait()
    with DataDirLock(tmp_path):
        pass
