"""The candidate segment: the candidate table's columns as files in the data dir, reopened without a rebuild,
merged with the changes since (by this engine and by another process's engine), and rebuilt from the record
store when missing, damaged, another store's or ahead of the store."""

from __future__ import annotations

import json
import logging
import mmap
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import MemoryEngine, config
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.index import candidate_segment, derived
from engine.index.candidates import CandidateTable
from engine.store.rows import CandidateColumns
from tests.engine.test_change_log import _OTHER_PROCESS, OPS, _apply, _assert_equal_to_rebuild, _text

TOPICS = ["webhook retry", "invoice export", "contract pricing", "launch night", "partner legal"]
ROOT = Path(__file__).resolve().parents[2]
# What another process writes straight into the store (test_change_log's `_OTHER_PROCESS`).
STORE_OPS = st.lists(st.tuples(st.sampled_from(["insert", "delete", "link"]), st.lists(st.integers(0, 9), max_size=5),
                               st.integers(0, 10_000)), min_size=1, max_size=8)


def _fill(engine: MemoryEngine, count: int, start: int = 0) -> list[str]:
    """`count` memories in one batch, linked into windows (conversations of three turns), some without entity."""
    items = [{"content": f"{TOPICS[n % 5]} note {n} of {TOPICS[(n * 3) % 5]}",
              "entity_id": f"e{n % 3}" if n % 4 else None,
              "context": {"conversation": f"c{n // 3}", "session": 1}} for n in range(start, start + count)]
    ids = [m.id for m in engine.remember_many(items)]
    for n in range(1, len(ids)):
        if (start + n) % 3:
            engine.add_edge(ids[n - 1], ids[n], "followed_by")
    return ids


def _folder(data_dir: Path) -> Path:
    return data_dir / candidate_segment.DIRNAME


def _mapped(array: np.ndarray) -> bool:
    base: object = array
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    return base is not None


