"""Page inputs that survive page switches and reloads: kept in `st.session_state` and in the URL query string.

Streamlit forgets a widget's value when its page is not drawn, and a reload starts a new session. Each page
declares its inputs as `Field`s; `restore` (before the widgets are drawn) fills a missing widget value from
this session's saved copy, else from the URL; `publish` (after) saves the copies and writes the non-default
values to the URL, so the address bar always holds a link to the current view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import streamlit as st

KEEP_PREFIX = "_keep_"
ACTIVE_PAGE = "_urlstate_page"
PAGE_PATH = "_urlstate_path"  # the url path of the page this run draws (set by the app)
QUERY_PREFIX = "_urlstate_query_"


def _text(raw: list[str]) -> str | None:
    return raw[-1] if raw else None


def _number(kind: Callable[[str], Any]) -> Callable[[list[str]], Any]:
    def parse(raw: list[str]) -> Any:
        if not raw:
            return None
        try:
            return kind(raw[-1])
        except ValueError:
            return None

    return parse


def _day(raw: list[str]) -> date | None:
    if not raw:
        return None
    try:
        return date.fromisoformat(raw[-1])
    except ValueError:
        return None


def _days(raw: list[str]) -> tuple[date, ...] | None:
    days = [d for d in (_day([r]) for r in raw) if d is not None]
    return tuple(days) if days else None


def _bool(raw: list[str]) -> bool | None:
    return None if not raw else raw[-1] in ("1", "true", "yes")


PARSERS: dict[str, Callable[[list[str]], Any]] = {
    "str": _text,
    "int": _number(int),
    "float": _number(float),
    "list": lambda raw: list(raw),
    "date": _day,
    "dates": _days,
    "bool": _bool,
}


def _encode(value: Any) -> list[str]:
    """A value as the query string's repeated values (empty: leave it out)."""
    if value is None or value == "":
        return []
    if isinstance(value, bool):
        return ["1" if value else "0"]
    if isinstance(value, date):
        return [value.isoformat()]
    if isinstance(value, list | tuple):
        return [v.isoformat() if isinstance(v, date) else str(v) for v in value]
    if isinstance(value, float):
        return [f"{value:g}"]
    return [str(value)]


@dataclass(frozen=True)
class Field:
    """One page input: its widget key, its name in the URL, how to read it back, and which values are valid."""

    key: str
    param: str
    kind: str = "str"
    choices: Callable[[], Sequence[Any]] | None = None  # when given, a URL value outside it is ignored

    def parse(self, raw: list[str]) -> Any:
        value = PARSERS[self.kind](raw)
        if value is None or self.choices is None:
            return value
        allowed = list(self.choices())
        if isinstance(value, list):
            kept = [v for v in value if v in allowed]
            return kept or None
        return value if value in allowed else None


def restore(page: str, fields: Iterable[Field]) -> None:
    """Give each widget its value back before it is drawn: this session's copy first, else the URL's.

    On entering `page` from another page (or a new session) the saved values win over whatever Streamlit
    left behind; on a rerun of the same page the widgets' own values stand.
    """
    entering = st.session_state.get(ACTIVE_PAGE) != page
    st.session_state[ACTIVE_PAGE] = page
    for f in fields:
        keep = KEEP_PREFIX + f.key
        if keep in st.session_state:
            if entering or f.key not in st.session_state:
                st.session_state[f.key] = st.session_state[keep]
            continue
        if f.key in st.session_state and not entering:
            continue
        raw = st.query_params.get_all(f.param)
        value = f.parse(raw) if raw else None
        if value is not None:
            st.session_state[f.key] = value


def publish(fields: Iterable[Field], defaults: dict[str, Any] | None = None) -> None:
    """Save each input's value for the next visit and mirror the non-default ones in the URL (which then
    holds this page's inputs only).

    The URL is written at most once per run, and only when it changes: every write is a browser history
    entry, and one user action must add at most one.
    """
    defaults = defaults or {}
    wanted: dict[str, list[str]] = {}
    for f in fields:
        if f.key not in st.session_state:
            continue
        value = st.session_state[f.key]
        st.session_state[KEEP_PREFIX + f.key] = value
        encoded = [] if f.key in defaults and value == defaults[f.key] else _encode(value)
        if encoded:
            wanted[f.param] = encoded
    current = {name: st.query_params.get_all(name) for name in st.query_params}
    if wanted != current:
        st.query_params.from_dict({k: v if len(v) > 1 else v[0] for k, v in wanted.items()})
    if path := st.session_state.get(PAGE_PATH):
        st.session_state[QUERY_PREFIX + path] = wanted


def link_query(url_path: str) -> dict[str, list[str]]:
    """The query a page last published: navigation links carry it, so the page opens on the inputs it had
    and the address bar holds them from the start."""
    saved = st.session_state.get(QUERY_PREFIX + url_path)
    return dict(saved) if isinstance(saved, dict) else {}


def forget(fields: Iterable[Field]) -> None:
    """Drop saved copies (e.g. when the inputs no longer apply after a change to the store)."""
    for f in fields:
        st.session_state.pop(KEEP_PREFIX + f.key, None)
