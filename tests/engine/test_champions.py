"""Bounded BM25 over champion lists (engine/index/champions.py): with lists cut short on purpose, every answer
it certifies equals scoring every posting (on a store full of exact ties, with changes held beside the
segment: new, revised and forgotten memories), and an answer over budget is marked, with true scores."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

from engine import MemoryEngine, config
from engine.index import champions, postings
from engine.index.postings import LexicalPostings
from engine.store.lexical import TABLES

K1 = config.LEXICAL_BM25_K1
VOCABULARY = ["webhook", "retry", "invoice", "export", "pricing", "launch", "legal", "night", "partner", "audit"]


@pytest.fixture(autouse=True)
def _bounded_at_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """These stores are small: every search would score every posting (`LEXICAL_EXHAUSTIVE_MAX`)."""
    monkeypatch.setattr(config, "LEXICAL_EXHAUSTIVE_MAX", 0)


def _texts(rng: random.Random, count: int) -> list[dict[str, str]]:
    """Short texts from a small vocabulary, a word often repeated: most rows tie exactly with many others."""
    return [{"content": " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(1, 5)))} for _ in range(count)]


def _every_posting(held: LexicalPostings, table: str, words: list[str], limit: int,
                   monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float]]:
    """The same search with champion lists longer than any list: every posting is read."""
    with monkeypatch.context() as m:
        m.setattr(config, "LEXICAL_CHAMPIONS", 10**9)
        return held.search(table, words, limit, K1, 0.0)


def _held(engine: MemoryEngine) -> LexicalPostings:
    held = engine._indexes.lexical_postings()  # noqa: SLF001 - the search under test
    assert held is not None
    held.catch_up()
    return held


def test_certified_answers_equal_scoring_every_posting(engine: MemoryEngine,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "LEXICAL_CHAMPIONS", 2)  # every list of this small store is cut short
    monkeypatch.setattr(config, "LEXICAL_SEARCH_BUDGET", 400)  # ... widened, and sometimes over budget
    monkeypatch.setattr(postings, "MERGE_MIN", 10_000)  # the changes below stay held beside the segment
    rng = random.Random(5)
    ids = [m.id for m in engine.remember_many(_texts(rng, 400))]
    held = _held(engine)
    store = engine._store  # noqa: SLF001
    verdicts: list[bool] = []
    marked: list[int] = []
    original = champions._certified  # noqa: SLF001

    def told(*args: object) -> bool:
        verdict = original(*args)  # type: ignore[arg-type]
        verdicts.append(verdict)
        return verdict

    monkeypatch.setattr(champions, "_certified", told)

    def check() -> None:
        for _ in range(30):
            words = rng.sample(VOCABULARY, rng.randint(1, 4))
            for table in TABLES:
                for limit in (1, 5, 30):
                    inexact = held.inexact
                    got = held.search(table, words, limit, K1, 0.0)
                    truth = _every_posting(held, table, words, limit, monkeypatch)
                    sql = store.lexical_search(table, words, limit)  # SQLite's own BM25: shares no code
                    assert [i for i, _ in truth] == [i for i, _ in sql]
                    assert np.allclose([s for _, s in truth], [s for _, s in sql], rtol=1e-9, atol=0)
                    if held.inexact == inexact:
                        assert got == truth, (table, words, limit)
                    else:  # over budget: true scores, best first, none better than the true limit-th
                        marked.append(1)
                        every = dict(store.lexical_search(table, words, 10**6))
                        assert all(np.isclose(every[i], score, rtol=1e-9, atol=0) for i, score in got)
                        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
                        assert len(got) == len(truth) and got[0][1] <= truth[0][1]

    check()
    engine.remember_many(_texts(rng, 60))
    for memory_id in rng.sample(ids, 30):
        engine.revise(memory_id, content=_texts(rng, 1)[0]["content"])
    held.catch_up()
    assert held._ids  # noqa: SLF001 - the changes are held, not merged
    check()
    for memory_id in rng.sample(ids, 20):  # an erasing forget merges them into a new segment
        engine.forget(memory_id)
    check()
    assert True in verdicts and False in verdicts  # certified with lists cut short, and widened when not
    assert marked and verdicts.count(True) > 10  # answers certified exact with cut lists, and some over budget


def test_a_rare_term_is_found_without_reading_the_common_lists(engine: MemoryEngine,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """One rare word repeated in a few rows, common words in every row: the first champions certify the answer
    and the candidates are a small share of the postings."""
    monkeypatch.setattr(config, "LEXICAL_CHAMPIONS", 8)
    monkeypatch.setattr(config, "LEXICAL_SEARCH_BUDGET", 40)  # the rare word's 12 rows are read whole
    texts = [f"common words here row {n}" + (" rare" * (n % 7) if n % 50 == 0 else "") for n in range(600)]
    engine.remember_many([{"content": t} for t in texts])
    held = _held(engine)
    read: list[int] = []
    original = champions._scores  # noqa: SLF001

    def counted(lists: object, rows: np.ndarray, k1: float, stale: np.ndarray) -> np.ndarray:
        read.append(len(rows))
        return original(lists, rows, k1, stale)  # type: ignore[arg-type]

    monkeypatch.setattr(champions, "_scores", counted)
    words = ["rare", "common", "words"]
    got = held.search("memory_text", words, 5, K1, 0.0)
    assert len(read) == 1 and read[0] <= 12 + 8 * 2  # one round: the rare rows and the champions only
    assert got == _every_posting(held, "memory_text", words, 5, monkeypatch)
    assert held.inexact == 0


def test_over_budget_the_answer_is_marked_and_its_scores_are_true(engine: MemoryEngine,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "LEXICAL_CHAMPIONS", 2)
    monkeypatch.setattr(config, "LEXICAL_SEARCH_BUDGET", 4)  # no widening: the first candidates answer
    rng = random.Random(9)
    engine.remember_many(_texts(rng, 300))
    held = _held(engine)
    words = ["webhook", "retry", "invoice"]
    got = held.search("window_text", words, 5, K1, 0.0)
    assert held.inexact == 1 and held.searches == 1
    truth = dict(_every_posting(held, "window_text", words, 10**6, monkeypatch))
    assert got and all(truth[i] == score for i, score in got)  # each a true BM25, just maybe not the best five
    assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)


def test_b_other_than_zero_scores_every_posting(engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Champion lists rank by occurrences alone, BM25's impact order only with b = 0: otherwise every posting is
    scored, and the answer is SQLite's own BM25 with that b."""
    monkeypatch.setattr(config, "LEXICAL_CHAMPIONS", 2)
    monkeypatch.setattr(config, "LEXICAL_BM25_B", 0.75)
    engine.remember_many(_texts(random.Random(3), 200))
    held = _held(engine)
    words = ["audit", "night", "retry"]
    got = held.search("memory_text", words, 10, K1, 0.75)
    sql = engine._store.lexical_search("memory_text", words, 10)  # noqa: SLF001
    assert held.searches == 0 and len(got) == 10
    assert [i for i, _ in got] == [i for i, _ in sql]
    assert np.allclose([s for _, s in got], [s for _, s in sql], rtol=1e-9, atol=0)


