"""The bulk write path keeps the lexical index exactly as a rebuild from the memories would make it.

`remember_many` writes new memories' text rows straight from their contents and `add_edges` refreshes each
affected context window once per transaction (see `engine.store.sqlite.fulltext.index_new` and `Links`). Here a
store is written through those paths (new memories with `followed_by` edges to stored ones, chains added
later across episodes, a revision, a forget), then its text index is compared row by row with the one
`fulltext.rebuild` (the general, per-memory path) makes from the same memories.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from engine import MemoryEngine, config
from engine.embedding import Embedder
from engine.store.records import RecordStore
from engine.store.sqlite import fulltext

TEXT_ROWS = (
    "SELECT f.id, t.body FROM {table} t JOIN fulltext_rows f ON f.rowid = t.rowid ORDER BY f.id"
)


def _text_rows(store: RecordStore) -> dict[str, list[tuple[str, str]]]:
    return {table: [tuple(r) for r in store.read(TEXT_ROWS.format(table=table))] for table in fulltext.TABLES}


def _write(engine: MemoryEngine) -> None:
    first = engine.remember_many(
        [{"content": f"turn {i} of the launch call about fuel valve {i % 3}", "context": {"session": "s1"}}
         for i in range(6)]
    )
    # New memories linked to stored ones in the same batch (edges written with the memories), one of them in
    # another episode (its window must not take the others' text), others not linked at all.
    second = engine.remember_many(
        [
            {"content": "turn 6 follows on the valve", "context": {"session": "s1"},
             "edges": [{"target": first[5].id, "type": "followed_by"}]},
            {"content": "a note from another session", "context": {"session": "s2"},
             "edges": [{"target": first[2].id, "type": "followed_by"}]},
            {"content": "an unlinked memo about payroll"},
            {"content": "a caused memo", "edges": [{"target": first[0].id, "type": "caused_by"}]},
        ]
    )
    chain = first + second[:1]
    engine.add_edges([(a.id, b.id, "followed_by") for a, b in zip(chain, chain[1:], strict=False)])
    more = engine.remember_many([{"content": f"later remark {i} on the review", "context": {"session": "s3"}}
                                 for i in range(5)])
    engine.add_edges([(a.id, b.id, "followed_by") for a, b in zip(more, more[1:], strict=False)]
                     + [(second[2].id, more[0].id, "followed_by")])
    engine.revise(first[3].id, content="turn 3, corrected: the valve held")
    engine.forget([more[2].id])


def test_bulk_written_text_index_equals_a_rebuild(tmp_path: Path, embedder: Embedder) -> None:
    engine = MemoryEngine(tmp_path / "data", embedder=embedder)
    _write(engine)
    engine.close()
    store_path = engine.data_dir / config.RECORDS_FILENAME
    written_store = RecordStore(store_path)
    written = _text_rows(written_store)
    written_store.close()
    assert len(written["window_text"]) == 14  # 6 + 4 + 5 memories, one forgotten; the revision has no rows
    windows = dict(written["window_text"])
    assert any("\n" in body for body in windows.values())  # some windows do hold neighbours

    copy = tmp_path / "copy.db"
    shutil.copy(store_path, copy)
    rebuilt_store = RecordStore(copy)
    with rebuilt_store.transaction() as cur:
        fulltext.rebuild(cur)
    assert _text_rows(rebuilt_store) == written
    rebuilt_store.close()
