"""`hebbs`: the command line. Output is a readable table by default and JSON with `--format json`.

Each command parses its options into an `engine.api` request (the one validation path), runs it with
`MemoryEngine.handle` and prints the response (`to_dict()` is the JSON). Every bad input ends as one line
on stderr with the exit code of `interfaces.errors`, with nothing written. Commands that need no model
(get, stats, forget, list, temporal recall) never import torch.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from engine import config
from engine.api import (
    ForgetRequest,
    GetRequest,
    ListRequest,
    RecallRequest,
    RememberRequest,
    ReviseRequest,
    StatsRequest,
)
from engine.api.fields import wire_field
from engine.errors import HebbsError
from engine.models import Memory, RecallResult
from engine.recall.presets import DEFAULT_PRESET, PRESETS
from interfaces.cli.migrate import migrate
from interfaces.cli.options import (
    common_options,
    data_dir_option,
    database_option,
    field_option,
    format_option,
    server_option,
    tenant_option,
)
from interfaces.cli.output import cell, ensure_utf8_streams, plain
from interfaces.cli.retention import policy, print_forgotten, sweep
from interfaces.cli.running import emit_json, json_mode, run_request
from interfaces.errors import outcome_of


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"hebbs: error: {plain(message)}", err=True)
    sys.exit(code)


def _undecodable_argument(args: Sequence[str]) -> str | None:
    """The first argument that is not valid UTF-8 (Python hands undecodable bytes over as lone surrogates),
    described without echoing it; None when all are fine."""
    for n, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"argument {n} is not valid UTF-8 (undecodable byte or lone surrogate at position {exc.start})"
    return None


class HebbsGroup(click.Group):
    """Turns usage errors and engine errors into one line on stderr with exit code 2."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        ensure_utf8_streams()
        # Everything `hebbs` creates (records, WAL, the vector index's files, keys, uploads) is its user's
        # alone: memories are private text (docs/reliability.md, file modes).
        os.umask(0o077)
        argv = args[0] if args else kwargs.get("args")
        # Checked before click parses anything: no data dir is created for a command that is refused.
        problem = _undecodable_argument(sys.argv[1:] if argv is None else list(argv))
        if problem:
            _fail(problem)
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.Abort:
            _fail("aborted")
        except click.ClickException as exc:
            _fail(exc.format_message().replace("\n", " "))
        except HebbsError as exc:
            _fail(str(exc), outcome_of(exc).exit_code)


_run, _json_mode, _emit_json = run_request, json_mode, emit_json


