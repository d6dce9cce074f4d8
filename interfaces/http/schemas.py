"""Request bodies as the OpenAPI schema shows them, built from the engine's request types (`engine.api`).

Each field is declared once, on its request dataclass (`engine.api.fields.wire`: its JSON shape and what it
means); a body here is that request's wire fields, plus the official SDK's names for some of them. The
fields are documented with their JSON types but validated by nobody here: each is passed to the engine
exactly as the client sent it, so the engine's `parse` is the one validation and a REST client gets the
same error as the CLI and the Python API. Pydantic's lax coercion would otherwise turn `"importance": true`
into 1.0, `"0.5"` into 0.5 and `"top_k": true` into 1. Unknown fields are passed on and refused there too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, WithJsonSchema, create_model

from engine.api.fields import EDGE_SPECS_SHAPE, Wire, wire_fields
from engine.api.requests import (
    ForgetRequest,
    IngestRequest,
    PrimeRequest,
    RecallRequest,
    RememberManyRequest,
    RememberRequest,
    RescoreRequest,
    ReviseRequest,
    SetPolicyRequest,
    SweepRequest,
)
from engine.api.reviews import ContradictionCommitRequest, ReflectCommitRequest, ReflectRequest
from engine.api.subscriptions import FeedRequest, SubscribeRequest


class Body(BaseModel):
    model_config = ConfigDict(extra="allow")

    def fields(self) -> dict[str, Any]:
        """What the client sent (defaults left to the engine), unknown fields included."""
        return self.model_dump(exclude_unset=True)


def _passed_on(shape: Any) -> Any:
    """Any JSON value, passed on unchanged, documented with `shape`'s JSON schema."""
    schema = dict(shape) if isinstance(shape, Mapping) else TypeAdapter(shape).json_schema()
    return Annotated[Any, WithJsonSchema(schema)]


def _body(name: str, doc: str | None, *requests: type, aliases: Mapping[str, Wire] | None = None,
          required: tuple[str, ...] = ()) -> type[Body]:
    """The body of a route: the wire fields of `requests` (then `aliases`, the SDK's names), each optional
    unless `required`."""
    declared: dict[str, Any] = {}
    for request in requests:
        for field_name, w in wire_fields(request):
            declared[field_name] = w
    declared.update(aliases or {})
    model_fields: dict[str, Any] = {
        field_name: (
            _passed_on(w.shape),
            Field(
                ... if field_name in required else None,
                description=w.doc,
                examples=list(w.examples) if w.examples else None,
            ),
        )
        for field_name, w in declared.items()
    }
    model: type[Body] = create_model(name, __base__=Body, __doc__=doc, **model_fields)
    return model


if TYPE_CHECKING:  # for a type checker each body is a `Body`; at run time each is built from its requests
    MemoryBody = Body
    ReviseBody = Body
    ForgetBody = Body
    RecallBody = Body
    PrimeBody = Body
    RescoreBody = Body
    IndexBody = Body
    PolicyBody = Body
    SweepBody = Body
    SubscribeBody = Body
    FeedBody = Body
    ReflectBody = Body
    ReflectCommitBody = Body
    VerdictsBody = Body
else:
    MemoryBody = _body(
        "MemoryBody", "One memory to remember, or `items` (a list of them) to remember a batch atomically.",
        RememberRequest, RememberManyRequest,
    )
    ReviseBody = _body("ReviseBody", None, ReviseRequest)
    ForgetBody = _body("ForgetBody", None, ForgetRequest,
                       aliases={"ids": Wire(list[str] | None, "The official SDK's name for memory_ids.")})
    RecallBody = _body("RecallBody", None, RecallRequest,
                       aliases={"strategy": Wire(str | None, "One strategy (the official REST client's field).")})
    PrimeBody = _body("PrimeBody", None, PrimeRequest, aliases={
        "similarity_cue": Wire(str | None, "The official SDK's name for cue."),
        "max_memories": Wire(int | None, "The official SDK's name for top_k."),
    })
    RescoreBody = _body("RescoreBody", None, RescoreRequest, required=("results",))
    IndexBody = _body("IndexBody", None, IngestRequest, required=("paths",))
    PolicyBody = _body("PolicyBody", "The policy values to change; the others are kept.", SetPolicyRequest)
    SweepBody = _body("SweepBody", None, SweepRequest)
    SubscribeBody = _body("SubscribeBody", None, SubscribeRequest)
    FeedBody = _body("FeedBody", None, FeedRequest, required=("text",))
    ReflectBody = _body("ReflectBody", "The scope: an entity (default: every memory) and a start time.", ReflectRequest)
    ReflectCommitBody = _body("ReflectCommitBody", None, ReflectCommitRequest, required=("session_id", "insights"))
    VerdictsBody = _body("VerdictsBody", None, ContradictionCommitRequest, required=("verdicts",))


class EdgesBody(Body):
    # Edges from the memory in the path, given as a remembered memory's `edges` are.
    edges: Annotated[Any, WithJsonSchema(dict(EDGE_SPECS_SHAPE))]
