"""How a `hebbs` command runs its request and prints JSON: on the data dir's engine, or with `--server` /
HEBBS_SERVER on the running server that owns it. Shared by every command module (main, retention)."""

from __future__ import annotations

from typing import Any

import click

from engine.api import Request
from interfaces.cli.output import json_text


def engine() -> Any:
    """The engine of the --tenant's memories in the data dir or database, or with `--server` / HEBBS_SERVER the
    running server that owns them."""
    obj = click.get_current_context().obj
    if obj.get("server"):
        from interfaces.client import RemoteEngine

        return RemoteEngine(obj["server"], tenant=obj["tenant"])
    from engine.facade import MemoryEngine
    from engine.tenancy import DEFAULT_TENANT

    return MemoryEngine(obj["data_dir"], database=obj["database"], tenant=obj["tenant"] or DEFAULT_TENANT)


def run_request(request: Request) -> Any:
    """Run a parsed request on the data dir's engine; the response."""
    with engine() as eng:
        return eng.handle(request)


def json_mode() -> bool:
    return bool(click.get_current_context().obj["format"] == "json")


def emit_json(payload: Any) -> None:
    click.echo(json_text(payload))
