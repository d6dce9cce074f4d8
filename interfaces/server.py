"""`hebbs serve`: one process owns the data dir and serves it over REST (uvicorn) and gRPC (grpcio).

Start-up: bind both ports (a port in use ends here, in one line), open the engine (which takes the data-dir
lock), build every index and load the model, make the first API key if there is none, then serve.
SIGTERM or SIGINT stops accepting, lets in-flight requests finish (writes always: the service's writer
lock is taken before the engine closes), and releases the data dir.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import config
from engine.embedding import Embedder
from engine.facade import MemoryEngine
from engine.index.vector import VECTOR_COLLECTION, VectorIndex
from engine.store.postgres.connection import redact
from engine.tenancy import DEFAULT_TENANT
from engine.tenants import Tenants
from interfaces.auth import ListenError
from interfaces.listen import listen
from interfaces.service import HebbsService

log = logging.getLogger("hebbs.serve")


def open_tenants(data_dir: Path | None, chroma_url: str | None = None, database: str | None = None,
                 embedder: Embedder | None = None) -> Tenants:
    """The engines `serve` runs, one per tenant (engine/tenants.py): on a PostgreSQL `database` shared with other
    servers, or the data dir's own store; the vector index on a Chroma server when `chroma_url` is given, each
    tenant's in a collection of its own (`default`'s is the collection a store had before tenants)."""
    vectors_of: Callable[[str], VectorIndex] | None = None
    if chroma_url:
        url = chroma_url

        def vectors_of(tenant: str) -> VectorIndex:
            return VectorIndex.open_server(url, VECTOR_COLLECTION if tenant == DEFAULT_TENANT
                                           else f"{VECTOR_COLLECTION}.{tenant}")

    default = MemoryEngine(data_dir, database=database, embedder=embedder,
                           vector_index=None if vectors_of is None else lambda: vectors_of(DEFAULT_TENANT))
    return Tenants(default, vectors_of)


def run_server(
    data_dir: Path | None,
    *,
    database: str | None = None,
    host: str = config.DEFAULT_SERVE_HOST,
    rest_port: int = config.DEFAULT_REST_PORT,
    grpc_port: int = config.DEFAULT_GRPC_PORT,
    auth: bool = True,
    chroma_url: str | None = None,
    index_roots: Sequence[Path] = (),
    allowed_hosts: Sequence[str] = (),
    tls: Tls | None = None,
    announce: Callable[[str], None] = print,
    sweep_minutes: float = 60.0,
) -> None:
    """Serve until SIGTERM/SIGINT. `announce` prints the few lines an operator must see (the first key).

    Both ports are bound first: a port in use is a `ListenError` before the store is opened or anything
    says "serving". On SIGTERM the HTTP side stops accepting and waits for its requests in flight (reads
    are bounded by the read timeouts; a write is never cut off: its client gets its result), then the
    service closes (a write still waiting for the lock is refused, saying nothing was stored), then gRPC.
    """
    import uvicorn

    from interfaces.grpc.server import bind_grpc, serve_grpc
    from interfaces.http import create_app
    from interfaces.http.limits import HeaderDeadlineProtocol

    rest_socket = listen(host, rest_port, "REST")
    try:
        grpc_server = bind_grpc(host, grpc_port, tls)
    except ListenError:
        rest_socket.close()
        raise
    service: HebbsService | None = None
    try:
        tenants = open_tenants(data_dir, chroma_url, database)
        engine = tenants.default
        service = HebbsService(tenants, auth=auth, index_roots=index_roots)
        if auth:
            first = service.keys.first_start()
            if first is not None:
                announce(f"hebbs: created the first API key, tenant default's (shown once, store it now): {first}")
        engine.warm()
        engine.embed(["warm up"])  # load the model now, not on the first recall
        service.refresh_counts()
        if sweep_minutes > 0:
            service.sweep_every(sweep_minutes * 60)
        serve_grpc(grpc_server, service)
        ssl = {"ssl_certfile": str(tls.cert), "ssl_keyfile": str(tls.key)} if tls else {}
        http = _QuietSignalsServer(
            uvicorn.Config(create_app(service, allowed_hosts=[host, *allowed_hosts]), log_level="info",
                           http=HeaderDeadlineProtocol, timeout_graceful_shutdown=None, **ssl)  # type: ignore[arg-type]
        )
        scheme = "https" if tls else "http"
        with _stop_on_signals(http, service.subscriptions.shutdown):
            where = redact(database) if database else data_dir
            announce(f"hebbs: serving {where} - REST {scheme}://{host}:{rest_port}  gRPC {host}:{grpc_port}"
                     + (" (TLS)" if tls else "") + ("" if auth else "  (NO AUTH)"))
            asyncio.run(http.serve(rest_socket))
        log.info("stopping: HTTP drained; waiting for writes in flight")
        service.close()
        grpc_server.stop(config.SHUTDOWN_GRACE_SECONDS).wait()
    finally:
        rest_socket.close()
        grpc_server.stop(0)
        if service is not None:
            service.close()
            log.info("stopped; data dir released")


@dataclass(frozen=True, slots=True)
class Tls:
    """A certificate chain and its private key (PEM files), served by both REST and gRPC."""

    cert: Path
    key: Path

    def pair(self) -> tuple[bytes, bytes]:
        try:
            return self.key.read_bytes(), self.cert.read_bytes()
        except OSError as exc:
            raise ListenError(f"cannot read the TLS certificate or key: {exc}") from None


class _QuietSignalsServer:
    """uvicorn's server with its signal capture switched off: `run_server` owns SIGTERM/SIGINT, so the
    gRPC server and the engine can be closed after the HTTP side has drained."""

    def __init__(self, cfg: Any) -> None:
        import uvicorn

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

            def install_signal_handlers(self) -> None:  # uvicorn < 0.29
                return None

        self.server = Server(cfg)

    async def serve(self, sock: Any) -> None:
        await self.server.serve(sockets=[sock])

    def stop(self) -> None:
        self.server.should_exit = True


@contextlib.contextmanager
def _stop_on_signals(http: _QuietSignalsServer, end_streams: Callable[[], None]) -> Iterator[None]:
    """SIGTERM / SIGINT stop the HTTP side; open subscription streams are ended first, or the drain (which
    waits for every response to finish) would wait on them for as long as their clients stay."""

    def handler(signum: int, _: Any) -> None:
        log.info("received %s", signal.Signals(signum).name)
        end_streams()
        http.stop()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
