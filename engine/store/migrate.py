"""Copy one record store into another (`hebbs migrate --to postgresql://...`): memories with their
embeddings, structures and ledger rows, then edges and the entity registry; verified by counts.

Resumable: memories go over in batches, each in one transaction of the target, and a memory the target holds
already is skipped, so a run interrupted anywhere is finished by running it again (edges and entities are
upserts). Replies under idempotency keys, reviews waiting for an agent and tombstones are not copied.
The CLI (interfaces/cli/migrate.py) then asks both stores the same cues.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.errors import StoreError
from engine.store.interface import Storage
from engine.store.rows import AlsoWrite

BATCH = 500


@dataclass(frozen=True, slots=True)
class Copied:
    memories: int  # copied by this run (the rest were there already)
    skipped: int
    edges: int
    entities: int


def migrate(source: Storage, target: Storage, progress: Callable[[int], None] | None = None) -> Copied:
    """Copy `source` into `target` and check that the target holds as many memories, edges and entities."""
    copied = skipped = 0
    for batch in source.all_embeddings(BATCH):
        ids = [i for i, _ in batch]
        there = target.existing(ids)
        missing = [i for i in ids if i not in there]
        skipped += len(there)
        records = [r for r in (source.get_record(i) for i in missing) if r is not None]
        if records:
            target.insert(records, [], also=AlsoWrite(ledger=source.ledger_rows(missing)))
            copied += len(records)
        if progress is not None:
            progress(copied + skipped)
    edges = source.edges()
    target.add_edges(edges)
    entities = source.entity_records()
    target.save_entities([(e, tuple(sorted(e.aliases))) for e in entities])
    counts = [(what, a, b) for what, a, b in (
        ("memories", source.count(), target.count()), ("edges", source.count_edges(), target.count_edges()),
        ("entities", source.count_registered_entities(), target.count_registered_entities()))]
    wrong = [f"{what}: {a} in the source, {b} in the target" for what, a, b in counts if a != b]
    if wrong:
        raise StoreError("the migration does not add up (" + "; ".join(wrong) + "): run it again into an empty "
                         "database")
    return Copied(copied, skipped, len(edges), len(entities))

