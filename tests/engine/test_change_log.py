"""The store's change log, and recall's in-memory structures caught up from it equal to ones rebuilt whole.

The candidate table and the BM25 posting lists are built once and then follow the store through its change
log (`Storage.changes_since`), for this engine's writes and for another process's alike. Property tests draw
random interleavings of remember / revise / forget / add_edges (with recalls in between, so lists are held
and patched at every stage) and compare what is held with a rebuild from the store.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import MemoryEngine, config
from engine.index.candidates import CandidateTable
from engine.index.postings import LexicalPostings
from engine.store.sqlite import fulltext

WORDS = ["webhook", "invoice", "contract", "launch", "pricing", "legal", "retry", "export", "partner", "night"]
CUES = ["webhook invoice", "contract pricing legal", "launch night", "retry export partner", "zzz"]
ROOT = Path(__file__).resolve().parents[2]


def _text(words: list[int]) -> str:
    return " ".join(WORDS[w % len(WORDS)] for w in words) or "empty note"


def test_the_log_names_each_changed_memory_once_in_commit_order(engine_on_each_store: MemoryEngine) -> None:
    engine = engine_on_each_store
    store = engine._store  # noqa: SLF001 - the store's log is what is under test
    start = store.change_seq()
    a = engine.remember("the webhook broke", context={"conversation": "c", "session": 1})
    b = engine.remember("the invoice export failed", context={"conversation": "c", "session": 1})
    seq, changed = store.changes_since(start)  # type: ignore[misc]
    assert changed == [a.id, b.id] and seq == store.change_seq() > start
    engine.recall("webhook")  # counting accesses changes nothing recall holds: not logged
    assert store.changes_since(seq) == (seq, [])
    engine.add_edge(a.id, b.id, "followed_by")  # both ends (and their windows)
    seq2, changed = store.changes_since(seq)  # type: ignore[misc]
    assert sorted(changed) == sorted([a.id, b.id])
    engine.revise(a.id, content="the webhook broke twice")  # the memory, its revision, b's window
    seq3, changed = store.changes_since(seq2)  # type: ignore[misc]
    assert a.id in changed and b.id in changed and len(changed) == 3
    engine.forget(memory_ids=[b.id])
    seq4, changed = store.changes_since(seq3)  # type: ignore[misc]
    assert b.id in changed and a.id in changed  # b went; a's window lost b
    assert store.changes_since(0)[1][-len(changed):] == changed  # type: ignore[index]
    assert seq4 > seq3 > seq2 > seq


def _assert_equal_to_rebuild(engine: MemoryEngine) -> None:
    """The engine's caught-up table and lists hold what a rebuild from the store holds."""
    store = engine._store  # noqa: SLF001
    indexes = engine._indexes  # noqa: SLF001
    table = indexes.candidates()
    rebuilt = CandidateTable(*store.candidate_rows())
    every = sorted(rebuilt.slot)
    assert sorted(table.slot) == every
    mine, theirs = table.rows(every, True), rebuilt.rows(every, True)
    for i in every:
        assert (mine[i].episode, mine[i].entity_id) == (theirs[i].episode, theirs[i].entity_id)
        assert np.array_equal(mine[i].embedding, theirs[i].embedding)  # type: ignore[arg-type]
    assert {k: set(v) for k, v in table.followed_by(every).items()} == rebuilt.followed_by(every)
    # The same by row number, as fused recall reads them (engine/recall/fusion.py `_gather_rows`).
    rows = table.rows_of(every)
    assert (rows >= 0).all() and [k.decode() for k in table.keys_at(rows).tolist()] == every
    assert [table.episode_key(c) for c in table.episode_codes_at(rows).tolist()] == [mine[i].episode for i in every]
    source, linked = table.link_rows(every, rows)
    named = dict(zip(rows.tolist(), every, strict=True))
    by_rows: dict[str, set[str]] = {}
    for n, row in zip(source.tolist(), linked.tolist(), strict=True):
        by_rows.setdefault(every[n], set()).add(named[row])
    assert by_rows == {i: linked_ for i, linked_ in rebuilt.followed_by(every).items() if linked_}
    postings = indexes.lexical_postings()
    assert postings is not None
    fresh = LexicalPostings(store)
    for table_name in fulltext.TABLES:
        for cue in CUES:
            words = cue.split()
            for k1, b in ((config.LEXICAL_BM25_K1, config.LEXICAL_BM25_B), (1.2, 0.0)):
                got, want = postings.search(table_name, words, 50, k1, b), fresh.search(table_name, words, 50, k1, b)
                assert [i for i, _ in got] == [i for i, _ in want], (table_name, cue)
                assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-12, atol=0)


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("remember"), st.lists(st.integers(0, 9), max_size=6), st.integers(0, 2)),
        st.tuples(st.just("revise"), st.lists(st.integers(0, 9), max_size=6), st.integers(0, 10_000)),
        st.tuples(st.just("forget"), st.integers(0, 10_000)),
        st.tuples(st.just("link"), st.integers(0, 10_000), st.integers(0, 10_000)),
        st.tuples(st.just("recall"), st.integers(0, len(CUES) - 1)),
    ),
    min_size=1,
    max_size=12,
)


