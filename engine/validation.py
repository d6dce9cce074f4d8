"""Input checks shared by every interface. Each raises a specific ValidationError naming the value."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from typing import Any

from engine import config
from engine.errors import (
    InvalidContentError,
    InvalidContextError,
    InvalidEdgeError,
    InvalidImportanceError,
    InvalidRecallError,
    InvalidTimeRangeError,
    ValidationError,
)
from engine.models import EdgeType, MemoryKind, Strategy

# What one request may carry, whatever the interface (a memory's content: config.MAX_CONTENT_BYTES).
MAX_CONTEXT_BYTES = 16 * 1024
# Nesting depth of a context object (and of an edge's attrs): deeper JSON is rejected before it is parsed.
MAX_CONTEXT_DEPTH = 32
# Identifiers (memory ids, entity ids, seed ids, edge targets) and cues: a 10 MB cue once took 23 s to embed.
MAX_ID_BYTES = 512
MAX_CUE_BYTES = 16 * 1024


def text(value: object, what: str, max_bytes: int, error: type[ValidationError] = ValidationError) -> str:
    """Text that is valid Unicode, NFC-normalised and at most `max_bytes` of UTF-8.

    A lone surrogate (from JSON `\\ud800`, or an undecodable byte smuggled in by Python's surrogateescape)
    cannot be encoded, stored or printed; it is rejected here so it never reaches the store. NUL is rejected
    too: C libraries downstream truncate at it.
    """
    if not isinstance(value, str):
        raise error(f"{what} must be text, got {type(value).__name__}")
    # Check the size before anything costly: a 10 MB value is refused without being normalised.
    if len(value) > max_bytes:
        raise error(f"{what} is {len(value)} characters; the limit is {max_bytes} bytes of UTF-8")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise error(
            f"{what} is not valid Unicode: a lone surrogate or undecodable byte at position {exc.start}"
        ) from None
    if "\x00" in value:
        raise error(f"{what} contains a NUL character at position {value.index(chr(0))}")
    value = unicodedata.normalize("NFC", value)
    size = len(value.encode("utf-8"))
    if size > max_bytes:
        raise error(f"{what} is {size} bytes; the limit is {max_bytes}")
    return value


# Characters an id must not hold: controls (Cc) corrupt a terminal or a log line; format characters (Cf:
# zero-width space and joiners, soft hyphen, BOM, the bidi overrides and isolates), line and paragraph
# separators and spaces other than U+0020 are invisible or look like something else, so "acme\u200b" would
# be an entity that looks like "acme" and is not.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def identifier(value: object, what: str) -> str:
    """A memory id, entity id or edge target: non-empty text, stripped, at most MAX_ID_BYTES, no control,
    invisible or bidirectional-control characters (look-alike ids)."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} must be a non-empty string, got {short_repr(value)}")
    cleaned = text(value, what, MAX_ID_BYTES).strip()
    for position, char in enumerate(cleaned):
        category = unicodedata.category(char)
        if category in _INVISIBLE_CATEGORIES or (category == "Zs" and char != " "):
            kind = "a control character" if category == "Cc" else "an invisible or bidirectional-control character"
            name = unicodedata.name(char, f"U+{ord(char):04X}")
            raise ValidationError(f"{what} contains {kind} {name} (U+{ord(char):04X}) at position {position}")
    return cleaned


