"""Tenant names: who a memory belongs to (issue 28).

A tenant is a partition, not a filter: each tenant's memories, edges, entities, ledger, policy and reviews live
in a record store of their own (a SQLite data dir under `<data dir>/tenants/<name>`, a PostgreSQL schema
`tenant_<name>`; engine/store/opening.py), and each has its own derived indexes (vectors, candidate table,
posting lists, graph, timelines) inside its own `MemoryEngine`. No query needs a tenant clause, so none can
forget one. The tenant `default` is the store as it was before tenants: existing stores open unchanged.

A name is 1-40 characters: lower-case ASCII letters and digits, with `_` or `-` inside, so that it is a file
name, a PostgreSQL schema and a Chroma collection name as it is, everywhere the same.
"""

from __future__ import annotations

import os
import re

from engine.errors import InvalidTenantError
from engine.validation import short_repr

DEFAULT_TENANT = "default"
TENANT_ENV = "HEBBS_TENANT"  # the tenant the CLI, the workbench and notebooks open when none is given
MAX_TENANT_CHARS = 40
_NAME = re.compile(r"[a-z0-9](?:[a-z0-9_-]{0,38}[a-z0-9])?")
RULE = (f"1-{MAX_TENANT_CHARS} lower-case letters, digits, '_' or '-', starting and ending with a letter or a "
        "digit")


def tenant_name(value: object, what: str = "tenant") -> str:
    """`value` if it is a tenant name; None or "" mean `default`. Anything else is refused with the rule."""
    if value is None or value == "":
        return DEFAULT_TENANT
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise InvalidTenantError(f"{what} must be {RULE}, got {short_repr(value)}")
    return value


def is_tenant_name(value: str) -> bool:
    return bool(_NAME.fullmatch(value))


def default_tenant() -> str:
    """`HEBBS_TENANT` if set (validated), else `default`."""
    return tenant_name(os.environ.get(TENANT_ENV) or None, TENANT_ENV)