def test_searches_run_beside_writes_and_each_other(engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scoring runs outside the postings' lock: concurrent searches while revisions are caught up (rows
    hidden in the stale array a search may be reading) raise nothing, and once the writes stop every search
    equals SQLite's own BM25 again."""
    monkeypatch.setattr(config, "LEXICAL_CHAMPIONS", 2)
    monkeypatch.setattr(postings, "MERGE_MIN", 10_000)
    rng = random.Random(11)
    ids = [m.id for m in engine.remember_many(_texts(rng, 300))]
    held = _held(engine)
    errors: list[BaseException] = []
    stop = threading.Event()

    def search() -> None:
        local = random.Random(threading.get_ident())
        while not stop.is_set():
            try:
                held.search(local.choice(TABLES), local.sample(VOCABULARY, 2), 10, K1, 0.0)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
                return

    threads = [threading.Thread(target=search) for _ in range(3)]
    for t in threads:
        t.start()
    for memory_id in rng.sample(ids, 40):
        engine.revise(memory_id, content=_texts(rng, 1)[0]["content"])
        held.catch_up()
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    store = engine._store  # noqa: SLF001
    for words in (["webhook", "night"], ["audit"], ["invoice", "export", "legal"]):
        for table in TABLES:
            got = held.search(table, words, 10, K1, 0.0)
            sql = store.lexical_search(table, words, 10)
            assert [i for i, _ in got] == [i for i, _ in sql]


def test_a_search_over_few_postings_scores_them_all(engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "LEXICAL_CHAMPIONS", 2)
    monkeypatch.setattr(config, "LEXICAL_EXHAUSTIVE_MAX", 10**6)
    engine.remember_many(_texts(random.Random(4), 200))
    held = _held(engine)
    words = ["audit", "night", "retry"]
    got = held.search("window_text", words, 10, K1, 0.0)
    assert held.searches == 0  # no champion lists
    assert [i for i, _ in got] == [i for i, _ in engine._store.lexical_search("window_text", words, 10)]  # noqa: SLF001
