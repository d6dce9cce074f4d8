"""`hebbs reflect`, `hebbs insights` and `hebbs contradictions`: reflection and contradiction review.

Registered on the `hebbs` group by interfaces/cli/main.py; each takes `--data-dir`, `--server` and `--format`
like every other command. Output is read from the responses' `to_dict()`, so it is the same locally and
through a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from engine.api import parse_request
from engine.api.reviews import InsightsRequest, ReflectRequest
from interfaces.cli.options import common_options, field_option
from interfaces.cli.output import cell, json_text, plain
from interfaces.cli.running import engine


def _call(op: str, fields: dict[str, Any]) -> dict[str, Any]:
    """Run one request on the data dir's engine (or the server of --server); the response as a dict."""
    obj = click.get_current_context().obj
    request = parse_request(op, {k: v for k, v in fields.items() if v is not None})
    with engine() as opened:
        reply: dict[str, Any] = opened.handle(request).to_dict()
    if obj["format"] == "json":
        click.echo(json_text(reply))
    return reply


def _print_insights(insights: Sequence[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None)
    for column in ("id", "conf", "sources", "entity", "insight"):
        table.add_column(column)
    for i in insights:
        stale = " (stale)" if i["stale"] else ""
        table.add_row(*map(cell, (i["id"], f"{i['confidence']:.2f}", f"{len(i['source_memory_ids'])}{stale}",
                                  i["entity_id"] or "", plain(i["content"][:160]))))
    Console().print(table)


@click.command(name="reflect")
@field_option("--entity-id", ReflectRequest, "entity_id")
@field_option("--since", ReflectRequest, "since")
@common_options
def reflect_command(entity_id: str | None, since: str | None) -> None:
    """Group memories into topics and write one insight per topic of at least 3 memories, citing its sources."""
    done = _call("reflect", {"entity_id": entity_id, "since": since})
    if click.get_current_context().obj["format"] == "json":
        return
    click.echo(f"{done['insights_created']} new insight(s) from {done['memories_processed']} memories in "
               f"{done['clusters_found']} topic(s); {done['unchanged']} unchanged")
    if done["insights"]:
        _print_insights(done["insights"])


@click.command(name="insights")
@field_option("--entity-id", InsightsRequest, "entity_id")
@field_option("--min-confidence", InsightsRequest, "min_confidence", type=float)
@field_option("--max-results", InsightsRequest, "max_results", type=int)
@common_options
def insights_command(entity_id: str | None, min_confidence: float, max_results: int) -> None:
    """The most confident insights, with how many sources each cites (stale: a source was forgotten or revised)."""
    found = _call("insights", {"entity_id": entity_id, "min_confidence": min_confidence, "max_results": max_results})
    if click.get_current_context().obj["format"] != "json":
        _print_insights(found["insights"])


@click.command(name="contradictions")
@click.option("--verdict", "verdicts", multiple=True, metavar="PENDING_ID:VERDICT",
              help="Commit a verdict: contradiction, revision or dismiss (repeatable).")
@click.option("--limit", type=int, default=None, help="List at most this many candidates (default 100).")
@common_options
def contradictions_command(verdicts: Sequence[str], limit: int | None) -> None:
    """List the contradiction candidates found on write, or commit verdicts on them with --verdict."""
    if verdicts:
        pairs = [v.rpartition(":") for v in verdicts]
        done = _call("contradiction_commit", {"verdicts": [{"pending_id": p, "verdict": v} for p, _, v in pairs]})
        if click.get_current_context().obj["format"] != "json":
            click.echo(f"{done['contradictions_confirmed']} contradiction(s), {done['revisions_created']} "
                       f"revision(s), {done['dismissed']} dismissed")
        return
    found = _call("contradiction_prepare", {"limit": limit})
    if click.get_current_context().obj["format"] == "json":
        return
    for c in found["candidates"]:
        click.echo(f"{c['pending_id']}  {c['suggested']} ({c['reason']}, {c['confidence']:.2f}): {c['detail']}")
        click.echo(f"    older {c['memory_id_a']}: {plain(c['content_a'])}")
        click.echo(f"    newer {c['memory_id_b']}: {plain(c['content_b'])}")
    if not found["candidates"]:
        click.echo("no contradiction candidates pending")
