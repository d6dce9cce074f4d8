"""Options every `hebbs` command shares, defined once for the group and each command (index included)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import MISSING
from pathlib import Path
from typing import Any, TypeVar

import click

from engine import config
from engine.api.fields import wire_field
from engine.store.opening import default_database
from engine.tenancy import TENANT_ENV, tenant_name

F = TypeVar("F", bound=Callable[..., Any])
FORMATS = click.Choice(["human", "json"])

data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help=f"Where memories live (env {config.DATA_DIR_ENV}; default ./{config.DEFAULT_DATA_DIR}).",
)
server_option = click.option(
    "--server",
    metavar="URL",
    default=None,
    help=f"Send the command to a running `hebbs serve` (REST URL, env {config.SERVER_ENV}; key from HEBBS_API_KEY) "
    "instead of opening the data dir.",
)
database_option = click.option(
    "--database",
    metavar="URL",
    default=None,
    help="Keep memories in a PostgreSQL database several servers share (postgresql://user@host:port/db; env "
    "HEBBS_DATABASE_URL) instead of the data dir; --data-dir then only holds this process's derived indexes.",
)
tenant_option = click.option(
    "--tenant",
    metavar="NAME",
    default=None,
    help=f"Whose memories (env {TENANT_ENV}; default `default`): each tenant's are kept apart (docs/serving.md). "
    "With --server, sent as X-Hebbs-Tenant (left out: the API key's own tenant); `keys create` binds the key to "
    "it; `serve` and `migrate` take every tenant.",
)
format_option = click.option("--format", "fmt", type=FORMATS, default=None, help="Output: human (default) or json.")


def common_options(func: F) -> F:
    """`--data-dir`, `--database`, `--server`, `--tenant` and `--format` on a command, falling back to the values
    given before the command (and to `HEBBS_DATABASE_URL`, `HEBBS_SERVER`, `HEBBS_TENANT`). With a database, the
    data dir is only the one given (else the engine's own temporary folder). `tenant` is None when none was
    given (a server then serves the key's own tenant); a bad name ends the command (exit 2)."""

    @data_dir_option
    @database_option
    @server_option
    @tenant_option
    @format_option
    @click.pass_context
    @functools.wraps(func)
    def wrapper(
        ctx: click.Context, data_dir: Path | None, database: str | None, server: str | None, tenant: str | None,
        fmt: str | None, *args: Any, **kwargs: Any
    ) -> Any:
        root = ctx.find_root().params
        database = database or root.get("database") or default_database()
        data_dir = data_dir or root.get("data_dir")
        tenant = tenant or root.get("tenant") or os.environ.get(TENANT_ENV) or None
        ctx.obj = {
            "tenant": None if tenant is None else tenant_name(tenant, "--tenant"),
            "data_dir": data_dir if database else data_dir or config.default_data_dir(),
            "database": database,
            "server": server or root.get("server") or os.environ.get(config.SERVER_ENV) or None,
            "format": fmt or root.get("fmt") or "human",
        }
        return ctx.invoke(func, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def field_option(flag: str, request_type: type, name: str, **kwargs: Any) -> Callable[[F], F]:
    """A command option for a request field: its help text and default come from the field's one declaration
    (`engine.api.fields.wire`), so the CLI does not declare them again. `kwargs` add click's own settings."""
    declared, default = wire_field(request_type, name)
    if default is not MISSING:
        kwargs.setdefault("default", default)
        kwargs.setdefault("show_default", True)
    option: Callable[[F], F] = click.option(flag, name, help=declared.doc, **kwargs)
    return option
