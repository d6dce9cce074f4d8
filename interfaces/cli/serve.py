"""`hebbs serve` (REST + gRPC over one data dir) and `hebbs keys create|list|revoke`.

Own module so that only these commands import the web and RPC frameworks.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from engine import config
from engine.tenancy import DEFAULT_TENANT
from interfaces.auth import KeyRing
from interfaces.cli.options import common_options


@click.command()
@click.option("--host", default=config.DEFAULT_SERVE_HOST, show_default=True,
              help="Address to listen on (loopback unless told otherwise; see docs/reliability.md before exposing it).")
@click.option("--rest-port", type=click.IntRange(0, 65535), default=config.DEFAULT_REST_PORT, show_default=True)
@click.option("--grpc-port", type=click.IntRange(0, 65535), default=config.DEFAULT_GRPC_PORT, show_default=True)
@click.option("--no-auth", is_flag=True, help="Accept requests without an API key (local experiments only).")
@click.option("--index-root", "index_roots", multiple=True, metavar="FOLDER",
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A folder /v1/index may read (repeatable). None: indexing server files is off; uploads still work.")
@click.option("--allow-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="A host name clients reach this server by (repeatable); the bound host, IP addresses and "
                   "localhost are always accepted. Other Host headers are refused (DNS rebinding).")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False, path_type=Path), metavar="PEM",
              help="Serve REST (https) and gRPC over TLS with this certificate chain (with --tls-key).")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False, path_type=Path), metavar="PEM",
              help="The certificate's private key.")
@click.option("--chroma-url", envvar=config.CHROMA_URL_ENV, metavar="URL",
              help=f"Keep the vector index on a Chroma server (env {config.CHROMA_URL_ENV}).")
@click.option("--sweep-minutes", type=click.FloatRange(0, 525_600), default=60.0, show_default=True,
              help="Run the auto-forget sweep this often (0: never); it forgets only below the policy's "
                   "auto_forget_threshold (`hebbs policy`).")
@common_options
def serve(host: str, rest_port: int, grpc_port: int, no_auth: bool, index_roots: tuple[Path, ...],
          allowed_hosts: tuple[str, ...], tls_cert: Path | None, tls_key: Path | None, chroma_url: str | None,
          sweep_minutes: float) -> None:
    """Serve the data dir to agents: REST (FastAPI) and gRPC (the official SDK's hebbs.v1 services)."""
    from interfaces.server import Tls, run_server

    ctx = click.get_current_context()
    data_dir = ctx.obj["data_dir"]
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    tls = Tls(tls_cert, tls_key) if tls_cert is not None and tls_key is not None else None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not _loopback(host):
        click.echo(f"hebbs: WARNING: --host {host} accepts connections from other machines"
                   + ("" if tls else "; REST and gRPC are plain text (no --tls-cert/--tls-key): keys and memories "
                                     "cross the network readable by anyone on the path"), err=True)
    if no_auth:
        click.echo("hebbs: WARNING: --no-auth: anyone who can reach this port can read and change every memory",
                   err=True)
    run_server(data_dir, database=ctx.obj["database"], host=host, rest_port=rest_port, grpc_port=grpc_port,
               auth=not no_auth, chroma_url=chroma_url, index_roots=index_roots, allowed_hosts=allowed_hosts, tls=tls,
               announce=lambda text: click.echo(text, err=True), sweep_minutes=sweep_minutes)


def _loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.group()
def keys() -> None:
    """API keys of the data dir's server (stored hashed in the data dir), or with --database of every server on
    that database (stored hashed in it)."""


@keys.command(name="create")
@click.option("--name", default="default", show_default=True, help="A label to recognise the key by.")
@click.option("--admin", is_flag=True, help="An admin key: it may use every tenant (X-Hebbs-Tenant / tenant_id "
              "chooses; default `default`). Without it the key is bound to --tenant (default `default`).")
@common_options
def keys_create(name: str, admin: bool) -> None:
    """Make a new key of one tenant (--tenant), or an admin key, and print it once (it cannot be shown again)."""
    tenant = click.get_current_context().obj["tenant"]
    if admin and tenant is not None:
        raise click.UsageError("--admin and --tenant (or HEBBS_TENANT) exclude each other: an admin key uses every "
                               "tenant")
    with _ring() as ring:
        record, key = ring.create(name, None if admin else tenant or DEFAULT_TENANT)
    if _json():
        click.echo(json.dumps({**record.public(), "key": key}, indent=2))
    else:
        click.echo(key)
        whose = "admin: every tenant" if record.tenant is None else f"tenant {record.tenant}"
        click.echo(f"(key id {record.id}, {whose}; shown once: store it now)", err=True)


@keys.command(name="list")
@common_options
def keys_list() -> None:
    """The keys' ids, tenants (`*` for an admin key), names and creation times (never the keys)."""
    with _ring() as ring:
        records = [r.public() for r in ring.records()]
    if _json():
        click.echo(json.dumps(records, indent=2))
        return
    if not records:
        click.echo("no API keys yet: `hebbs serve` makes one on first start, or `hebbs keys create`")
    for r in records:
        click.echo(f"{r['id']}  {r['created_at']}  {'*' if r['admin'] else r['tenant']}  {r['name']}")


@keys.command(name="revoke")
@click.argument("key_id")
@common_options
def keys_revoke(key_id: str) -> None:
    """Remove a key by its id (`hebbs keys list`); a running server refuses it from the next request on."""
    with _ring() as ring:
        record = ring.revoke(key_id)
    click.echo(json.dumps(record.public()) if _json() else f"revoked {record.id} ({record.name})")


@contextmanager
def _ring() -> Iterator[KeyRing]:
    """The data dir's keys, or with --database / HEBBS_DATABASE_URL those every server on the database honours."""
    obj = click.get_current_context().obj
    if not obj["database"]:
        yield KeyRing(Path(obj["data_dir"]))
        return
    from engine.store.opening import is_database_url
    from engine.store.postgres import PostgresStore

    if not is_database_url(obj["database"]):
        raise click.UsageError(f"--database must be a postgresql:// URL, not {obj['database']!r}")
    store = PostgresStore(obj["database"])
    try:
        yield KeyRing(None, store)
    finally:
        store.close()


def _json() -> bool:
    return bool(click.get_current_context().obj["format"] == "json")

