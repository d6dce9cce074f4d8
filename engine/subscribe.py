"""Memories that surface while an agent talks: text fed in pieces, recalled in chunks, each memory once.

A `Chunker` turns text that arrives in arbitrary pieces (tokens, words, lines) into chunks worth a recall:
a chunk is complete at a sentence end, once it holds `max_tokens` words, or when nothing was fed for
`pause_seconds`. A `Stream` keeps one subscription's state: its threshold, the memories it already pushed
(never the same twice) and a bounded queue of pushes; a reader too slow to keep up is told how many pushes
were dropped instead of letting the queue grow. Transports (gRPC's Subscribe stream, REST's Server-Sent
Events) own the threads and the recall; this module owns the rules.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from engine.errors import ValidationError

DEFAULT_THRESHOLD = 0.5  # the official SDK's default confidence threshold
DEFAULT_MAX_TOKENS = 40
DEFAULT_PAUSE_SECONDS = 1.5
DEFAULT_QUEUE = 64
MAX_CHUNK_CHARS = 4_000  # a chunk is cut here whatever the rule, so one recall never embeds a whole book

_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?:\s+|$)")

T = TypeVar("T")


class InvalidSubscriptionError(ValidationError):
    """A subscription's settings are out of range (threshold, chunk rule, queue size)."""


@dataclass(frozen=True)
class ChunkRule:
    """When fed text becomes a chunk: at a sentence end (if `sentence_end`), at `max_tokens` words, or
    after `pause_seconds` without input."""

    sentence_end: bool = True
    max_tokens: int = DEFAULT_MAX_TOKENS
    pause_seconds: float = DEFAULT_PAUSE_SECONDS

    def __post_init__(self) -> None:
        _check("max_tokens", self.max_tokens, 1, 2_000, whole=True)
        _check("pause_seconds", self.pause_seconds, 0.001, 3_600)


class Chunker:
    """Collects fed text and hands out complete chunks (thread-safe: feeds and the pause timer may race)."""

    def __init__(self, rule: ChunkRule | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.rule = rule or ChunkRule()
        self._clock = clock
        self._pending = ""
        self._last_feed = clock()
        self._lock = threading.Lock()

    def feed(self, text: str) -> list[str]:
        """Add text; the chunks it completed, in order."""
        with self._lock:
            self._pending += text
            self._last_feed = self._clock()
            return self._take_complete()

    def due(self) -> str | None:
        """The pending text as a chunk if nothing was fed for the pause; None otherwise."""
        with self._lock:
            if self._pending.strip() and self._clock() - self._last_feed >= self.rule.pause_seconds:
                return self._take_all()
            return None

    def flush(self) -> str | None:
        """Whatever is pending, as a last chunk (on close)."""
        with self._lock:
            return self._take_all()

    def _take_complete(self) -> list[str]:
        chunks: list[str] = []
        while True:
            cut = self._cut()
            if cut is None:
                return chunks
            chunk, self._pending = self._pending[:cut].strip(), self._pending[cut:]
            if chunk:
                chunks.append(chunk)

    def _cut(self) -> int | None:
        """Where the first complete chunk of the pending text ends, or None."""
        if self.rule.sentence_end:
            match = _SENTENCE_END.search(self._pending)
            if match is not None and self._pending[: match.start()].strip():
                return match.end()
        words = list(re.finditer(r"\S+", self._pending))
        if len(words) > self.rule.max_tokens:  # the next word has begun, so the first max_tokens are whole
            return words[self.rule.max_tokens - 1].end()
        if len(self._pending) > MAX_CHUNK_CHARS:
            return MAX_CHUNK_CHARS
        return None

    def _take_all(self) -> str | None:
        chunk, self._pending = self._pending.strip(), ""
        return chunk or None


@dataclass
class Push(Generic[T]):
    """One memory pushed to a subscriber, numbered in the subscription's order."""

    sequence: int
    item: T
    confidence: float


@dataclass
class Stream(Generic[T]):
    """One subscription's state: what it pushed, what waits to be read, and what was dropped."""

    threshold: float = DEFAULT_THRESHOLD
    queue_size: int = DEFAULT_QUEUE
    seen: set[str] = field(default_factory=set)
    dropped: int = 0
    _queue: deque[Push[T]] = field(default_factory=deque)
    _sequence: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        _check("confidence_threshold", self.threshold, 0.0, 1.0)
        _check("the push queue size", self.queue_size, 1, 10_000, whole=True)

    def offer(self, found: Iterable[tuple[str, T, float]]) -> list[Push[T]]:
        """Queue each (memory id, item, confidence) over the threshold not pushed before; the pushes queued.
        When the queue is full, the rest are dropped and counted (`dropped`), not queued."""
        queued: list[Push[T]] = []
        with self._lock:
            for memory_id, item, confidence in found:
                if confidence < self.threshold or memory_id in self.seen:
                    continue
                if len(self._queue) >= self.queue_size:
                    self.dropped += 1
                    continue
                self.seen.add(memory_id)
                self._sequence += 1
                push = Push(self._sequence, item, confidence)
                self._queue.append(push)
                queued.append(push)
        return queued

    def pending(self) -> int:
        """How many pushes wait to be read."""
        with self._lock:
            return len(self._queue)

    def take(self, limit: int | None = None) -> list[Push[T]]:
        """Remove and return up to `limit` queued pushes, oldest first."""
        with self._lock:
            count = len(self._queue) if limit is None else min(limit, len(self._queue))
            return [self._queue.popleft() for _ in range(count)]


def _check(name: str, value: object, low: float, high: float, whole: bool = False) -> None:
    kinds = int if whole else int | float
    if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:  # NaN fails too
        kind = "a whole number" if whole else "a number"
        raise InvalidSubscriptionError(f"{name} must be {kind} from {low:g} to {high:g}, got {value!r}")