def short_repr(value: object) -> str:
    """`value` for an error message: at most 80 characters; a huge integer by its size (Python refuses to
    print one of more than 4300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > 64:
        return f"an integer of about {int(abs(value).bit_length() * math.log10(2)) + 1} digits"
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def cue(value: object, error: type[ValidationError] = InvalidRecallError) -> str:
    if value is None:
        return ""
    return text(value, "cue", MAX_CUE_BYTES, error)


def content(value: object) -> str:
    checked = text(value, "content", config.MAX_CONTENT_BYTES, InvalidContentError)
    if not checked.strip():
        raise InvalidContentError("content must not be empty")
    return checked


def fit_content(value: str) -> tuple[str, bool]:
    """`value` cut (at a character boundary, with an ellipsis) to what one memory holds, leaving room for
    what ingestion adds around it; and whether it was cut. Ingestion stores long texts instead of refusing them."""
    limit = config.MAX_CONTENT_BYTES - 256
    encoded = value.encode("utf-8")
    if len(encoded) <= limit:
        return value, False
    return encoded[: limit - 3].decode("utf-8", errors="ignore") + "…", True


def number(value: object, what: str, lo: float, hi: float, error: type[ValidationError] = ValidationError) -> float:
    """A finite number in [lo, hi] as a float. Strict: a bool, a numeric string ("0.5") or None is not a
    number (JSON `true` must not become 1.0), and an integer too large for a float (10**400) is refused
    here instead of overflowing later."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(f"{what} must be a number in [{lo:g}, {hi:g}], got {short_repr(value)}")
    try:
        converted = float(value)
    except OverflowError:
        raise error(f"{what} must be a number in [{lo:g}, {hi:g}], got {short_repr(value)}") from None
    if not math.isfinite(converted) or not lo <= converted <= hi:
        raise error(f"{what} must be a number in [{lo:g}, {hi:g}], got {converted:g}")
    return converted


def importance(value: object) -> float:
    if value is None:
        return config.DEFAULT_IMPORTANCE
    return number(value, "importance", 0.0, 1.0, InvalidImportanceError)


