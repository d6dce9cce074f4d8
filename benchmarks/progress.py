"""Progress bars for long work (rich), quiet when asked (the smoke test) or when output is not a terminal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)
QUIET = False


def log(message: str) -> None:
    if not QUIET:
        console.log(message)


@contextmanager
def bar(description: str, total: int) -> Iterator[Callable[[int, int], None]]:
    """Yields `update(done, total)`, the shape the engine's `remember_many(progress=...)` takes."""
    if QUIET:
        yield lambda done, total: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task(description, total=total)

        def update(done: int, new_total: int) -> None:
            progress.update(task, completed=done, total=new_total)

        yield update
