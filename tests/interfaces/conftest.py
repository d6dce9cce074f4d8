"""Real servers on free loopback ports.

`served`: ONE `hebbs serve` process per test session (its own model load), started the way a user starts
it, with a key from HEBBS_API_KEY; readiness is polled on /v1/health/ready. `in_process`: the same REST
app and gRPC servicers over a fresh engine in this process (sharing the session's model), for tests that
need a store of their own (the contract table, the fuzz, the Chroma server).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import MemoryEngine
from engine.embedding import SentenceTransformerEmbedder
from engine.index.vector import VectorIndex
from interfaces.service import HebbsService

START_TIMEOUT = 180.0  # a cold model load on a busy 2-core machine
KEY = "hb_test_" + "k" * 32


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(ready: Callable[[], bool], timeout: float, what: str, alive: Callable[[], bool] = lambda: True) -> None:
    """Poll `ready` until it holds (never a fixed sleep): fail with `what` on timeout or if the process died."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while not ready():
        if not alive() or time.monotonic() > deadline:
            pytest.fail(f"{what} did not become ready")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class Served:
    rest: str
    grpc: str
    key: str
    data_dir: Path
    log: Path
    proc: subprocess.Popen[bytes]

    def headers(self, key: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key or self.key}"}

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.rest, headers=self.headers(), timeout=60)

    def warnings(self) -> list[str]:
        """The server log's warnings and errors so far (for a failing assertion's message)."""
        lines = self.log.read_text(errors="replace").splitlines()
        return [line for line in lines if "WARNING" in line or "ERROR" in line or "Traceback" in line][-20:]


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`hebbs serve` in its own process, stopped with SIGTERM at the end (it must exit 0, data dir released)."""
    root = tmp_path_factory.mktemp("served")
    data_dir, log = root / "data", root / "serve.log"
    rest_port, grpc_port = free_port(), free_port()
    hebbs = str(Path(sys.executable).with_name("hebbs"))
    env = {**os.environ, "HEBBS_API_KEY": KEY}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [hebbs, "--data-dir", str(data_dir), "serve", "--rest-port", str(rest_port), "--grpc-port", str(grpc_port)],
            env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    server = Served(f"http://127.0.0.1:{rest_port}", f"127.0.0.1:{grpc_port}", KEY, data_dir, log, proc)
    try:
        wait_until(lambda: _answers(f"{server.rest}/v1/health/ready"), START_TIMEOUT, f"hebbs serve (see {log})",
                   alive=lambda: proc.poll() is None)
        yield server
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert code == 0, f"hebbs serve exited {code} on SIGTERM; see {log}"
    assert "data dir released" in log.read_text()


@dataclass
class InProcess:
    rest: str
    grpc: str
    service: HebbsService
    shutdown: Callable[[], None]  # what `hebbs serve` does on SIGTERM: drain HTTP, stop gRPC, close the engine


@pytest.fixture
def in_process(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Iterator[Callable[..., InProcess]]:
    """Start REST + gRPC over a fresh engine in this process; stopped after the test."""
    import uvicorn

    from interfaces.grpc.server import start_grpc
    from interfaces.http import create_app

    stops: list[Callable[[], None]] = []

    def start(auth: bool = False, vector_index: Callable[[], VectorIndex] | None = None,
              database: str | None = None) -> InProcess:
        """`database`: the records in that PostgreSQL database instead of the data dir."""
        engine = MemoryEngine(None if database else tmp_path / f"store{len(stops)}", database=database,
                              embedder=embedder, vector_index=vector_index)
        service = HebbsService(engine, auth=auth)
        port = free_port()
        http = uvicorn.Server(uvicorn.Config(create_app(service), host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=http.run, daemon=True)
        thread.start()
        grpc_port = free_port()
        grpc_server = start_grpc(service, "127.0.0.1", grpc_port)
        wait_until(lambda: http.started, 60, "in-process REST server", alive=thread.is_alive)

        def stop() -> None:
            http.should_exit = True
            thread.join(timeout=30)
            grpc_server.stop(5).wait()
            service.close()

        stops.append(stop)
        return InProcess(f"http://127.0.0.1:{port}", f"127.0.0.1:{grpc_port}", service, stop)

    yield start
    for stop in reversed(stops):
        stop()


def strip_sdk_fields(value: Any) -> Any:
    """A REST response without the fields added for the official SDK (interfaces/http/wire.py)."""
    from interfaces.http.wire import SDK_MEMORY_FIELDS, SDK_RESULT_FIELDS

    if isinstance(value, dict):
        if "memory" in value and "score" in value:  # a recall result: flat SDK copies of its memory
            value = {k: v for k, v in value.items() if k not in SDK_RESULT_FIELDS}
        drop = set(SDK_MEMORY_FIELDS) | {"count", "forgotten_count"}
        return {k: strip_sdk_fields(v) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [strip_sdk_fields(v) for v in value]
    return value
