"""`hebbs serve`: one process owns the data dir and serves it over REST (uvicorn) and gRPC (grpcio).

Start-up: open the engine (which takes the data-dir lock), build every index and load the model, make
the first API key if there is none, then listen. SIGTERM or SIGINT stops accepting, lets in-flight
requests finish (writes included: the service's writer lock is taken before the engine closes), and
releases the data dir.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine import config
from engine.facade import MemoryEngine
from engine.index.vector import VectorIndex
from interfaces.service import HebbsService

log = logging.getLogger("hebbs.serve")


def open_engine(data_dir: Path, chroma_url: str | None = None) -> MemoryEngine:
    """The engine `serve` runs: the vector index on a Chroma server when `chroma_url` is given."""
    vectors: Callable[[], VectorIndex] | None = None
    if chroma_url:
        url = chroma_url

        def vectors() -> VectorIndex:
            return VectorIndex.open_server(url)

    return MemoryEngine(data_dir, vector_index=vectors)


def run_server(
    data_dir: Path,
    *,
    host: str = config.DEFAULT_SERVE_HOST,
    rest_port: int = config.DEFAULT_REST_PORT,
    grpc_port: int = config.DEFAULT_GRPC_PORT,
    auth: bool = True,
    chroma_url: str | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve until SIGTERM/SIGINT. `announce` prints the few lines an operator must see (the first key)."""
    import uvicorn

    from interfaces.grpc.server import start_grpc
    from interfaces.http import create_app

    engine = open_engine(data_dir, chroma_url)
    service = HebbsService(engine, auth=auth)
    try:
        if auth:
            first = service.keys.first_start()
            if first is not None:
                announce(f"hebbs: created the first API key (shown once, store it now): {first}")
        engine.warm()
        engine.embed(["warm up"])  # load the model now, not on the first recall
        grpc_server = start_grpc(service, host, grpc_port)
        http = _QuietSignalsServer(
            uvicorn.Config(create_app(service), host=host, port=rest_port, log_level="info",
                           timeout_graceful_shutdown=int(config.SHUTDOWN_GRACE_SECONDS))
        )
        with _stop_on_signals(http):
            announce(f"hebbs: serving {data_dir} - REST http://{host}:{rest_port}  gRPC {host}:{grpc_port}"
                     + ("" if auth else "  (NO AUTH)"))
            asyncio.run(http.serve())
        log.info("stopping: letting in-flight requests finish")
        grpc_server.stop(config.SHUTDOWN_GRACE_SECONDS).wait()
    finally:
        service.close()
        log.info("stopped; data dir released")


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

    async def serve(self) -> None:
        await self.server.serve()

    def stop(self) -> None:
        self.server.should_exit = True


@contextlib.contextmanager
def _stop_on_signals(http: _QuietSignalsServer) -> Iterator[None]:
    def handler(signum: int, _: Any) -> None:
        log.info("received %s", signal.Signals(signum).name)
        http.stop()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