def _rebuilds(engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the engine's rebuilds of its table from the whole store from now on."""
    indexes = engine._indexes  # noqa: SLF001
    calls: list[int] = []
    original = indexes._rebuild_candidates  # noqa: SLF001

    def counted() -> CandidateTable:
        calls.append(1)
        return original()

    monkeypatch.setattr(indexes, "_rebuild_candidates", counted)
    return calls


def _same_as_a_rebuild(engine: MemoryEngine) -> None:
    """Rows, links and exact searches of the engine's table equal those of a table rebuilt from the store."""
    _assert_equal_to_rebuild(engine)
    table = engine._indexes.candidates()  # noqa: SLF001
    rebuilt = CandidateTable(*engine._store.candidate_rows())  # noqa: SLF001
    assert len(table) == len(rebuilt)
    for cue in np.random.default_rng(len(table)).standard_normal((3, table.segment.width or 384)).astype(np.float32):
        assert table.nearest(cue, 7) == rebuilt.nearest(cue, 7)
        assert table.nearest(cue, 10_000) == rebuilt.nearest(cue, 10_000)


@pytest.fixture
def small_merges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Segments merged after a few changes, so that a small store goes through many of them."""
    monkeypatch.setattr(derived, "CANDIDATE_MERGE_MIN", 3)
    monkeypatch.setattr(derived, "CANDIDATE_MERGE_AT", 7)


def test_a_reopened_store_maps_its_segment_instead_of_rebuilding_it(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        _fill(engine, 30)
        engine.recall("webhook")
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        rebuilds = _rebuilds(engine, monkeypatch)
        assert engine.recall("webhook invoice")
        table = engine._indexes.candidates()  # noqa: SLF001
        assert rebuilds == [] and len(table) == 30
        assert all(_mapped(b) for b in table.segment.blocks) and _mapped(table.segment.ids)
        _same_as_a_rebuild(engine)


def test_changes_a_reopen_reads_from_the_store_are_written_into_a_segment_for_the_next_process(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Changes held in memory when the writer closed (fewer than its merge threshold) are read from the store by
    the next process's first recall, which writes them into a segment: a third process reads none of them (each
    `hebbs recall` is a fresh process)."""
    monkeypatch.setattr(derived, "CANDIDATE_MERGE_MIN", 3)
    monkeypatch.setattr(derived, "CANDIDATE_MERGE_AT", 20)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        _fill(engine, 40)
        engine.recall("webhook")
        _fill(engine, 8, start=100)  # below the threshold of a 48-memory table (12): held, not merged
        engine.recall("webhook")
        assert engine._indexes.candidates().held >= 8  # noqa: SLF001
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        engine.recall("webhook invoice")
        table = engine._indexes.candidates()  # noqa: SLF001
        assert table.held == 0 and table.segment.seq == engine._store.change_seq()  # noqa: SLF001
        _same_as_a_rebuild(engine)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        read: list[int] = []
        rows = engine._store.fusion_rows  # noqa: SLF001

        def counted(ids: list[str], with_embeddings: bool) -> dict:
            read.append(len(ids))
            return rows(ids, with_embeddings)

        monkeypatch.setattr(engine._store, "fusion_rows", counted)  # noqa: SLF001
        engine.recall("webhook invoice")
        assert read == [] and engine._indexes.candidates().held == 0  # noqa: SLF001
        _same_as_a_rebuild(engine)


def test_changes_are_merged_into_new_segments_that_reopen_equal_to_a_rebuild(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch, small_merges: None
) -> None:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        ids = _fill(engine, 12)
        engine.recall("webhook")
        rebuilds = _rebuilds(engine, monkeypatch)
        seqs = {engine._indexes.candidates().segment.seq}  # noqa: SLF001
        for n in range(6):
            ids += _fill(engine, 5, start=100 + 5 * n)
            engine.revise(ids[n], content=f"revised note {n} about the launch night")
            seqs.add(engine._indexes.candidates().segment.seq)  # noqa: SLF001
            _same_as_a_rebuild(engine)
        assert rebuilds == [] and len(seqs) > 3  # merged many times, never rebuilt
        blocks = engine._indexes.candidates().segment.blocks  # noqa: SLF001
        assert len(blocks) <= 4  # small blocks are folded together
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        rebuilds = _rebuilds(engine, monkeypatch)
        _same_as_a_rebuild(engine)
        assert rebuilds == []
        files = {p.name for p in _folder(data_dir).iterdir()}
        description = json.loads((_folder(data_dir) / (_folder(data_dir) / "CURRENT").read_text()).read_text())
        named = {"CURRENT", "LOCK", (_folder(data_dir) / "CURRENT").read_text(),
                 *(b["file"] for b in description["blocks"]), *(f["file"] for f in description["files"].values())}
        assert files == named  # older segments' files are removed


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_own_writes_through_merges_and_a_reopen_equal_a_rebuild(
    data_dir: Path, embedder: Embedder, clock: ManualClock, small_merges: None, ops: list[tuple]
) -> None:
    data_dir = Path(tempfile.mkdtemp(dir=data_dir.parent))  # a fresh store per example
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        _fill(engine, 4)
        engine.recall("webhook", top_k=5)  # the table built (and saved) before the writes
        _apply(engine, ops)
        _same_as_a_rebuild(engine)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        _same_as_a_rebuild(engine)


_OTHER_ENGINE = textwrap.dedent(
    """
    import json, sys
    from engine import MemoryEngine, config
    from engine.index import derived
    from tests.engine.test_change_log import _apply

    derived.CANDIDATE_MERGE_MIN, derived.CANDIDATE_MERGE_AT = 3, 7
    with MemoryEngine(sys.argv[1]) as engine:
        engine.recall("webhook", top_k=5)
        _apply(engine, [tuple(op) for op in json.loads(sys.argv[2])])
    """
)


@pytest.mark.slow
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ours=OPS, theirs=OPS, direct=STORE_OPS)
def test_another_processs_writes_are_caught_up_and_its_segments_reopen_equal_to_a_rebuild(
    data_dir: Path, embedder: Embedder, clock: ManualClock, small_merges: None,
    ours: list[tuple], theirs: list[tuple], direct: list[tuple]
) -> None:
    """Another process writes the store while this engine is open (caught up from the change log, merged into
    segments here); then another process's engine opens the data dir, maps this one's segment, writes and
    merges its own; reopened here, its segment is mapped and equals a rebuild."""
    data_dir = Path(tempfile.mkdtemp(dir=data_dir.parent))  # a fresh store per example
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())}
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        _fill(engine, 6)
        engine.recall("webhook", top_k=5)
        _apply(engine, ours)
        ops = [(kind, _text(words), pick) for kind, words, pick in direct]
        subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(data_dir / config.RECORDS_FILENAME),
                        json.dumps(ops), "0"], check=True, cwd=ROOT, env=env, timeout=120)
        _same_as_a_rebuild(engine)
    subprocess.run([sys.executable, "-c", _OTHER_ENGINE, str(data_dir), json.dumps(theirs)],
                   check=True, cwd=ROOT, timeout=300, env=env)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        _same_as_a_rebuild(engine)