def context(value: object, what: str = "context") -> dict[str, Any]:
    """A JSON object at most MAX_CONTEXT_BYTES and MAX_CONTEXT_DEPTH deep, every string valid Unicode (NFC)."""
    if value is None:
        return {}
    if isinstance(value, str):
        text(value, what, MAX_CONTEXT_BYTES, InvalidContextError)
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InvalidContextError(f"{what} is not valid JSON: {exc.msg} at position {exc.pos}") from None
        except (RecursionError, ValueError) as exc:
            raise InvalidContextError(f"{what} is not acceptable JSON: {str(exc)[:120]}") from None
    if not isinstance(value, Mapping):
        raise InvalidContextError(f"{what} must be a JSON object, got {type(value).__name__}")
    cleaned = _json_value(value, what, 1)
    try:
        encoded = json.dumps(cleaned, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidContextError(f"{what} is not JSON-serialisable: {str(exc)[:120]}") from None
    size = len(encoded.encode("utf-8"))
    if size > MAX_CONTEXT_BYTES:
        raise InvalidContextError(f"{what} is {size} bytes; the limit is {MAX_CONTEXT_BYTES}")
    assert isinstance(cleaned, dict)
    return cleaned


def _json_value(value: object, what: str, depth: int) -> object:
    """A copy of a JSON value with every string checked and normalised; raises past MAX_CONTEXT_DEPTH (the
    recursion never goes deeper than the limit, so hostile nesting cannot exhaust the stack)."""
    if isinstance(value, Mapping | list | tuple) and depth > MAX_CONTEXT_DEPTH:
        raise InvalidContextError(f"{what} is nested deeper than {MAX_CONTEXT_DEPTH} levels")
    if isinstance(value, str):
        return text(value, f"a string in {what}", MAX_CONTEXT_BYTES, InvalidContextError)
    if isinstance(value, Mapping):
        out: dict[str, object] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidContextError(f"{what} keys must be strings, got {type(key).__name__}")
            out[text(key, f"a key in {what}", MAX_CONTEXT_BYTES, InvalidContextError)] = _json_value(
                item, what, depth + 1
            )
        return out
    if isinstance(value, list | tuple):
        return [_json_value(item, what, depth + 1) for item in value]
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidContextError(f"{what} holds a non-finite number {value!r}")
        return value
    raise InvalidContextError(f"{what} holds a {type(value).__name__}, which is not JSON")


def entity_id(value: object) -> str | None:
    if value is None:
        return None
    return identifier(value, "entity_id")


# Kinds a caller may give a new memory: a revision is made only by `revise` (it is the old state of a
# memory, linked to it), so a caller-made "revision" would be an orphan that recall and lists hide.
NEW_KINDS = tuple(k for k in MemoryKind if k != MemoryKind.REVISION)


def kind(value: object) -> MemoryKind:
    """A kind to filter by (any kind, revisions included)."""
    try:
        return MemoryKind(value)  # type: ignore[arg-type]
    except ValueError:
        raise ValidationError(
            f"unknown memory kind {short_repr(value)}; expected one of {', '.join(k.value for k in MemoryKind)}"
        ) from None


def new_kind(value: object) -> MemoryKind:
    """The kind of a memory a caller stores: any but `revision`."""
    chosen = kind(value)
    if chosen not in NEW_KINDS:
        raise ValidationError(
            f"kind {chosen.value!r} is made only by revise; a new memory is one of {', '.join(NEW_KINDS)}"
        )
    return chosen


def edge_type(value: object) -> EdgeType:
    try:
        return EdgeType(value)  # type: ignore[arg-type]
    except ValueError:
        raise InvalidEdgeError(
            f"unknown edge type {value!r}; expected one of {', '.join(t.value for t in EdgeType)}"
        ) from None


def strategy(value: object) -> Strategy:
    try:
        return Strategy(value)  # type: ignore[arg-type]
    except ValueError:
        raise InvalidRecallError(
            f"unknown strategy {value!r}; expected one of {', '.join(s.value for s in Strategy)}"
        ) from None


def confidence(value: object) -> float:
    return number(value, "edge confidence", 0.0, 1.0, InvalidEdgeError)


def timestamp(value: object, *, what: str = "time", end_of_day: bool = False) -> datetime:
    """A datetime from a datetime, a date or an ISO 8601 string; naive times are taken as UTC."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime.combine(value, time.max if end_of_day else time.min)
    elif isinstance(value, str):
        stripped = text(value, what, 64, InvalidTimeRangeError).strip()
        try:
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", stripped):
                parsed = datetime.combine(date.fromisoformat(stripped), time.max if end_of_day else time.min)
            else:
                parsed = datetime.fromisoformat(stripped.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise InvalidTimeRangeError(f"{what} is not an ISO 8601 date or date-time: {value!r}") from None
    else:
        raise InvalidTimeRangeError(f"{what} must be an ISO 8601 string, got {type(value).__name__}")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        parsed = parsed.astimezone(UTC)
    except (OverflowError, ValueError):
        parsed = None  # type: ignore[assignment]
    if parsed is None or not config.MIN_YEAR <= parsed.year <= config.MAX_YEAR:
        raise InvalidTimeRangeError(
            f"{what} must fall in the years {config.MIN_YEAR}-{config.MAX_YEAR} (UTC), got {short_repr(value)}"
        )
    return parsed


TimeRange = tuple[datetime | None, datetime | None]
_DATE_RANGE = re.compile(r"(\d{4}-\d{2}-\d{2})?:(\d{4}-\d{2}-\d{2})?")


def time_range(value: object) -> TimeRange | None:
    """`START:END` or `START..END` (either end empty), a 2-sequence, or a {start, end} mapping."""
    if value is None:
        return None
    start: object
    end: object
    if isinstance(value, str):
        text = value.strip()
        if ".." in text:
            start, end = text.split("..", 1)
        elif _DATE_RANGE.fullmatch(text):
            start, end = text.split(":", 1)
        else:
            raise InvalidTimeRangeError(
                f"time range must be START:END (dates) or START..END (date-times), got {value!r}"
            )
    elif isinstance(value, Mapping):
        unknown = set(value) - {"start", "end"}
        if unknown:
            raise InvalidTimeRangeError(f"time range takes start and end, not {', '.join(sorted(unknown))}")
        start, end = value.get("start"), value.get("end")
    elif isinstance(value, list | tuple) and len(value) == 2:
        start, end = value
    else:
        raise InvalidTimeRangeError(f"time range must be START:END or {{start, end}}, got {value!r}")
    lo = None if start in (None, "") else timestamp(start, what="time range start")
    hi = None if end in (None, "") else timestamp(end, what="time range end", end_of_day=True)
    if lo is not None and hi is not None and lo > hi:
        raise InvalidTimeRangeError(f"time range start {lo.isoformat()} is after its end {hi.isoformat()}")
    return (lo, hi)
