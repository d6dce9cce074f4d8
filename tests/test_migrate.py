"""`hebbs migrate --to postgresql://...`: an embedded store copied into PostgreSQL whole (records, vectors,
edges, entities, ledger, access counts, revisions, replies, reviews, tombstones, API keys), verified, with
the same recall; an interrupted copy finished by running it again. Real stores: SQLite in a temp dir, the
session's PostgreSQL."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import MemoryEngine
from engine.embedding import Embedder
from engine.store import migrate as migration
from engine.store.ledger import Ledger
from engine.store.opening import open_storage
from engine.store.postgres import PostgresStore
from engine.store.rows import COPIED_TABLES, PendingPair
from interfaces.auth import KeyRing
from interfaces.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


class Interrupted(Exception):
    pass


def test_an_interrupted_migration_is_finished_by_running_it_again(
    tmp_path: Path, database_url: str, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    with MemoryEngine(data, embedder=embedder) as engine:
        engine.ingest(sorted(SAMPLE.glob("launches/*"))[:3])
        first = engine.remember(content="The Helix thermostat recall covers the March batch.", entity_id="helix")
        engine.recall(cue="thermostat recall", top_k=3)  # access counts must travel too
        engine.revise(first.id, content="The Helix thermostat recall covers the March and April batches.")
        engine.remember(content="A draft note about the Helix launch party.", entity_id="helix-party")
        assert engine.forget(entity_id="helix-party", access_count_below=1)  # leaves a tombstone
        engine.replies.put("retry-1", "remember", '{"id": "X"}')
        # Rows only the review flows write: a contradiction candidate and a reflect session.
        older, newer = sorted(m.id for m in engine.list_memories(limit=2, include_revisions=False))
        store = engine._store  # noqa: SLF001
        store.propose_contradictions([PendingPair("P1", older, newer, "revision", "values", 0.9, 0.8, "moved", 1)])
        store.open_reflect_session("S1", [[older, newer]], time.time() + 3600)
        copied_tables = {t: sorted(store.table_rows(t)) for t in COPIED_TABLES}
        total = engine.stats()["memories"]
        documents = Ledger(engine._store).documents()  # noqa: SLF001 - the ledger is what is compared
        revisions = engine.revisions_of(first.id)
    keys = KeyRing(data)
    kept, kept_key = keys.create("agent")
    revoked, revoked_key = keys.create("old")
    keys.revoke(revoked.id)

    monkeypatch.setattr(migration, "BATCH", 7)
    batches = 0

    def stop_after_two(_: int) -> None:
        nonlocal batches
        batches += 1
        if batches == 2:
            raise Interrupted

    owner, source, _ = open_storage(data, None)
    target = PostgresStore(database_url)
    with pytest.raises(Interrupted):
        migration.migrate(source, target, stop_after_two)
    assert 0 < target.count() < total
    target.close()
    source.close()
    owner.release()

    result = CliRunner().invoke(main, ["--data-dir", str(data), "migrate", "--to", database_url, "--sample", "15",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["memories_already_there"] == 14 and report["memories_copied"] == total - 14
    assert report["recall_parity"] == "15/15"
    assert report["api_keys"] == 1 and all(report["rows"][t] > 0 for t in COPIED_TABLES)
    with MemoryEngine(data, embedder=embedder) as before, MemoryEngine(database=database_url,
                                                                      embedder=embedder) as after:
        assert after.stats() == before.stats()
        # Marks of contradiction checks not run yet travel with their memories (the idle worker may have run some).
        assert after.pending_contradiction_checks() == before.pending_contradiction_checks()
        assert after.get(first.id) == before.get(first.id)
        assert after.revisions_of(first.id) == revisions and revisions
        assert Ledger(after._store).documents() == documents  # noqa: SLF001
        assert after.entities() == before.entities()
        assert {t: sorted(after._store.table_rows(t)) for t in COPIED_TABLES} == copied_tables  # noqa: SLF001
        assert after.replies.get("retry-1") == ("remember", '{"id": "X"}')
        shared = after.shared_keys
        assert shared is not None
        assert KeyRing(None, shared).verify(kept_key) and not KeyRing(None, shared).verify(revoked_key)
        assert [r.id for r in KeyRing(None, shared).records()] == [kept.id]

    # Run again: nothing more is copied, nothing is doubled.
    again = CliRunner().invoke(main, ["--data-dir", str(data), "migrate", "--to", database_url, "--sample", "0",
                                      "--format", "json"])
    assert again.exit_code == 0, again.output
    second = json.loads(again.stdout)
    assert second["memories_copied"] == 0 and second["rows"] == report["rows"]


def test_migrate_refuses_what_is_not_a_postgresql_url(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--data-dir", str(tmp_path / "d"), "migrate", "--to", "mysql://x"])
    assert result.exit_code == 2 and "--to must be a postgresql:// URL" in result.stderr
    assert not (tmp_path / "d").exists()


def test_every_tenant_is_migrated_into_its_own_schema(tmp_path: Path, database_url: str, embedder: Embedder) -> None:
    """A data dir with two tenants holding the same memory: each lands in its own schema, with its own ids, and
    the keys keep the tenant they are bound to."""
    data = tmp_path / "data"
    made = {}
    for tenant in ("default", "acme"):
        with MemoryEngine(data, embedder=embedder, tenant=tenant) as engine:
            made[tenant] = engine.remember("The Helix thermostat recall covers the March batch.",
                                           entity_id="helix").id
    _, acme_key = KeyRing(data).create("acme agent", tenant="acme")
    result = CliRunner().invoke(main, ["--data-dir", str(data), "migrate", "--to", database_url, "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["memories_copied"] == 2 and set(report["tenants"]) == {"default", "acme"}
    assert report["tenants"]["acme"]["recall_parity"] == "1/1" and report["api_keys"] == 1
    for tenant, own in made.items():
        with MemoryEngine(database=database_url, embedder=embedder, tenant=tenant) as after:
            assert [r.memory.id for r in after.recall("thermostat recall", strategies=["similarity"])] == [own]
    store = PostgresStore(database_url)
    try:
        record = KeyRing(None, store).find(acme_key)
        assert record is not None and record.tenant == "acme"
    finally:
        store.close()