def _damage_a_block(folder: Path) -> None:
    block = next(p for p in folder.iterdir() if p.name.startswith("block-"))
    data = bytearray(block.read_bytes())
    data[-5] ^= 0xFF
    block.write_bytes(bytes(data))


def _damage_the_ids(folder: Path) -> None:
    ids = next(p for p in folder.iterdir() if p.name.startswith("ids-"))
    ids.write_bytes(ids.read_bytes()[:-3])


def _remove_it(folder: Path) -> None:
    shutil.rmtree(folder)


def _point_nowhere(folder: Path) -> None:
    (folder / "CURRENT").write_text("segment-missing.json")


@pytest.mark.parametrize("damage", [_damage_a_block, _damage_the_ids, _remove_it, _point_nowhere])
def test_a_missing_or_damaged_segment_is_rebuilt_from_the_store(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture, damage: object
) -> None:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        _fill(engine, 20)
        engine.recall("webhook")
    damage(_folder(data_dir))  # type: ignore[operator]
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine, caplog.at_level(logging.WARNING):
        rebuilds = _rebuilds(engine, monkeypatch)
        assert engine.recall("webhook invoice")
        assert rebuilds == [1]
        _same_as_a_rebuild(engine)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:  # the rebuilt segment was saved
        rebuilds = _rebuilds(engine, monkeypatch)
        _same_as_a_rebuild(engine)
        assert rebuilds == []


