"""What a recall writes (its results' access counts) costs no fsync of its own, and no commit waits for the
write-ahead log to be copied into the database file (engine/store/sqlite/checkpoints.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine import MemoryEngine
from engine.embedding import Embedder
from engine.store.records import RecordStore
from engine.store.sqlite.checkpoints import FALLBACK_PAGES, WalCheckpointer
from tests.waiting import wait_for


@contextmanager
def statements(store: RecordStore) -> Iterator[list[str]]:
    """The SQL the store's connection runs meanwhile (SQLite's trace callback)."""
    seen: list[str] = []
    store._conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        store._conn.set_trace_callback(None)


def test_a_recall_counts_its_results_without_an_fsync_and_writes_stay_durable(engine: MemoryEngine) -> None:
    store = engine._store
    assert isinstance(store, RecordStore)
    made = engine.remember("The boiler was serviced in March.", importance=0.6)
    with statements(store) as seen:
        (found,) = engine.recall("boiler service", strategies=["similarity"], top_k=1)
    assert found.memory.id == made.id and found.memory.access_count == 1
    normal = seen.index("PRAGMA synchronous=NORMAL")
    update = next(n for n, s in enumerate(seen) if s.startswith("UPDATE memories SET access_count"))
    commit = seen.index("COMMIT", update)
    assert normal < update < commit < seen.index("PRAGMA synchronous=FULL", commit)
    assert store.read("PRAGMA synchronous") == [(2,)]  # FULL again for whatever writes next
    with statements(store) as seen:
        engine.remember("The boiler needs a new pump.")
    assert not any("synchronous" in s for s in seen)  # an acknowledged write waits for its fsync, as always


def test_counts_survive_a_reopen_on_each_store(store: dict[str, Any], embedder: Embedder) -> None:
    with MemoryEngine(**store, embedder=embedder) as engine:
        made = engine.remember("The lighthouse lamp was replaced in May.")
        for _ in range(3):
            engine.recall("lighthouse lamp", strategies=["similarity"], top_k=1)
    with MemoryEngine(**store, embedder=embedder) as engine:
        assert engine.get(made.id).access_count == 3


def test_commits_wake_the_checkpointer_instead_of_checkpointing_inline(engine: MemoryEngine) -> None:
    store = engine._store
    assert isinstance(store, RecordStore)
    assert store.read("PRAGMA wal_autocheckpoint") == [(FALLBACK_PAGES,)]  # SQLite's own: only the safety net
    checkpointer = store._checkpointer
    assert checkpointer is not None
    before = store.path.stat().st_size
    engine.remember_many([{"content": f"note {n} about the garden shed"} for n in range(50)])
    # Copied into the database file soon after the commit (without the checkpointer it would stay in the log:
    # 50 memories are far below SQLite's own threshold).
    wait_for(lambda: store.path.stat().st_size > before)
    assert checkpointer.checkpoints >= 1


def test_the_checkpointer_stops_with_the_store(tmp_path: Path) -> None:
    path = tmp_path / "records.sqlite3"
    store = RecordStore(path)
    store.set_meta("probe", "1")
    checkpointer = store._checkpointer
    assert checkpointer is not None and checkpointer._thread is not None
    wait_for(lambda: checkpointer.checkpoints >= 1)
    store.close()
    assert not checkpointer._thread.is_alive()
    assert not path.with_name(path.name + "-wal").exists()  # the last connection's close checkpointed and removed it
    idle = WalCheckpointer(path)
    idle.close()  # never woken: nothing to stop, and no thread started after
    idle.committed()
    assert idle._thread is None


def test_an_idle_checkpointer_ends_its_thread_and_the_next_commit_starts_another(tmp_path: Path) -> None:
    path = tmp_path / "records.sqlite3"
    store = RecordStore(path)
    try:
        assert store._checkpointer is not None
        store._checkpointer.close()  # (replaced by one that idles out quickly)
        store._checkpointer = checkpointer = WalCheckpointer(path, period=0.0, idle=0.05)
        store.set_meta("probe", "1")
        first = checkpointer._thread
        assert first is not None
        wait_for(lambda: not first.is_alive())  # no commit for a while: the thread and its connection are gone
        assert checkpointer._thread is None and checkpointer.checkpoints == 1
        store.set_meta("probe", "2")
        wait_for(lambda: checkpointer.checkpoints == 2)
        assert checkpointer._thread is not first
    finally:
        store.close()
