"""The PostgreSQL store's tokenizer (SQLite's FTS5 in memory) forgets what it tokenized: after a large batch
(a window rewrite of a whole store) its scratch index is empty again, so later small batches do not scan the
deleted entries of every earlier one (that made each remember on a 100,000-memory store take about 1 s)."""

from __future__ import annotations

from engine.store.postgres.tokens import Tokenizer


def test_a_large_batch_leaves_nothing_behind_in_the_scratch_index() -> None:
    tokenizer = Tokenizer()
    bodies = [f"the harbour crane number {i} was inspected on tuesday by the port authority" for i in range(20_000)]
    counts = tokenizer.terms(bodies)
    assert counts[7]["crane"] == 1 and sum(counts[7].values()) == 13
    blocks = tokenizer._conn.execute("SELECT count(*) FROM scratch_data").fetchone()[0]  # noqa: SLF001
    assert blocks <= 2, f"{blocks} blocks of deleted entries kept"  # FTS5's structure and averages rows only
    assert tokenizer.terms(["plain note"]) == [{"plain": 1, "note": 1}]
    assert tokenizer.stems(["inspected", "cranes"]) == ["inspect", "crane"]
