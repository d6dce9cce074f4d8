"""The subscription hub both transports share: memories that surface while an agent talks.

A client opens a subscription (gRPC's Subscribe stream, REST's Server-Sent Events), feeds it text as it arrives
(`feed`), and reads pushes. When fed text completes a chunk (engine/subscribe.py: a sentence end, a word count,
or a pause, which the hub's timer notices), the hub recalls associatively on it (similarity, optionally within
one entity's memories) and queues each memory whose similarity reaches the subscription's threshold, never one
it pushed before, with the strategy details that made it surface.

Bounded on every side: subscriptions per API key (`per_key`) and in all (`total`; each open gRPC stream holds
one of the server's worker threads), pushes queued per subscription (a slow reader is told how many were
dropped instead of letting the queue grow), and an idle subscription (nothing fed for `idle_seconds`) is
closed. Closing one (the client's call, a dropped connection, the idle timer, shutdown) frees everything.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.api.subscriptions import FeedRequest, SubscribeRequest
from engine.errors import HebbsError, MemoryNotFoundError, StoreError
from engine.models import RecallResult, Strategy
from engine.subscribe import Chunker, Push, Stream

log = logging.getLogger("hebbs.subscribe")

PER_KEY = 4
TOTAL = 8  # below the gRPC server's worker threads (interfaces/grpc/server.py GRPC_WORKERS), so Feed always runs
IDLE_SECONDS = 300.0
TICK_SECONDS = 0.05  # how often the timer looks for paused chunks and idle subscriptions
RECALL_TOP_K = 20

# (tenant, chunk, entity) -> similarity results among the tenant's memories, best first
Surface = Callable[[str, str, str | None], list[RecallResult]]


class TooManySubscriptionsError(HebbsError):
    """A key (or the server) has as many open subscriptions as it may: close one first."""


@dataclass
class Subscription:
    """One open subscription: its rules, its chunker and its queue; `listeners` are woken after each change."""

    id: int
    owner: str
    tenant: str  # whose memories surface: the tenant it was opened for, whoever feeds it
    request: SubscribeRequest
    chunker: Chunker
    stream: Stream[RecallResult]
    last_fed: float
    closed: bool = False
    listeners: list[Callable[[], None]] = field(default_factory=list)

    def take(self) -> list[Push[RecallResult]]:
        """The queued pushes, oldest first."""
        return self.stream.take()

    def offer(self, found: list[RecallResult]) -> bool:
        """Queue the results over the threshold not pushed before; True if a reader should look (something
        was queued or dropped)."""
        dropped = self.stream.dropped
        queued = self.stream.offer((r.memory.id, r, _similarity(r)) for r in found)
        return bool(queued) or self.stream.dropped > dropped

    def wake(self) -> None:
        for listener in list(self.listeners):
            try:
                listener()
            except Exception:  # noqa: BLE001 - a listener of a closed loop must not stop the others
                log.debug("a subscription listener failed", exc_info=True)


class SubscriptionHub:
    """Open, feed, read and close subscriptions; a timer thread completes paused chunks and closes idle ones."""

    def __init__(self, surface: Surface, *, per_key: int = PER_KEY, total: int = TOTAL,
                 idle_seconds: float = IDLE_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._surface, self.per_key, self.total, self.idle_seconds = surface, per_key, total, idle_seconds
        self._clock = clock
        self._open: dict[int, Subscription] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._timer = threading.Thread(target=self._tick, name="hebbs-subscriptions", daemon=True)
        self._timer.start()

    @staticmethod
    def owner_of(key: str | None) -> str:
        """Who owns a subscription: a digest of the API key (never the key itself), or "" without auth."""
        return hashlib.sha256(key.encode()).hexdigest()[:16] if key else ""

    def open(self, owner: str, request: SubscribeRequest, tenant: str) -> Subscription:
        with self._lock:
            if self._stopped.is_set():
                raise StoreError("the server is shutting down; subscribe to its successor")
            if len(self._open) >= self.total:
                raise TooManySubscriptionsError(f"the server has {self.total} subscriptions open, its limit: "
                                                "close one or retry later")
            mine = sum(1 for s in self._open.values() if s.owner == owner)
            if mine >= self.per_key:
                raise TooManySubscriptionsError(f"this key has {mine} subscriptions open, its limit: close one first")
            sub = Subscription(next(self._ids), owner, tenant, request, Chunker(request.rule, self._clock),
                               Stream(request.confidence_threshold, request.queue_size), self._clock())
            self._open[sub.id] = sub
        return sub

    def get(self, subscription_id: int, owner: str) -> Subscription:
        """An open subscription of this owner (another key's is as unknown as a closed one)."""
        with self._lock:
            sub = self._open.get(subscription_id)
        if sub is None or sub.owner != owner:
            raise MemoryNotFoundError(f"no open subscription {subscription_id}")
        return sub

    def feed(self, subscription_id: int, owner: str, request: FeedRequest) -> None:
        """Feed text; the chunks it completes are recalled on before this returns (their pushes are queued)."""
        sub = self.get(subscription_id, owner)
        sub.last_fed = self._clock()
        for chunk in sub.chunker.feed(request.text):
            self._recall(sub, chunk)

    def close(self, subscription_id: int, owner: str | None = None) -> bool:
        """Close a subscription (with `owner`, only that owner's); True if one was open. Its readers end."""
        with self._lock:
            sub = self._open.get(subscription_id)
            if sub is None or (owner is not None and sub.owner != owner):
                return False
            del self._open[subscription_id]
        sub.closed = True
        sub.wake()
        return True

    def count(self) -> int:
        with self._lock:
            return len(self._open)

    def shutdown(self) -> None:
        """Close every subscription (their streams end: a server stopping must not wait on them) and refuse
        new ones."""
        self._stopped.set()
        with self._lock:
            ids = list(self._open)
        for subscription_id in ids:
            self.close(subscription_id)
        if self._timer is not threading.current_thread():
            self._timer.join(timeout=5)

    def _recall(self, sub: Subscription, chunk: str) -> None:
        if sub.offer(self._surface(sub.tenant, chunk, sub.request.entity_id)):
            sub.wake()

    def _tick(self) -> None:
        while not self._stopped.wait(TICK_SECONDS):
            now = self._clock()
            with self._lock:
                subs = list(self._open.values())
            for sub in subs:
                if now - sub.last_fed >= self.idle_seconds:
                    self.close(sub.id)
                    continue
                chunk = sub.chunker.due()
                if chunk:
                    try:
                        self._recall(sub, chunk)
                    except Exception:  # noqa: BLE001 - one failing recall (store closing) must not stop the timer
                        log.warning("a paused chunk's recall failed for subscription %s", sub.id, exc_info=True)


def _similarity(result: RecallResult) -> float:
    """A pushed memory's confidence: its cosine similarity to the chunk, as the similarity strategy (or, for a
    memory found on an entity's timeline, the temporal strategy scoring by the same cosine) measured it."""
    cosines = [d.relevance for d in result.strategy_details if d.strategy in (Strategy.SIMILARITY, Strategy.TEMPORAL)]
    return max(cosines, default=0.0)
