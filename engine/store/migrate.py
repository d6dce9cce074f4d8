"""Copy one record store into another (`hebbs migrate --to postgresql://...`): memories (revisions included)
with their embeddings, structures, access counts and ledger rows, the edges, the entity registry, then the
replies kept under idempotency keys, pending reviews, reflect sessions and tombstones; verified by the row
count of every table (`rows.COUNTED_TABLES`). The API keys are the server's (interfaces/cli/migrate.py).

Resumable: memories go over in batches, each in one transaction of the target with the edges whose two ends
are then both there (so each lexical window is written once per batch, not once more for all edges at the
end); a memory the target holds already is skipped, so a run interrupted anywhere is finished by running it
again. Edges still missing after the batches, entities and the other tables are upserts or skip rows already
copied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.errors import StoreError
from engine.models import Edge
from engine.store.interface import Storage
from engine.store.rows import COPIED_TABLES, AlsoWrite

BATCH = 500


@dataclass(frozen=True, slots=True)
class Copied:
    memories: int  # copied by this run (the rest were there already)
    skipped: int
    edges: int
    entities: int
    rows: dict[str, int]  # the source's rows of every counted table, equal in the target


def _key(edge: Edge) -> tuple[str, str, str]:
    return edge.source, edge.target, edge.type.value


def migrate(source: Storage, target: Storage, progress: Callable[[int], None] | None = None) -> Copied:
    """Copy `source` into `target` and check that the target holds as many rows of every table."""
    edges = source.edges()
    by_end: dict[str, list[Edge]] = {}
    for edge in edges:
        by_end.setdefault(edge.source, []).append(edge)
        by_end.setdefault(edge.target, []).append(edge)
    there: set[str] = set()  # memories the target holds, so far
    copied = skipped = 0
    for batch in source.all_embeddings(BATCH):
        ids = [i for i, _ in batch]
        held = target.existing(ids)
        there |= held
        skipped += len(held)
        records = [r for r in (source.get_record(i) for i in ids if i not in held) if r is not None]
        if records:
            new = {r.memory.id for r in records}
            there |= new
            joined = {_key(e): e for i in new for e in by_end.get(i, ()) if e.source in there and e.target in there}
            target.insert(records, list(joined.values()), also=AlsoWrite(ledger=source.ledger_rows(list(new))))
            copied += len(records)
        if progress is not None:
            progress(copied + skipped)
    stored = {_key(e) for e in target.edges()}
    target.add_edges([e for e in edges if _key(e) not in stored])  # an edge a resumed run has not seen yet
    entities = source.entity_records()
    target.save_entities([(e, tuple(sorted(e.aliases))) for e in entities])
    for table in COPIED_TABLES:
        target.add_table_rows(table, source.table_rows(table))
    before, after = source.row_counts(), target.row_counts()
    wrong = [f"{t}: {n} in the source, {after.get(t)} in the target" for t, n in before.items() if after.get(t) != n]
    if wrong:
        raise StoreError("the migration does not add up (" + "; ".join(wrong) + "): run it again into an empty "
                         "database")
    return Copied(copied, skipped, len(edges), len(entities), before)
