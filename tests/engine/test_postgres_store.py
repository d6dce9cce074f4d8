"""The PostgreSQL record store against the SQLite one on the same data: the same BM25 scores (SQL and posting
lists), the same windows after writes, revises and forgets, and the same ranked recall of one ingested set
of documents and conversations; access counts stay exact when engines on one database recall at once.
Real servers: SQLite files in a temp dir and the session's PostgreSQL on loopback."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from engine import MemoryEngine, config
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.index.postings import LexicalPostings
from engine.models import Edge, EdgeType, Memory, MemoryKind
from engine.recall.lexical_query import terms
from engine.store.interface import Storage
from engine.store.postgres import PostgresStore
from engine.store.records import RecordStore
from engine.store.rows import MemoryRecord
from tests.conftest import START

_TEXT = (
    "fan rack cooling failed budget approved dana sofia launch orbit api webhook storm outage payments "
    "ledger certificate expiry dns cache stampede disk full clinic opening thermostat recall campaign the "
    "a of and in on was were is running runs ran"
)
WORDS = tuple(_TEXT.split())
SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def _records(n: int, seed: int) -> tuple[list[MemoryRecord], list[Edge]]:
    """`n` memories of random text in a few conversations (linked in order), some with no episode."""
    rng = random.Random(seed)
    records, edges = [], []
    for i in range(n):
        at = START + timedelta(minutes=i)
        conversation = f"c{i % 3}" if i % 5 else None
        context = {"conversation": conversation, "session": "s1"} if conversation else {}
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14)))
        memory = Memory(f"M{i:05d}", text.capitalize() + ".", 0.5, context, f"e{i % 4}", MemoryKind.EPISODE, at, at,
                        None, 0)
        records.append(MemoryRecord(memory, np.full(4, i, dtype=np.float32), {}))
    by_conversation: dict[str, list[str]] = {}
    for r in records:
        if r.memory.context:
            by_conversation.setdefault(r.memory.context["conversation"], []).append(r.memory.id)
    for ids in by_conversation.values():
        edges += [Edge(a, b, EdgeType.FOLLOWED_BY, 1.0, {}) for a, b in zip(ids, ids[1:], strict=False)]
    return records, edges


@pytest.fixture
def both(tmp_path: Path, database_url: str) -> Iterator[tuple[Storage, Storage]]:
    sqlite, postgres = RecordStore(tmp_path / "records.sqlite3"), PostgresStore(database_url)
    yield sqlite, postgres
    sqlite.close()
    postgres.close()


def _ranking(found: list[tuple[str, float]]) -> list[str]:
    """Ids by score, ties by id: scores that differ only in the last bits (another summation order) are ties."""
    return [i for i, s in sorted(found, key=lambda p: (-round(p[1], 9), p[0]))]


def _same_lexical(sqlite: Storage, postgres: Storage, rng: random.Random) -> None:
    k1, b = config.LEXICAL_BM25_K1, config.LEXICAL_BM25_B
    for table in ("memory_text", "window_text"):
        assert postgres.lexical_totals(table)[0] == sqlite.lexical_totals(table)[0]
        assert postgres.lexical_totals(table)[1] == pytest.approx(sqlite.lexical_totals(table)[1], rel=1e-12)
        for _ in range(12):
            words = [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
            want = sqlite.lexical_search(table, words, 1000)
            assert want, words
            for got in (postgres.lexical_search(table, words, 1000),
                        LexicalPostings(postgres).search(table, words, 1000, k1, b)):
                assert _ranking(got) == _ranking(want), (table, words)
                assert dict(got) == pytest.approx(dict(want), rel=1e-9)


def test_bm25_scores_and_windows_equal_the_sqlite_store_through_writes_revises_and_forgets(
    both: tuple[Storage, Storage],
) -> None:
    sqlite, postgres = both
    rng = random.Random(7)
    records, edges = _records(120, seed=3)
    for store in both:
        store.insert(records[:80], [e for e in edges if e.source < "M00080" and e.target < "M00080"])
        store.insert(records[80:], [e for e in edges if not (e.source < "M00080" and e.target < "M00080")])
    _same_lexical(sqlite, postgres, rng)
    # A revise changes one memory's text and every window around it; a forget drops rows and reshapes windows.
    target = records[17]
    changed = Memory(target.memory.id, "Sofia approved the orbit budget twice, budget budget.", 0.5,
                     target.memory.context, "e1", MemoryKind.EPISODE, target.memory.created_at,
                     target.memory.created_at + timedelta(hours=1), None, 0)
    old = Memory("R00017", target.memory.content, 0.5, {}, "e1", MemoryKind.REVISION, target.memory.created_at,
                 target.memory.created_at, None, 0)
    for store in both:
        store.revise(MemoryRecord(changed, target.embedding, {}), MemoryRecord(old, target.embedding, {}),
                     Edge(changed.id, old.id, EdgeType.REVISED_FROM, 1.0, {}))
        assert store.delete(["M00030", "M00031", "M00090", "NOPE"]) == ["M00030", "M00031", "M00090"]
    _same_lexical(sqlite, postgres, rng)
    texts = {m.id: m.content for m in sqlite.get_many([r.memory.id for r in records]).values()}
    assert postgres.lexical_marks('"budget"', texts) == sqlite.lexical_marks('"budget"', texts)
    assert postgres.count() == sqlite.count() == 118


def _ranked(engine: MemoryEngine, cue: str) -> list[str]:
    return [r.memory.content for r in engine.recall(cue=cue, top_k=10)]


@pytest.mark.slow
def test_the_same_documents_and_chats_give_the_same_ranked_recall_on_both_stores(
    tmp_path: Path, database_url: str, embedder: Embedder
) -> None:
    """LoCoMo-style parity: one set of documents and conversations ingested into each store, 50 questions
    (cues made of the content words of stored memories), the same ranked memories for each."""
    files = sorted(SAMPLE.glob("incidents/*"))[:6]
    engines = [MemoryEngine(tmp_path / "sqlite", embedder=embedder, clock=ManualClock(START)),
               MemoryEngine(database=database_url, data_dir=tmp_path / "pg", embedder=embedder,
                            clock=ManualClock(START))]
    try:
        for engine in engines:
            engine.ingest(files)
        contents = sorted(m.content for m in engines[0].list_memories(limit=1000, include_revisions=False))
        assert contents == sorted(m.content for m in engines[1].list_memories(limit=1000, include_revisions=False))
        rng = random.Random(11)
        cues = [" ".join(rng.sample(words, min(3, len(words)))) for words in
                (terms(c) for c in rng.sample(contents, 50)) if words][:50]
        assert len(cues) >= 45
        for cue in cues:
            assert _ranked(engines[1], cue) == _ranked(engines[0], cue), cue
    finally:
        for engine in engines:
            engine.close()


def test_access_counts_stay_exact_when_engines_on_one_database_recall_at_once(
    database_url: str, embedder: Embedder
) -> None:
    engines = [MemoryEngine(database=database_url, embedder=embedder) for _ in range(2)]
    try:
        stored = engines[0].remember(content="The webhook storm took the payments ledger down.")
        rounds, threads = 15, 2
        errors: list[BaseException] = []

        def recall(engine: MemoryEngine) -> None:
            try:
                for _ in range(rounds):
                    hits = engine.recall(cue="webhook storm payments", top_k=1, strategies=["lexical"])
                    assert [h.memory.id for h in hits] == [stored.id]
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)

        workers = [threading.Thread(target=recall, args=(e,)) for e in engines for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert not errors, errors
        assert engines[1].get(stored.id).access_count == rounds * threads * len(engines)
    finally:
        for engine in engines:
            engine.close()


def test_a_bad_database_url_is_one_clear_error() -> None:
    from engine.errors import StoreError

    with pytest.raises(StoreError, match="not a PostgreSQL URL"):
        MemoryEngine(database="mysql://x")
    with pytest.raises(StoreError, match=r"cannot connect to the database postgresql://u:\*\*\*@127.0.0.1:1/x"):
        MemoryEngine(database="postgresql://u:secret@127.0.0.1:1/x")




def _visible_within(engine: MemoryEngine, cue: str, want: str | None, seconds: float) -> float:
    """Seconds until the top similarity hit of `cue` on `engine` has content `want` (None: until `want`
    memories are gone, i.e. no hit with the old content); fails after `seconds`."""
    started = time.monotonic()
    while True:
        hits = engine.recall(cue=cue, top_k=1, strategies=["similarity"])
        top = hits[0].memory.content if hits else None
        if top == want:
            return time.monotonic() - started
        assert time.monotonic() - started < seconds, (cue, top, want)
        time.sleep(0.02)


def test_a_write_on_one_replica_is_recalled_on_the_other_within_a_second(database_url: str, embedder: Embedder
                                                                        ) -> None:
    """Two engines on one database, each with its own vector index: remember, revise and forget on A are
    seen by similarity recall on B (through B's change-log follower) within 1 s each."""
    a = MemoryEngine(database=database_url, embedder=embedder)
    b = MemoryEngine(database=database_url, embedder=embedder)
    try:
        b.warm()  # B's indexes are built before A writes: only the change feed can tell it
        stored = a.remember(content="The orbit API launch slipped to Thursday.")
        assert _visible_within(b, "orbit api launch", stored.content, 1.0) < 1.0
        revised = a.revise(stored.id, content="The thermostat recall campaign starts in May.")
        assert _visible_within(b, "thermostat recall campaign", revised.content, 1.0) < 1.0
        a.forget(memory_ids=[stored.id])
        assert _visible_within(b, "thermostat recall campaign", None, 1.0) < 1.0
    finally:
        a.close()
        b.close()


def test_while_the_database_is_away_requests_fail_clearly_and_the_engine_reconnects_by_itself(
    embedder: Embedder,
) -> None:
    """PostgreSQL restarted under an open engine: a StoreError naming the outage (servers answer it with 503,
    interfaces/errors.py) while it is away, then the same engine works again with nothing acknowledged lost."""
    from engine.errors import StoreError
    from engine.store.postgres.local_server import LocalServer

    server = LocalServer().start()
    try:
        with MemoryEngine(database=server.url, embedder=embedder) as engine:
            kept = engine.remember(content="Acknowledged before the restart.")
            server.stop("immediate")  # as a crash: no clean shutdown
            with pytest.raises(StoreError, match="the database is unavailable"):
                engine.remember(content="Refused while the database is away.")
            with pytest.raises(StoreError, match="the database is unavailable"):
                engine.recall(cue="restart", top_k=3)
            server.start()
            deadline = time.monotonic() + 30
            while True:
                try:
                    engine.remember(content="Stored after the restart.")
                    break
                except StoreError:
                    assert time.monotonic() < deadline, "the engine did not reconnect"
                    time.sleep(0.2)
            contents = {m.content for m in engine.list_memories(limit=10)}
            assert contents == {kept.content, "Stored after the restart."}
    finally:
        server.remove()
