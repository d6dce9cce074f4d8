"""`hebbs migrate --to postgresql://...`: an embedded store copied into PostgreSQL whole (records, vectors,
edges, entities, ledger, access counts), verified, with the same recall; an interrupted copy finished by
running it again. Real stores: SQLite in a temp dir, the session's PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import MemoryEngine
from engine.embedding import Embedder
from engine.store import migrate as migration
from engine.store.ledger import Ledger
from engine.store.opening import open_storage
from engine.store.postgres import PostgresStore
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
        total = engine.stats()["memories"]
        documents = Ledger(engine._store).documents()  # noqa: SLF001 - the ledger is what is compared

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
    with MemoryEngine(data, embedder=embedder) as before, MemoryEngine(database=database_url,
                                                                      embedder=embedder) as after:
        assert after.stats() == before.stats()
        assert after.get(first.id) == before.get(first.id)
        assert Ledger(after._store).documents() == documents  # noqa: SLF001
        assert after.entities() == before.entities()


def test_migrate_refuses_what_is_not_a_postgresql_url(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--data-dir", str(tmp_path / "d"), "migrate", "--to", "mysql://x"])
    assert result.exit_code == 2 and "--to must be a postgresql:// URL" in result.stderr
    assert not (tmp_path / "d").exists()
