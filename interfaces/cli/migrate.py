"""`hebbs migrate --to postgresql://...`: copy the data dir's store and API keys into a PostgreSQL database
(resumable), verify the rows of every table, and compare the default recall of a sample of cues on both."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from engine import config
from engine.api.requests import RecallRequest
from engine.store.opening import is_database_url, known_tenants, open_storage, tenant_schema
from engine.tenancy import DEFAULT_TENANT
from interfaces.auth import KeyRing
from interfaces.cli.options import common_options
from interfaces.cli.running import emit_json, json_mode

if TYPE_CHECKING:
    from engine.facade import MemoryEngine


@click.command("migrate")
@click.option("--to", "target", required=True, metavar="URL", help="The PostgreSQL database to copy into.")
@click.option("--sample", default=20, show_default=True, type=click.IntRange(0, 1000),
              help="Cues of the recall parity check after the copy (0: none).")
@common_options
def migrate(target: str, sample: int) -> None:
    """Copy this data dir's memories (records, vectors, edges, entities, ledger), replies, reviews, tombstones
    and API keys into a PostgreSQL database, every tenant into its own schema; run it again to finish an
    interrupted copy."""
    obj = click.get_current_context().obj
    if obj["database"]:
        raise click.UsageError("migrate copies a data dir: give --data-dir, not --database")
    if not is_database_url(target):
        raise click.UsageError(f"--to must be a postgresql:// URL, not {target!r}")
    data_dir = obj["data_dir"] or config.default_data_dir()
    # Every tenant (engine/tenancy.py): each data dir under tenants/ into its own schema.
    tenants = {tenant: _copy_tenant(data_dir, target, tenant, sample) for tenant in known_tenants(data_dir, None)}
    parity = [sum(t["parity"][i] for t in tenants.values()) for i in (0, 1)]
    result: dict[str, Any] = {name: sum(t[name] for t in tenants.values())
                              for name in ("memories_copied", "memories_already_there", "edges", "entities")}
    result.update(rows={table: sum(t["rows"][table] for t in tenants.values())
                        for table in tenants[DEFAULT_TENANT]["rows"]},
                  api_keys=tenants[DEFAULT_TENANT]["api_keys"], recall_parity="{}/{}".format(*parity),
                  tenants={name: {k: v for k, v in t.items() if k not in ("parity", "api_keys")}
                           for name, t in tenants.items()})
    if json_mode():
        emit_json(result)
    else:
        tables = ", ".join(f"{n} {table}" for table, n in result["rows"].items())
        click.echo(f"copied {result['memories_copied']} memories ({result['memories_already_there']} already "
                   f"there), {result['edges']} edges, {result['entities']} entities, {result['api_keys']} API keys"
                   + (f" of {len(tenants)} tenants ({', '.join(tenants)})" if len(tenants) > 1 else "")
                   + f"; rows verified ({tables}); the same recall for {parity[0]} of {parity[1]} cues")
    if parity[0] != parity[1]:
        raise click.ClickException(f"recall differs for {parity[1] - parity[0]} of {parity[1]} cues after the copy")


def _copy_tenant(data_dir: Path, target: str, tenant: str, sample: int) -> dict[str, Any]:
    """One tenant's store into its schema of the database (engine/store/opening.py), verified; with the
    default tenant's, the API keys (the server's, whichever tenant each is bound to)."""
    from engine.facade import MemoryEngine
    from engine.store.migrate import migrate as copy_store
    from engine.store.postgres import PostgresStore

    owner, source, _ = open_storage(data_dir, None, tenant)
    try:
        destination = PostgresStore(target, schema=tenant_schema(tenant))
        try:
            copied = copy_store(source, destination)
            keys = _copy_keys(KeyRing(data_dir), KeyRing(None, destination)) if tenant == DEFAULT_TENANT else 0
        finally:
            destination.close()
    finally:
        source.close()
        owner.release()
    same, asked = 0, 0
    if sample:
        with MemoryEngine(data_dir, tenant=tenant) as before, \
                MemoryEngine(database=target, embedder=before.embedder, tenant=tenant) as after:
            same, asked = recall_parity(before, after, sample)
    return {"memories_copied": copied.memories, "memories_already_there": copied.skipped, "edges": copied.edges,
            "entities": copied.entities, "rows": copied.rows, "api_keys": keys, "parity": (same, asked),
            "recall_parity": f"{same}/{asked}"}


def _copy_keys(source: KeyRing, target: KeyRing) -> int:
    """The data dir's API keys (and revocations) into the database's, checked: every server on the database
    then accepts the keys the data dir's server did. Returns how many keys the source holds."""
    target.take(source)
    held = {r.sha256 for r in target.records()}
    missing = [r.id for r in source.records() if r.sha256 not in held]
    if missing:
        raise click.ClickException(f"API keys {', '.join(missing)} did not reach the database (revoked there?)")
    return len(source.records())


def recall_parity(source: MemoryEngine, target: MemoryEngine, cues: int = 20, seed: int = 5) -> tuple[int, int]:
    """(cues ranked alike, cues asked): the default recall (not counted as an access) of `cues` cues made of
    the first words of stored memories, compared by ranked memory ids on both engines."""
    contents = sorted(m.content for m in source.list_memories(limit=1000, include_revisions=False))
    picked = random.Random(seed).sample(contents, min(cues, len(contents)))
    same = 0
    for text in picked:
        request = RecallRequest.parse({"cue": " ".join(text.split()[:6]), "top_k": 10})
        same += [r.memory.id for r in source.retrieve(request)] == [r.memory.id for r in target.retrieve(request)]
    return same, len(picked)