def test_another_stores_segment_or_one_ahead_of_the_store_is_not_used(
    tmp_path: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    for folder, count in ((mine, 10), (theirs, 25)):
        with MemoryEngine(folder, embedder=embedder, clock=clock) as engine:
            _fill(engine, count)
            engine.recall("webhook")
    shutil.rmtree(_folder(mine))
    shutil.copytree(_folder(theirs), _folder(mine))  # another store's segment, ahead of this store too
    with MemoryEngine(mine, embedder=embedder, clock=clock) as engine:
        rebuilds = _rebuilds(engine, monkeypatch)
        engine.recall("webhook")
        assert rebuilds == [1] and len(engine._indexes.candidates()) == 10  # noqa: SLF001
        _same_as_a_rebuild(engine)
    # This store's own segment, but ahead of it (the store restored from an older backup).
    description = _folder(mine) / (_folder(mine) / "CURRENT").read_text()
    spec = json.loads(description.read_text())
    spec["seq"] += 1000
    description.write_text(json.dumps(spec))
    with MemoryEngine(mine, embedder=embedder, clock=clock) as engine:
        rebuilds = _rebuilds(engine, monkeypatch)
        engine.recall("webhook")
        assert rebuilds == [1]
        _same_as_a_rebuild(engine)


def test_forgetting_leaves_no_embedding_of_the_forgotten_in_the_segment_files(
    data_dir: Path, embedder: Embedder, clock: ManualClock
) -> None:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        ids = _fill(engine, 15)
        engine.recall("webhook")
        gone = ids[4]
        vector = engine._store.embeddings([gone])[gone].tobytes()  # noqa: SLF001
        engine.revise(ids[5], content="a revised note")  # a retired row that is no forgotten memory
        engine.forget(memory_ids=[gone])
        files = list(_folder(data_dir).iterdir())
        assert not any(vector in p.read_bytes() for p in files)
        assert not any(gone.encode() in p.read_bytes() for p in files)
        _same_as_a_rebuild(engine)


def test_a_bulk_import_catches_up_once_at_the_end_and_recalls_meanwhile_see_every_write(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        _fill(engine, 10)
        engine.recall("webhook")
        postings = engine._indexes.lexical_postings()  # noqa: SLF001
        assert postings is not None
        follows: list[int] = []
        original = postings.catch_up
        monkeypatch.setattr(postings, "catch_up", lambda: follows.append(1) or original())
        with engine.bulk():
            added = _fill(engine, 12, start=50)
            assert follows == []  # no catch-up after each batch
            found = {r.memory.id for r in engine.recall("note 53", top_k=50)}
            assert added[3] in found  # a recall meanwhile catches up first
            _same_as_a_rebuild(engine)
            more = _fill(engine, 6, start=80)
        assert follows == [1]  # once, at the end
        assert more[0] in {r.memory.id for r in engine.recall("note 80", top_k=50)}
        _same_as_a_rebuild(engine)


def test_find_answers_each_ids_row_as_a_dict_would() -> None:
    """`CandidateSegment.find` (ids as one fixed-width bytes array, binary-searched when few, else hashed): every
    stored id's row; -1 for an id not stored, one that only shares a stored id's prefix, one longer than any stored
    id but starting with one (truncated to the width, then told apart), and one with characters beyond ASCII; the
    same rows asked one at a time and in a batch large enough to be hashed."""
    ids = ["01A", "01B", "zeta", "01AB", "é-memory", "x" * 9]
    vectors = np.eye(len(ids), 4, dtype=np.float32)
    table = CandidateTable(1, CandidateColumns(ids, ["[]"] * len(ids), [None] * len(ids), vectors), [])
    segment = table.segment
    asked = [*ids, "01", "01C", "zeta!", "x" * 12, "é", "", "01AB"]
    row = {memory_id: n for n, memory_id in enumerate(ids)}
    expected = [row.get(i, -1) for i in asked]
    assert len(asked) <= candidate_segment.FEW_IDS < len(asked) * 3  # both ways: the binary search and the hash
    assert segment.find(asked).tolist() == expected
    assert segment.find(asked * 3).tolist() == expected * 3
    assert [segment.find([i]).tolist()[0] for i in asked] == expected
    assert segment.find([]).tolist() == []


@pytest.mark.parametrize("k", [1, 3, 5, 8])
def test_a_tie_at_the_exact_search_s_cut_is_settled_by_id(k: int) -> None:
    """Rows as near as the k-th nearest are tied: the ones kept are those first by id, whatever the row order
    (a table caught up from another process holds its rows in another order than a rebuild)."""
    rng = np.random.default_rng(k)
    same = rng.standard_normal(8).astype(np.float32)
    vectors = np.stack([same] * 6 + [-same] * 4)  # six equally near rows, then four far ones
    ids = [f"M{n:02d}" for n in range(10)]
    cue = same / np.linalg.norm(same)
    answers = []
    for order in (list(range(10)), list(range(9, -1, -1)), rng.permutation(10).tolist()):
        table = CandidateTable((1, 1), CandidateColumns([ids[n] for n in order], ["[]"] * 10, [None] * 10,
                                                        vectors[order]), [])
        answers.append([n.id for n in table.nearest(cue, k)])
    assert answers[0] == answers[1] == answers[2] == ids[:k]  # (the far rows by id too, past six)
