"""The requests of a subscription (the official SDK's SubscribeService): open one, feed it text.

They are not engine operations (`MemoryEngine.handle` has no subscriptions: a subscription lives in a server,
interfaces/subscriptions.py), but like every request they are parsed here, once, whichever transport brought
them, and their fields are declared once (REST bodies and the OpenAPI schema come from them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self

from engine import validation
from engine.api.fields import wire
from engine.subscribe import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PAUSE_SECONDS,
    DEFAULT_QUEUE,
    DEFAULT_THRESHOLD,
    ChunkRule,
    InvalidSubscriptionError,
    Stream,
)

MAX_FEED_BYTES = 64 * 1024  # one feed; a chunk is cut at engine.subscribe.MAX_CHUNK_CHARS anyway


def _fields_of(raw: object, op: str, names: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise InvalidSubscriptionError(f"{op} request must be an object of fields, got {type(raw).__name__}")
    unknown = sorted(str(k) for k in raw if k not in names)
    if unknown:
        raise InvalidSubscriptionError(f"unknown field(s) for {op}: {', '.join(unknown)}; expected {', '.join(names)}")
    return dict(raw)


@dataclass(frozen=True, slots=True)
class SubscribeRequest:
    """A subscription: which memories may surface (an entity's, over a confidence) and when fed text becomes a
    chunk to recall on."""

    OP: ClassVar[str] = "subscribe"
    entity_id: str | None = wire(str | None, "Only this entity's memories surface.", default=None)
    confidence_threshold: float = wire(
        float | None, "0-1: a memory surfaces when its similarity to a chunk reaches this (the SDK's default 0.5).",
        default=DEFAULT_THRESHOLD)
    sentence_end: bool = wire(bool | None, "A sentence end completes a chunk.", default=True)
    max_tokens: int = wire(int | None, "A chunk is complete at this many words.", default=DEFAULT_MAX_TOKENS)
    pause_seconds: float = wire(float | None, "A chunk is complete when nothing was fed for this long.",
                                default=DEFAULT_PAUSE_SECONDS)
    queue_size: int = wire(int | None, "Pushes kept for a slow reader; beyond it they are dropped and counted.",
                           default=DEFAULT_QUEUE)

    @property
    def rule(self) -> ChunkRule:
        return ChunkRule(self.sentence_end, self.max_tokens, self.pause_seconds)

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None = None) -> Self:
        values = _fields_of(raw or {}, cls.OP, tuple(f.name for f in fields(cls)))
        given = {k: v for k, v in values.items() if v is not None}
        sentence_end = given.get("sentence_end", True)
        if not isinstance(sentence_end, bool):
            raise InvalidSubscriptionError(f"sentence_end must be true or false, got {sentence_end!r}")
        request = cls(
            entity_id=validation.entity_id(given.get("entity_id")),
            confidence_threshold=given.get("confidence_threshold", DEFAULT_THRESHOLD),
            sentence_end=sentence_end,
            max_tokens=given.get("max_tokens", DEFAULT_MAX_TOKENS),
            pause_seconds=given.get("pause_seconds", DEFAULT_PAUSE_SECONDS),
            queue_size=given.get("queue_size", DEFAULT_QUEUE),
        )
        request.rule  # noqa: B018 - validates the chunk rule's numbers
        Stream(request.confidence_threshold, request.queue_size)  # validates the threshold and the queue size
        return request


@dataclass(frozen=True, slots=True)
class FeedRequest:
    """Text for an open subscription, as it arrives (a token, a word, a line)."""

    OP: ClassVar[str] = "feed"
    text: str = wire(str, "Text as it arrives; chunks are cut by the subscription's rule.")

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        values = _fields_of(raw, cls.OP, ("text",))
        text = values.get("text")
        if not isinstance(text, str):
            raise InvalidSubscriptionError(f"text must be a string, got {validation.short_repr(text)}")
        return cls(validation.text(text, "text", MAX_FEED_BYTES, InvalidSubscriptionError))
