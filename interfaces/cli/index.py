"""`hebbs index PATH...`: index documents, with a progress bar while it runs and a summary at the end.

Registered on the `hebbs` group by interfaces/cli/main.py. It takes `--data-dir` and `--format` like every other
command (before or after the command name). spaCy and the embedding model load only when there is
something new to analyse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from engine import config
from engine.api import IngestRequest
from engine.errors import IngestError
from engine.ingest.summary import IngestSummary
from engine.tenancy import DEFAULT_TENANT
from interfaces.cli.options import common_options
from interfaces.cli.output import json_text, plain

_PHASES = {"reading": "reading files", "loading models": "loading models", "analysing": "analysing, writing",
           "writing": "writing memories", "linking": "linking edges"}


@click.command(name="index")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--extractor", type=click.Choice(["offline", "llm"]), default=None,
              help=f"offline: spaCy, no network (default); llm: an OpenAI-compatible endpoint from "
                   f"{config.LLM_BASE_URL_ENV}, {config.LLM_MODEL_ENV} and {config.LLM_API_KEY_ENV} "
                   f"(env {config.INGEST_EXTRACTOR_ENV} sets the default).")
@click.option("--file-seconds", type=float, default=None, metavar="SECONDS",
              help=f"Skip a file whose analysis takes longer (default {config.INGEST_FILE_SECONDS:g}, env "
                   f"{config.INGEST_FILE_SECONDS_ENV}; 0: no limit).")
@common_options
def index_command(paths: Sequence[Path], extractor: str | None, file_seconds: float | None) -> None:
    """Index documents: Markdown, plain text and JSON chat transcripts, files or folders.

    Each document becomes a `document` memory and its sentences `proposition` memories, with entities,
    dates, and caused_by / followed_by / entity_relation edges. A JSON chat transcript is a conversation:
    one `episode` memory per message, its speaker the entity, sessions and message ids kept, followed_by
    edges within each session. Rerunning is cheap and idempotent: unchanged documents are skipped, changed
    sentences replaced, removed files forgotten. Documents are committed in small batches as they are
    done, so an interrupted run keeps what it finished.
    """
    from engine.facade import MemoryEngine

    obj = click.get_current_context().obj
    json_mode = obj["format"] == "json"
    request = IngestRequest.parse({"paths": list(paths), "extractor": extractor, "file_seconds": file_seconds})
    missing = [str(p) for p in request.paths if not (p.exists() or p.is_symlink())]
    if missing:  # a typo in a path is the caller's to fix: exit 2 before any model loads or anything is written
        raise IngestError(f"no such file or folder: {', '.join(missing)}")
    if obj.get("server"):  # the server reads the paths from its own file system (the same machine)
        from interfaces.client import RemoteEngine

        with RemoteEngine(obj["server"], tenant=obj["tenant"]) as remote:
            summary_dict = remote.handle(request)
        click.echo(json_text(summary_dict))
        return
    opened = MemoryEngine(obj["data_dir"], database=obj["database"], tenant=obj["tenant"] or DEFAULT_TENANT)
    with opened as engine, _progress(enabled=not json_mode) as progress:
        summary = engine.ingest(request.paths, progress=progress, extractor=request.extractor,
                                file_seconds=request.file_seconds)
    if json_mode:
        click.echo(json_text(summary.to_dict()))
    else:
        for line in summary_lines(summary):
            click.echo(plain(line))


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A rich progress bar per phase on stderr (only on a terminal, so logs and pipes stay clean)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield lambda phase, done, total: None
        return
    columns = (TextColumn("{task.description:<22}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(_PHASES.get(phase, phase), total=max(total, 1))
            bar.update(tasks[phase], completed=done, total=max(total, 1))

        yield update


def summary_lines(s: IngestSummary) -> list[str]:
    """The human summary: documents, propositions, entities, edges by type, time taken, skipped files."""
    lines = [
        f"documents     {s.documents} ({s.documents_indexed} new or changed, {s.documents_unchanged} unchanged, "
        f"{s.documents_removed} removed)",
        f"propositions  {s.propositions_total} ({s.propositions_added} added, {s.propositions_kept} kept, "
        f"{s.propositions_removed} removed)",
        *([f"messages      {s.messages_total} ({s.messages_added} added, {s.messages_kept} kept, "
             f"{s.messages_removed} removed; one memory per chat message)"]
          if s.messages_total or s.messages_removed else []),
        f"entities      {s.entities}",
        "edges         " + (", ".join(f"{t} {n}" for t, n in sorted(s.edges.items())) or "none"),
        f"time          {s.seconds:.1f} s"
        + (f" ({s.phase_seconds.get('loading models', 0.0):.1f} s loading models, "
           f"{s.propositions_per_second:.0f} propositions/s)" if s.propositions_added else ""),
    ]
    if s.extractor != "offline":
        lines.append(f"extractor     {s.extractor}" + (f" ({s.llm_fallbacks} documents fell back to offline)"
                                                     if s.llm_fallbacks else ""))
    if s.skipped:
        lines.append(f"skipped       {len(s.skipped)} file{'s' if len(s.skipped) != 1 else ''}:")
        lines.extend(f"  {item.path}: {item.reason}" for item in s.skipped)
    return lines
