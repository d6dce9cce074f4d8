"""The one service object both transports share: the engine, the API keys and the read/write lock.

REST and gRPC handlers are thin: they turn their wire format into an operation name and a mapping,
call `HebbsService.call`, and turn the response (or the `HebbsError`) back into their wire format with
`interfaces.errors`. Reads run in parallel; writes run one at a time and never while a read is running,
so no request ever sees a memory half-written to the record store and the indexes.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from engine import config, validation
from engine.api import REQUESTS, MemoriesResponse, RecallRequest, RecallResponse, RememberManyRequest, parse_request
from engine.api.reviews import WRITE_OPS as review_writes
from engine.decay import stamp
from engine.errors import HebbsError, StoreError, ValidationError
from engine.facade import MemoryEngine
from engine.models import Memory, RecallResult
from engine.tenancy import DEFAULT_TENANT, tenant_name
from engine.tenants import Tenants
from interfaces.auth import AuthenticationError, ConflictError, KeyRing, PermissionRefusedError
from interfaces.subscriptions import RECALL_TOP_K, SubscriptionHub

try:
    VERSION = version("hebbs-workbench")
except PackageNotFoundError:  # pragma: no cover - running from a plain checkout
    VERSION = "0"

log = logging.getLogger("hebbs.service")

# Operations that change the store; everything else is a read (a recall's access count is one atomic
# UPDATE in the record store, so concurrent recalls need no writer lock to count exactly).
WRITE_OPERATIONS = frozenset({"remember", "remember_many", "revise", "forget", "add_edges", "ingest", "set_policy",
                              "sweep"}) | review_writes
assert set(REQUESTS) >= WRITE_OPERATIONS


class ReadWriteLock:
    """Many readers or one writer. A waiting writer blocks new readers, so writes are not starved; and when
    a writer finishes, the readers already waiting go before the next writer, so a run of writes (a large
    batch committed chunk by chunk) does not starve reads either. The writer's own thread may take either
    side again (an idempotent write runs `call` under its lock)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._readers_waiting = 0
        self._readers_turn = False  # set when a writer leaves with readers waiting
        self._writer: int | None = None  # the thread holding the writer side
        self._writers_waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        if self._writer == threading.get_ident():
            yield
            return
        with self._cond:
            self._readers_waiting += 1
            while self._writer is not None or (self._writers_waiting and not self._readers_turn):
                self._cond.wait()
            self._readers_waiting -= 1
            if not self._readers_waiting:
                self._readers_turn = False
                self._cond.notify_all()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def reading_if_free(self) -> Iterator[bool]:
        """A reader's share if one is free right now (yields True), else no share at once (yields False)."""
        with self._cond:
            free = self._writer is None and not self._writers_waiting
            if free:
                self._readers += 1
        try:
            yield free
        finally:
            if free:
                with self._cond:
                    self._readers -= 1
                    if not self._readers:
                        self._cond.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        if self._writer == threading.get_ident():
            yield
            return
        with self._cond:
            self._writers_waiting += 1
            while self._writer is not None or self._readers or self._readers_turn:
                self._cond.wait()
            self._writers_waiting -= 1
            self._writer = threading.get_ident()
        try:
            yield
        finally:
            with self._cond:
                self._writer = None
                self._readers_turn = self._readers_waiting > 0
                self._cond.notify_all()


class PartialWriteError(StoreError):
    """A served batch larger than one chunk failed after some chunks were committed: `stored` says which."""

    def __init__(self, message: str, stored: Sequence[Memory]) -> None:
        super().__init__(message)
        self.stored = tuple(stored)


SHUTTING_DOWN = "the server is shutting down; nothing was stored: retry against its successor"