@click.group(cls=HebbsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@data_dir_option
@database_option
@server_option
@tenant_option
@format_option
@click.version_option(package_name="hebbs-workbench")
def main(data_dir: Path | None, database: str | None, server: str | None, tenant: str | None, fmt: str | None
         ) -> None:
    """hebbs: a memory engine for AI agents (remember, recall, revise, forget)."""


# --- writes ------------------------------------------------------------------------------------------
@main.command()
@click.argument("content")
@click.option("--entity-id", help="The entity this memory is about (its timeline).")
@click.option("--importance", type=float, help=wire_field(RememberRequest, "importance")[0].doc)
@click.option("--context", "context_json", help="A JSON object stored with the memory.")
@click.option("--edge", "edges", multiple=True, metavar="TARGET:TYPE[:CONF]", help="An edge to an existing memory.")
@click.option("--created-at", help="When it happened (ISO 8601), for importing history.")
@click.option("--kind", default="episode", show_default=True, help=wire_field(RememberRequest, "kind")[0].doc)
@common_options
def remember(
    content: str,
    entity_id: str | None,
    importance: float | None,
    context_json: str | None,
    edges: Sequence[str],
    created_at: str | None,
    kind: str,
) -> None:
    """Store a memory."""
    request = RememberRequest.parse(
        {
            "content": content,
            "importance": importance,
            "context": context_json,
            "entity_id": entity_id,
            "kind": kind,
            "created_at": created_at,
            "edges": list(edges),
        }
    )
    _print_memory(_run(request))


@main.command()
@click.argument("memory_id")
@click.option("--content", help="New content.")
@click.option("--importance", type=float, help="New importance.")
@click.option("--context", "context_json", help="New context (a JSON object).")
@click.option("--entity-id", help="New entity.")
@field_option("--context-mode", ReviseRequest, "context_mode", type=click.Choice(["merge", "replace"]))
@common_options
def revise(
    memory_id: str,
    content: str | None,
    importance: float | None,
    context_json: str | None,
    entity_id: str | None,
    context_mode: str,
) -> None:
    """Change a memory in place; the old state is kept as a linked revision."""
    request = ReviseRequest.parse(
        {"memory_id": memory_id, "content": content, "importance": importance, "context": context_json,
         "entity_id": entity_id, "context_mode": context_mode}
    )
    _print_memory(_run(request))


@main.command()
@click.argument("memory_ids", nargs=-1)
@click.option("--entity-id", help="Forget every memory of this entity (its exact id).")
@click.option("--prefix", is_flag=True, help="Let --entity-id be an alias or unique prefix of the entity.")
@field_option("--not-accessed-since", ForgetRequest, "not_accessed_since")
@field_option("--access-count-below", ForgetRequest, "access_count_below", type=int)
@field_option("--kind", ForgetRequest, "kind")
@field_option("--decay-score-below", ForgetRequest, "decay_score_below", type=float)
@field_option("--dry-run", ForgetRequest, "dry_run", is_flag=True)
@common_options
def forget(memory_ids: Sequence[str], entity_id: str | None, prefix: bool, **criteria: Any) -> None:
    """Forget memories by id, all memories of an entity (exact id unless --prefix), or those matching criteria;
    everything given is ANDed. --dry-run lists what would go."""
    response = _run(ForgetRequest.parse({"memory_ids": list(memory_ids), "entity_id": entity_id, "prefix": prefix,
                                         **criteria}))
    print_forgotten(response)


# --- reads -------------------------------------------------------------------------------------------
@main.command()
@click.argument("memory_id")
@common_options
def get(memory_id: str) -> None:
    """Show one memory."""
    _print_memory(_run(GetRequest.parse({"memory_id": memory_id})))


@main.command(name="list")
@click.option("--entity-id", help="Only this entity.")
@click.option("--kind", help="Only this kind.")
@click.option("--time-range", help="START:END dates or START..END date-times.")
@click.option("--min-importance", type=float, help="Only memories at least this important.")
@click.option("--limit", type=int, default=config.DEFAULT_LIST_LIMIT, show_default=True)
@click.option("--offset", type=int, default=0, show_default=True, help="Skip this many matches (paging).")
@common_options
def list_command(
    entity_id: str | None, kind: str | None, time_range: str | None, min_importance: float | None, limit: int,
    offset: int,
) -> None:
    """List memories, newest first."""
    request = ListRequest.parse(
        {"entity_id": entity_id, "kind": kind, "time_range": time_range, "min_importance": min_importance,
         "limit": limit, "offset": offset}
    )
    response = _run(request)
    memories = response.memories
    if _json_mode():
        _emit_json(response.to_dict())
        return
    from rich.table import Table

    table = Table(box=None)
    for col in ("id", "created_at", "kind", "entity", "imp", "content"):
        table.add_column(col)
    for m in memories:
        table.add_row(
            *map(cell, (m.id, _short_time(m), m.kind.value, m.entity_id or "", f"{m.importance:.2f}",
                        _clip(m.content, 70)))
        )
    _console().print(table)
    if response.total > len(memories):
        click.echo(f"{len(memories)} of {response.total} matches (--offset {offset}, --limit {limit})")


@main.command()
@common_options
def stats() -> None:
    """Counts of memories, vectors (read from Chroma), edges, entities and structures still to extract."""
    counts = _run(StatsRequest.parse({})).to_dict()
    if _json_mode():
        _emit_json(counts)
    else:
        width = max(len(key) for key in counts)
        for key, value in counts.items():
            click.echo(f"{key:>{width}}: {value}")


@main.command()
@click.argument("cue", required=False, default="")
@click.option(
    "--strategy",
    "strategies",
    multiple=True,
    metavar="S",
    help="similarity, temporal, causal, analogical, lexical; repeat to combine (default: the --preset).",
)
@click.option(
    "--preset",
    metavar="NAME",
    help=f"A named recall recipe: {', '.join(PRESETS)} (default {DEFAULT_PRESET.name} when no --strategy).",
)
@field_option("--top-k", RecallRequest, "top_k", type=int)
@click.option("--weights", metavar="R:T:I:F", help="Relevance:recency:importance:reinforcement weights.")
@field_option("--entity-id", RecallRequest, "entity_id")
@click.option("--time-range", help="Temporal: START:END dates or START..END date-times; either end may be empty.")
@click.option("--seed", help="Causal: the memory to walk from (default: the one nearest the cue).")
@click.option(
    "--max-depth",
    type=int,
    default=config.DEFAULT_MAX_DEPTH,
    show_default=True,
    help=f"Causal: how far to walk (at most {config.MAX_DEPTH_CAP}).",
)
@click.option("--edge-types", help="Causal: comma-separated edge types to follow (default all).")
@field_option("--ef-search", RecallRequest, "ef_search", type=int)
@field_option("--analogical-alpha", RecallRequest, "analogical_alpha", type=float)
@common_options
def recall(
    cue: str,
    strategies: Sequence[str],
    top_k: int,
    weights: str | None,
    entity_id: str | None,
    time_range: str | None,
    seed: str | None,
    max_depth: int,
    edge_types: str | None,
    ef_search: int,
    analogical_alpha: float,
    preset: str | None,
) -> None:
    """Recall memories for a cue, ranked by the composite score."""
    request = RecallRequest.parse(
        {
            "cue": cue,
            "strategies": list(strategies) or None,
            "preset": preset,  # none: the engine's default preset, unless strategies are named
            "top_k": top_k,
            "scoring_weights": weights,
            "entity_id": entity_id,
            "time_range": time_range,
            "seed_memory_id": seed,
            "max_depth": max_depth,
            "edge_types": edge_types,
            "ef_search": ef_search,
            "analogical_alpha": analogical_alpha,
        }
    )
    response = _run(request)
    if _json_mode():
        _emit_json(response.to_dict())
    else:
        _print_results(response.results, request.scoring_weights, request.cue or "")


# --- output ------------------------------------------------------------------------------------------
def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _short_time(m: Memory) -> str:
    return m.created_at.strftime("%Y-%m-%d %H:%M")


def _print_memory(memory: Memory) -> None:
    if _json_mode():
        _emit_json(memory.to_dict())
        return
    for key, value in memory.to_dict().items():
        if key == "context":
            value = json.dumps(value, ensure_ascii=False)
        click.echo(f"{key:>16}: {plain(str(value)) if value is not None else '-'}")


def _console() -> Any:
    """A rich console; when output is piped it is wide enough that rows stay whole for grep and tests."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)


def _print_results(results: Sequence[RecallResult], weights: Any, cue: str = "") -> None:
    from rich.table import Table

    from engine.recall.scoring import contributions

    console = _console()
    if not results:
        console.print("no memories matched")
        return
    table = Table(box=None, title=cell(f"weights R:T:I:F = {':'.join(f'{w:g}' for w in weights.as_tuple())}"))
    for col in ("#", "score", "= rel", "+ rec", "+ imp", "+ reinf", "strategies", "when", "content", "id"):
        table.add_column(col, justify="right" if col in ("#", "score") else "left")
    for rank, r in enumerate(results, 1):
        parts = contributions(r.signals, weights)
        found_by = ", ".join(_detail_label(d.to_dict()) for d in r.strategy_details)
        table.add_row(
            *map(cell, (
                str(rank),
                f"{r.score:.3f}",
                f"{parts['relevance']:.3f}",
                f"{parts['recency']:.3f}",
                f"{parts['importance']:.3f}",
                f"{parts['reinforcement']:.3f}",
                found_by,
                _short_time(r.memory),
                _clip(r.memory.content, 60),
                r.memory.id,
            ))
        )
    console.print(table)
    _print_mappings(results, cue)


def _sentence_pair(pair: dict[str, Any], cue: str, content: str, width: int) -> str:
    """"n cue sentence  =>  m memory sentence", each clipped to `width`, from a pair with both spans."""
    told, there = (_clip(text[slice(*span)], width) for text, span in
                   ((cue, pair["cue_span"]), (content, pair["memory_span"])))
    return f"{pair['cue'] + 1} {told}  =>  {pair['memory'] + 1} {there}"


def _print_mappings(results: Sequence[RecallResult], cue: str = "") -> None:
    """For analogical hits: how the plots line up (a story cue: which sentence plays the part of which), which cue
    sentence maps to which of the memory's, the relations that carried the mapping (higher-order ones first), and
    which cue event / participant maps to which."""
    lines: list[str] = []
    for rank, r in enumerate(results, 1):
        d = next((x.fields for x in r.strategy_details if x.strategy.value == "analogical"), None)
        if d is None or not (d.get("mapping") or d.get("plot")):
            continue
        mapping = d.get("mapping") or {}
        parts = (f" (systematicity {d['systematicity']:.2f} x {d.get('surface_kept', 1.0):.2f} for the shared surface, "
                 f"plot {d['plot_similarity']:.2f})" if d.get("plot") and "systematicity" in d else "")
        lines.append(f"#{rank} structure {d['structural_similarity']:.2f}{parts}: {_clip(r.memory.content, 70)}")
        for n, s in enumerate(d.get("plot", {}).get("sentences", [])):
            if s.get("cue_span") and s.get("memory_span"):
                pair = _sentence_pair(s, cue, r.memory.content, 44)
                lines.append(f"    {'plot' if n == 0 else '':<9} {pair}  ({s['similarity']:.2f})")
        sentences = [s for s in mapping.get("sentences", []) if s.get("cue_span") and s.get("memory_span")]
        if len(sentences) > 1:  # a story: which sentence maps to which
            for n, s in enumerate(sentences):
                lines.append(f"    {'sentences' if n == 0 else '':<9} {_sentence_pair(s, cue, r.memory.content, 48)}")
        higher = ("achieves", "thwarts")
        for rel in sorted(mapping.get("relations", []), key=lambda x: x["kind"] not in higher):
            lines.append(f"    {rel['kind']:<9} {rel['cue']}  =>  {rel['memory']}")
        events = "; ".join(f"{e['cue']} -> {e['memory']}" for e in mapping.get("events", []))
        if events:
            lines.append(f"    events    {events}")
        if mapping.get("participants"):
            roles = "; ".join(f"{p['role']} {p['cue']} -> {p['memory']}" for p in mapping["participants"])
            lines.append(f"    roles     {roles}")
    if lines:
        click.echo("\nanalogical mappings (cue => memory):")
        for line in lines:
            click.echo(plain(line))


def _detail_label(d: dict[str, Any]) -> str:
    name = d["strategy"]
    if name == "causal":
        return f"causal d={d['depth']}" + (f" {d['edge_type']}" if d.get("edge_type") else " seed")
    if name == "temporal":
        return f"temporal #{d['rank']}"
    if name == "lexical":
        return f"lex {d['relevance']:.2f}"
    if name == "analogical":
        return f"analog e={d['embedding_similarity']:.2f} s={d['structural_similarity']:.2f}"
    return f"sim {d['relevance']:.2f}"


from interfaces.cli.index import index_command  # noqa: E402  (its own module: spaCy stays out of other commands)
from interfaces.cli.review import contradictions_command, insights_command, reflect_command  # noqa: E402
from interfaces.cli.serve import keys, serve  # noqa: E402  (web and RPC frameworks load only when serving)

main.add_command(index_command)
for command in (reflect_command, insights_command, contradictions_command):
    main.add_command(command)
main.add_command(policy)
main.add_command(sweep)
main.add_command(serve)
main.add_command(keys)
main.add_command(migrate)

if __name__ == "__main__":
    main()