def _apply(engine: MemoryEngine, ops: list[tuple]) -> None:  # type: ignore[type-arg]
    for op in ops:
        live = [m.id for m in engine.list_memories(include_revisions=False, limit=10_000)]
        if op[0] == "remember":
            engine.remember(_text(op[1]), entity_id=f"e{op[2]}", context={"conversation": "c", "session": op[2]})
        elif op[0] == "recall":
            engine.recall(CUES[op[1]], top_k=5)
        elif not live:
            continue
        elif op[0] == "revise":
            engine.revise(live[op[2] % len(live)], content=_text(op[1]) + " revised")
        elif op[0] == "forget":
            engine.forget(memory_ids=[live[op[1] % len(live)]])
        elif op[0] == "link" and live[op[1] % len(live)] != live[op[2] % len(live)]:
            engine.add_edge(live[op[1] % len(live)], live[op[2] % len(live)], "followed_by")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_own_writes_keep_the_structures_equal_to_a_rebuild(engine: MemoryEngine, ops: list[tuple]) -> None:  # type: ignore[type-arg]
    engine.recall("webhook", top_k=5)  # built (and lists held) before the writes
    _apply(engine, ops)
    _assert_equal_to_rebuild(engine)


_OTHER_PROCESS = textwrap.dedent(
    """
    import json, sys
    from datetime import UTC, datetime
    import numpy as np
    from engine.models import Edge, EdgeType, Memory, MemoryKind
    from engine.store.records import RecordStore
    from engine.store.rows import MemoryRecord

    store = RecordStore(__import__("pathlib").Path(sys.argv[1]))
    ops = json.loads(sys.argv[2])
    rng = np.random.default_rng(len(ops))
    now = datetime(2026, 3, 2, tzinfo=UTC)
    live = [r[0] for r in store.read("SELECT id FROM memories WHERE kind != 'revision' ORDER BY id")]
    for n, (kind, text, pick) in enumerate(ops):
        if kind == "insert" or not live:
            vector = rng.standard_normal(384).astype(np.float32)
            memory = Memory(id=f"OTHER{sys.argv[3]}X{n:03d}", content=text, importance=0.5,
                            context={"conversation": "c", "session": 1}, entity_id="e1",
                            kind=MemoryKind.EPISODE, created_at=now, updated_at=now,
                            last_accessed_at=None, access_count=0)
            store.insert([MemoryRecord(memory, vector / np.linalg.norm(vector), {})], [])
            live.append(memory.id)
        elif kind == "delete":
            store.delete([live.pop(pick % len(live))])
        else:
            a, b = live[pick % len(live)], live[(pick + 1) % len(live)]
            if a != b:
                store.add_edges([Edge(a, b, EdgeType.FOLLOWED_BY, 1.0, {})])
    store.close()
    """
)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ours=OPS,
    theirs=st.lists(
        st.tuples(st.sampled_from(["insert", "delete", "link"]), st.lists(st.integers(0, 9), max_size=5),
                  st.integers(0, 10_000)),
        min_size=1, max_size=8,
    ),
)
def test_another_processs_writes_are_caught_up_to_equal_a_rebuild(
    engine: MemoryEngine, data_dir: Path, ours: list[tuple], theirs: list[tuple]  # type: ignore[type-arg]
) -> None:
    engine.recall("webhook invoice", top_k=5)
    _apply(engine, ours)
    ops = [(kind, _text(words), pick) for kind, words, pick in theirs]
    run = engine._store.change_seq()  # noqa: SLF001 - distinct ids per example
    subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS, str(data_dir / config.RECORDS_FILENAME), json.dumps(ops), str(run)],
        check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120,
    )
    _assert_equal_to_rebuild(engine)