class HebbsService:
    """What `hebbs serve` runs: one engine per tenant over one data dir or database (engine/tenants.py), guarded
    by API keys (unless `auth` is off), each key bound to one tenant or an admin key (interfaces/auth.py).

    Every operation names its tenant (`authorize` gives it: the key's own, or the one an admin key or an
    unguarded server is asked for) and runs on that tenant's engine only, whose store holds that tenant's
    memories and nothing else. `index_roots`: the folders a client may have indexed from the server's file
    system (none: indexing by path is off; uploads, which land in the tenant's data dir, work either way)."""

    def __init__(self, engine: MemoryEngine | Tenants, *, auth: bool = True, index_roots: Sequence[Path] = ()
                 ) -> None:
        self.tenants = engine if isinstance(engine, Tenants) else Tenants(engine)
        self.engine = self.tenants.default  # the default tenant's: health counts, the clock
        self.auth = auth
        self.keys = KeyRing(self.engine.data_dir, self.engine.shared_keys)
        self.index_roots = tuple(Path(root).resolve() for root in index_roots)
        self.started = time.monotonic()
        self._lock = ReadWriteLock()
        self._closed = False
        self._counts: dict[str, int | None] = {}
        self._counts_stale = True
        self._running_keys: set[tuple[str, str]] = set()
        self._keys_guard = threading.Lock()
        self.subscriptions = SubscriptionHub(self.surface)
        self._sweeps_stop = threading.Event()

    def authorize(self, key: str | None, tenant: str | None = None) -> str:
        """The tenant a request is served for: `tenant` as asked (none: the key's own, else `default`), if `key`
        may use it (a key bound to a tenant may use only that one; an admin key, or any request when auth is
        off, any). `AuthenticationError` without a valid key, `PermissionRefusedError` for another tenant's,
        `InvalidTenantError` for a name that is not one. Never logs the key."""
        asked = None if tenant in (None, "") else tenant_name(tenant)
        if not self.auth:
            return asked or DEFAULT_TENANT
        if not key:
            raise AuthenticationError("missing API key: send 'Authorization: Bearer <key>'")
        record = self.keys.find(key)
        if record is None:
            raise AuthenticationError("invalid API key")
        if record.tenant is None:
            return asked or DEFAULT_TENANT
        if asked is not None and asked != record.tenant:
            raise PermissionRefusedError(f"this API key belongs to tenant {record.tenant!r}; it cannot use tenant "
                                         f"{asked!r}")
        return record.tenant

    def engine_of(self, tenant: str) -> MemoryEngine:
        """The engine of the tenant `authorize` gave (opened on its first request)."""
        if self._closed:
            raise StoreError("the server is shutting down; retry against its successor")
        return self.tenants.get(tenant)

    def call(self, tenant: str, op: str, payload: Mapping[str, Any]) -> Any:
        """Parse `payload` as the request of `op`, run it under the right lock, and return the response.

        A served batch is capped at `config.MAX_BATCH_ITEMS`, and one larger than `config.WRITE_CHUNK_ITEMS`
        is committed a chunk at a time, the writer lock released between chunks so reads (and health
        probes) are not held up for the whole batch; every item is validated before the first chunk."""
        request = parse_request(op, payload)
        if isinstance(request, RememberManyRequest):
            if len(request.items) > config.MAX_BATCH_ITEMS:
                raise ValidationError(f"a batch holds at most {config.MAX_BATCH_ITEMS} memories, got "
                                      f"{len(request.items)}: send it in several requests")
            if len(request.items) > config.WRITE_CHUNK_ITEMS:
                return self._in_chunks(tenant, request)
        with self.writing() if op in WRITE_OPERATIONS else self._lock.reading():
            if self._closed:
                raise StoreError(SHUTTING_DOWN)
            response = self.engine_of(tenant).handle(request)
            if op in WRITE_OPERATIONS:
                self._counts_stale = True
            return response

    def _in_chunks(self, tenant: str, request: RememberManyRequest) -> MemoriesResponse:
        stored: list[Memory] = []
        size = config.WRITE_CHUNK_ITEMS
        for start in range(0, len(request.items), size):
            try:
                with self.writing():
                    if self._closed:
                        raise StoreError(SHUTTING_DOWN)
                    chunk = RememberManyRequest(request.items[start:start + size])
                    stored.extend(self.engine_of(tenant).handle(chunk).memories)
                    self._counts_stale = True
            except HebbsError as exc:
                if not stored:
                    raise
                raise PartialWriteError(f"{exc} ({len(stored)} of the batch's {len(request.items)} memories, the "
                                        f"first {len(stored)}, were stored before this)", stored) from exc
        return MemoriesResponse(tuple(stored))

    def once(self, tenant: str, key: str | None, op: str, run: Callable[[], dict[str, Any]]
             ) -> tuple[dict[str, Any], bool]:
        """`run()` (a write that returns its JSON reply) at most once per idempotency `key` of a tenant: a retry
        with the same key gets the first reply back; returns (reply, replayed). No key: just `run()`."""
        if key is None:
            return run(), False
        key = validation.text(key, "the Idempotency-Key header", config.IDEMPOTENCY_KEY_BYTES).strip()
        if not key:
            raise ValidationError("the Idempotency-Key header is empty")
        running = (tenant, key)
        with self._keys_guard:
            if running in self._running_keys:
                raise ConflictError(f"a request with the idempotency key {key!r} is still running; retry after it")
            self._running_keys.add(running)
        try:
            with self.reading():
                kept = self.engine_of(tenant).replies.get(key)
            if kept is not None:
                if kept[0] != op:
                    raise ConflictError(f"the idempotency key {key!r} was used for {kept[0]}, not {op}")
                return json.loads(kept[1]), True
            reply = run()
            with self.writing():
                self.engine_of(tenant).replies.put(key, op, json.dumps(reply))
            return reply, False
        finally:
            with self._keys_guard:
                self._running_keys.discard(running)

    def check_index_paths(self, paths: Sequence[Path]) -> None:
        """Refuses a path outside the configured index roots (resolved, links followed, before the check)."""
        if not self.index_roots:
            raise PermissionRefusedError("indexing files on the server is off: start `hebbs serve` with "
                                         "--index-root FOLDER to allow a folder, or upload the files (/v1/upload)")
        for path in paths:
            resolved = path.resolve()
            if not any(resolved == root or resolved.is_relative_to(root) for root in self.index_roots):
                raise PermissionRefusedError(f"{path} is outside the folders this server may index "
                                             f"({', '.join(map(str, self.index_roots))})")

    def refresh_counts(self) -> None:
        """Read the counts health reports (at start; later, health rereads them after writes, when free)."""
        with self._lock.reading():
            self._counts = self.engine.stats(vector_index=False)
            self._counts_stale = False

    def health(self) -> tuple[bool, dict[str, int | None]]:
        """(ready, counts): never waits for the store's lock, so a long write does not make a readiness probe
        time out. The counts are reread if a write committed since and no write holds or awaits the lock;
        else they are those of the last read."""
        if self._counts_stale and not self._closed:
            with self._lock.reading_if_free() as free:
                if free and not self._closed:
                    self._counts_stale = False
                    self._counts = self.engine.stats(vector_index=False)
        return not self._closed, dict(self._counts)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold a reader's share: for a read made outside `call` (the entity list)."""
        with self._lock.reading():
            if self._closed:
                raise StoreError("the server is shutting down; retry against its successor")
            yield

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the writer lock: for a write made outside `call` (uploads) and for shutdown."""
        with self._lock.writing():
            yield

    def surface(self, tenant: str, chunk: str, entity_id: str | None) -> list[RecallResult]:
        """What a subscription's chunk brings up: a similarity recall of the subscription's tenant (not counted
        as an access: nothing was read yet), within one entity's memories when given, each memory stamped with
        its decay score.

        Scoped to an entity, the entity's own timeline is searched too (its newest memories scored by cosine
        to the chunk), so its relevant memories are found even when the store's global nearest neighbours
        all belong to other entities: at most `top_k` of the ranked union come from the similarity search,
        so ranking 2 x top_k leaves at least top_k of the entity's own."""
        fields: dict[str, object] = {"cue": chunk, "strategies": ["similarity"], "top_k": RECALL_TOP_K}
        if entity_id is not None:
            fields.update(strategies=["similarity", "temporal"], entity_id=entity_id, top_k=2 * RECALL_TOP_K)
        request = RecallRequest.parse(fields)
        with self.reading():
            engine = self.engine_of(tenant)
            results = engine.retrieve(request)
            policy = engine.retention.policies.get()
        if entity_id is not None:
            results = [r for r in results if r.memory.entity_id == entity_id][:RECALL_TOP_K]
        response = stamp(RecallResponse(tuple(results)), engine.clock.now(), policy.decay_half_life_days)
        return list(response.results)

    def uptime_seconds(self) -> float:
        return time.monotonic() - self.started

    def sweep_every(self, seconds: float) -> None:
        """Run the auto-forget sweep (docs/policies.md) of every tenant every `seconds` on a side thread until
        `close`: it forgets only what each tenant's auto_forget_threshold says (none set: nothing)."""

        def loop() -> None:
            while not self._sweeps_stop.wait(seconds):
                try:
                    tenants = self.tenants.known()
                except HebbsError as exc:
                    log.warning("auto-forget sweep: cannot list the tenants: %s", exc)
                    continue
                for tenant in tenants:
                    try:
                        swept = self.call(tenant, "sweep", {})
                    except HebbsError as exc:  # the store closing, or a transient store error: try next time
                        log.warning("auto-forget sweep of tenant %r failed: %s", tenant, exc)
                        continue
                    if swept.forgotten:
                        log.info("auto-forget sweep of tenant %r: %d memories forgotten, tombstones left", tenant,
                                 len(swept.forgotten))

        threading.Thread(target=loop, name="hebbs-sweep", daemon=True).start()

    def close(self) -> None:
        """Wait for in-flight requests (takes the writer lock), then close the engine and its data-dir lock."""
        self._sweeps_stop.set()
        self.subscriptions.shutdown()
        with self._lock.writing():
            if not self._closed:
                self._closed = True
                self.tenants.close()
