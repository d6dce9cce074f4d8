"""A request field's one declaration: besides its name, type and default (the request dataclass), what it means
and its JSON shape. Transports build their bodies and schemas from these (the REST bodies and the OpenAPI
schema: interfaces/http/schemas.py), so a field is declared once, in `engine.api.requests`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from engine import config

_KEY = "wire"


@dataclass(frozen=True, slots=True)
class Wire:
    """How a field travels as JSON: `shape` is a Python type (`float | None`) or a JSON schema (a dict);
    `doc` says what it means. Values are passed to the request's `parse` unchanged, whatever the shape says."""

    shape: Any
    doc: str | None = None
    examples: tuple[Any, ...] = ()


def wire(shape: Any, doc: str | None = None, *, default: Any = MISSING, examples: tuple[Any, ...] = ()) -> Any:
    """A dataclass field that travels on the wire (`default` as in `dataclasses.field`)."""
    meta = {_KEY: Wire(shape, doc, examples)}
    return field(metadata=meta) if default is MISSING else field(default=default, metadata=meta)


def wire_fields(request_type: type) -> list[tuple[str, Wire]]:
    """The fields of a request type that travel on the wire, in declaration order."""
    return [(f.name, f.metadata[_KEY]) for f in fields(request_type) if _KEY in f.metadata]


TIME_RANGE_HELP = "START:END dates or START..END date-times (either end may be empty), or [start, end]."

WEIGHTS_SHAPE: Mapping[str, Any] = {
    "anyOf": [
        {"type": "object", "description": "The four weights of the composite score; any left out keep their "
         "default.", "properties": {name: {"type": "number", "example": value}
                                    for name, value in config.DEFAULT_SCORING_WEIGHTS.items()}},
        {"type": "string", "description": "R:T:I:F"},
        {"type": "null"},
    ]
}
_EDGE_SHAPE = {
    "type": "object",
    "properties": {
        "target": {"type": "string"},
        "type": {"type": "string", "description": "caused_by, followed_by, related_to, entity_relation, "
                 "proposition_of, ..."},
        "confidence": {"type": "number"},
    },
    "required": ["target", "type"],
}
EDGE_SPECS_SHAPE: Mapping[str, Any] = {"type": "array", "items": {"anyOf": [_EDGE_SHAPE, {"type": "string"}]}}


def wire_field(request_type: type, name: str) -> tuple[Wire, Any]:
    """A request field's wire declaration and its default (MISSING when it has none): what a CLI option or a
    form reads instead of declaring the field again."""
    for f in fields(request_type):
        if f.name == name and _KEY in f.metadata:
            return f.metadata[_KEY], f.default
    raise KeyError(f"{request_type.__name__} has no wire field {name!r}")
