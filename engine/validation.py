"""Input checks shared by every interface. Each raises a specific ValidationError naming the value."""

from __future__ import annotations

import json
import math
import re
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


def content(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidContentError(f"content must be text, got {type(value).__name__}")
    if not value.strip():
        raise InvalidContentError("content must not be empty")
    size = len(value.encode("utf-8"))
    if size > config.MAX_CONTENT_BYTES:
        raise InvalidContentError(f"content is {size} bytes; the limit is {config.MAX_CONTENT_BYTES}")
    return value


def importance(value: object) -> float:
    if value is None:
        return config.DEFAULT_IMPORTANCE
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidImportanceError(f"importance must be a number in [0, 1], got {value!r}")
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidImportanceError(f"importance must be in [0, 1], got {value:g}")
    return float(value)


def context(value: object) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InvalidContextError(f"context is not valid JSON: {exc.msg} at position {exc.pos}") from None
    if not isinstance(value, Mapping):
        raise InvalidContextError(f"context must be a JSON object, got {type(value).__name__}")
    try:
        encoded = json.dumps(value, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidContextError(f"context is not JSON-serialisable: {exc}") from None
    size = len(encoded.encode("utf-8"))
    if size > config.MAX_CONTEXT_BYTES:
        raise InvalidContextError(f"context is {size} bytes; the limit is {config.MAX_CONTEXT_BYTES}")
    return dict(value)


def entity_id(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"entity_id must be a non-empty string, got {value!r}")
    return value.strip()


def kind(value: object) -> MemoryKind:
    try:
        return MemoryKind(value)  # type: ignore[arg-type]
    except ValueError:
        raise ValidationError(
            f"unknown memory kind {value!r}; expected one of {', '.join(k.value for k in MemoryKind)}"
        ) from None


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
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidEdgeError(f"edge confidence must be a number in [0, 1], got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise InvalidEdgeError(f"edge confidence must be in [0, 1], got {value:g}")
    return float(value)


def timestamp(value: object, *, what: str = "time", end_of_day: bool = False) -> datetime:
    """A datetime from a datetime, a date or an ISO 8601 string; naive times are taken as UTC."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime.combine(value, time.max if end_of_day else time.min)
    elif isinstance(value, str):
        text = value.strip()
        try:
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
                parsed = datetime.combine(date.fromisoformat(text), time.max if end_of_day else time.min)
            else:
                parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise InvalidTimeRangeError(f"{what} is not an ISO 8601 date or date-time: {value!r}") from None
    else:
        raise InvalidTimeRangeError(f"{what} must be an ISO 8601 string, got {type(value).__name__}")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


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
