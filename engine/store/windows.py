"""Context windows of the lexical index, whatever the backend: which memories make up each memory's window
and the text it is indexed as (engine/store/sqlite/fulltext.py says why windows exist).

A window is a memory with its `followed_by` neighbours within `config.WINDOW_RADIUS` steps whose context
names the same episode (`config.EPISODE_KEYS`), in time order; a conversation message's window starts with
the day it was said. A backend gives the links and texts (`WindowSource`); everything else is here, so every
store indexes the same windows and scores them alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from engine import config

Text = tuple[str, int, dict[str, Any]]  # (content, created_at in microseconds, context)


class WindowSource(Protocol):
    """What window building reads of a store, inside the write's transaction."""

    def followed_by(self, ids: Iterable[str]) -> dict[str, set[str]]:
        """Both directions of the `followed_by` edges touching the given memories."""
        ...

    def texts(self, ids: Sequence[str]) -> dict[str, Text]:
        """(content, created_at, context) of the given memories that exist and are not revisions."""
        ...


def episode_key(context: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two linked memories part of one episode: the same values of `config.EPISODE_KEYS`."""
    return tuple(json.dumps(context.get(k), sort_keys=True, separators=(",", ":")) for k in config.EPISODE_KEYS)


class Links:
    """`followed_by` adjacency fetched on demand and kept for one transaction: a window refresh walks the
    same neighbourhood more than once (who is affected, then each affected memory's window), and a bulk
    `add_edges` of a long chain would otherwise query every link several times."""

    def __init__(self, source: WindowSource) -> None:
        self.source = source
        self.adjacent: dict[str, set[str]] = {}  # complete neighbour sets of the memories fetched so far

    def of(self, ids: Iterable[str]) -> dict[str, set[str]]:
        missing = [i for i in set(ids) if i not in self.adjacent]
        if missing:
            found = self.source.followed_by(missing)
            for i in missing:
                self.adjacent[i] = found.get(i, set())
        return self.adjacent


def within(links: Links, ids: Iterable[str], radius: int) -> set[str]:
    """The memories within `radius` followed_by steps of the given ones (themselves included)."""
    reached = set(ids)
    frontier = set(reached)
    for _ in range(radius):
        if not frontier:
            break
        adjacent = links.of(frontier)
        frontier = {n for i in frontier for n in adjacent[i]} - reached
        reached |= frontier
    return reached


def windows(links: Links, ids: Sequence[str]) -> tuple[dict[str, list[str]], dict[str, Text]]:
    """Each memory's window (itself and its same-episode followed_by neighbours, in time order) and the
    texts of every memory in them."""
    radius = config.WINDOW_RADIUS
    area = within(links, ids, radius)
    texts = links.source.texts(sorted(area))
    keys = {i: episode_key(t[2]) for i, t in texts.items()}
    # `within` fetched the links of every memory closer than `radius` to one of `ids`: all a window needs.
    adjacent = links.adjacent
    out: dict[str, list[str]] = {}
    for i in ids:
        if i not in texts:
            continue
        key = keys[i]
        members, frontier = {i}, {i}
        for _ in range(radius):
            frontier = {
                n for m in frontier for n in adjacent.get(m, ())
                if n in texts and n not in members and keys[n] == key
            }
            members |= frontier
        out[i] = sorted(members, key=lambda m: (texts[m][1], m))
    return out, texts


def date_line(created_at: int, context: dict[str, Any]) -> str:
    """The day a conversation message was said, written out ("8 May 2023"), for its window: a cue that
    names the month or year of a chat then matches it. Empty for other memories, whose creation time is
    when they were stored, not when their content happened."""
    if "conversation" not in context:
        return ""
    day = datetime.fromtimestamp(created_at / 1_000_000, UTC)
    return f"{day.day} {day:%B %Y}"


def window_body(texts: dict[str, Text], memory_id: str, members: list[str]) -> str:
    """The text a window is indexed as: its members' contents in order, after the date line if any."""
    _, created_at, context = texts[memory_id]
    lines = [texts[m][0] for m in members]
    date = date_line(created_at, context)
    return "\n".join([date, *lines] if date else lines)
