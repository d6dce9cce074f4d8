"""`hebbs policy` (show or change the tenant's policy) and `hebbs sweep` (the auto-forget sweep).

Registered on the `hebbs` group by interfaces/cli/main.py; like every command they build an `engine.api` request
and run it on the data dir's engine or, with `--server`, on a running `hebbs serve`.
"""

from __future__ import annotations

from typing import Any

import click

from engine.api import ForgetResponse, GetPolicyRequest, SetPolicyRequest, SweepRequest
from interfaces.cli.options import common_options, field_option
from interfaces.cli.running import emit_json, json_mode, run_request


@click.command()
@field_option("--decay-half-life-days", SetPolicyRequest, "decay_half_life_days", type=float)
@field_option("--auto-forget-threshold", SetPolicyRequest, "auto_forget_threshold", type=float)
@field_option("--max-snapshots-per-memory", SetPolicyRequest, "max_snapshots_per_memory", type=int)
@common_options
def policy(**changes: Any) -> None:
    """Show the tenant's policy, or change the values given (the others are kept)."""
    given = {k: v for k, v in changes.items() if v is not None}
    response = run_request(SetPolicyRequest.parse(given) if given else GetPolicyRequest.parse({}))
    if json_mode():
        emit_json(response.to_dict())
        return
    values = response.policy.to_dict()
    for name in ("decay_half_life_days", "auto_forget_threshold", "max_snapshots_per_memory"):
        shown = "none" if values[name] is None else f"{values[name]:g}"
        click.echo(f"{name:<26}{shown}")


@click.command()
@field_option("--dry-run", SweepRequest, "dry_run", is_flag=True)
@common_options
def sweep(dry_run: bool) -> None:
    """The auto-forget sweep: forget every memory whose decay score is below the policy's auto-forget
    threshold, leaving tombstones (no threshold set: nothing goes)."""
    print_forgotten(run_request(SweepRequest.parse({"dry_run": dry_run})))


def print_forgotten(response: ForgetResponse) -> None:
    """A forget's or a sweep's outcome: JSON, or one line (the ids too, for a dry run)."""
    forgotten = response.forgotten
    if json_mode():
        emit_json(response.to_dict())
        return
    derived = f" ({response.cascade_count} derived from a forgotten document)" if response.cascade_count else ""
    noun = f"memor{'y' if len(forgotten) == 1 else 'ies'}"
    if response.dry_run:
        click.echo(f"would forget {len(forgotten)} {noun}{derived} (dry run: nothing changed)")
        for memory_id in forgotten:
            click.echo(f"  {memory_id}")
    else:
        count = response.tombstone_count
        stones = f", {count} tombstone{'' if count == 1 else 's'} left" if count else ""
        click.echo(f"forgot {len(forgotten)} {noun}{derived}{stones}")
