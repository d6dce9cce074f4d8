"""`hebbs serve` as an outsider meets it: a real process on loopback, ephemeral ports, raw clients.

`start` launches the CLI the way a user does and waits (polling, never a fixed sleep) until REST answers
ready; `stop` sends SIGTERM and returns the exit code. `Server` carries raw clients for REST (httpx) and
gRPC (the official protos' stub, with the key as metadata).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx
from hebbs._generated import hebbs_pb2_grpc as pb_grpc

from tests.interfaces.conftest import START_TIMEOUT, free_port, wait_until

KEY = "hb_trust_" + "t" * 32
HEBBS = str(Path(sys.executable).with_name("hebbs"))


@dataclass
class Server:
    data_dir: Path
    rest_port: int
    grpc_port: int
    log: Path
    proc: subprocess.Popen[bytes]
    key: str = KEY
    channels: list[grpc.Channel] = field(default_factory=list)

    @property
    def rest(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    @property
    def grpc(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def http(self, timeout: float = 120, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.rest, headers={"Authorization": f"Bearer {self.key}"}, timeout=timeout,
                            **kwargs)

    def stub(self) -> Any:
        channel = grpc.insecure_channel(self.grpc)
        self.channels.append(channel)
        return pb_grpc.MemoryServiceStub(channel)

    @property
    def metadata(self) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {self.key}")]

    def memories(self) -> int:
        """The store's memory count, revisions included (what a refused request must leave unchanged)."""
        with self.http() as http:
            return int(http.get("/v1/memories", params={"limit": 1}).json()["total"])

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def launch(data_dir: Path, *args: str, rest_port: int | None = None, grpc_port: int | None = None,
           env: dict[str, str] | None = None) -> Server:
    """`hebbs serve` started, not waited for."""
    rest_port = rest_port or free_port()
    grpc_port = grpc_port or free_port()
    log = data_dir.parent / f"serve-{rest_port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [HEBBS, "--data-dir", str(data_dir), "serve", "--rest-port", str(rest_port), "--grpc-port",
             str(grpc_port), *args],
            env={**os.environ, "HEBBS_API_KEY": KEY, **(env or {})}, stdout=out, stderr=subprocess.STDOUT,
        )
    return Server(data_dir, rest_port, grpc_port, log, proc)


def ready(server: Server) -> bool:
    try:
        return httpx.get(f"{server.rest}/v1/health/ready", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def start(data_dir: Path, *args: str, **kwargs: Any) -> Server:
    server = launch(data_dir, *args, **kwargs)
    wait_until(lambda: ready(server), START_TIMEOUT, f"hebbs serve (see {server.log}): {server.output()[-400:]}",
               alive=lambda: server.proc.poll() is None)
    return server


def stop(server: Server, timeout: float = 120) -> int:
    for channel in server.channels:
        channel.close()
    if server.proc.poll() is None:
        server.proc.send_signal(signal.SIGTERM)
    try:
        return server.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        raise


@contextlib.contextmanager
def running(data_dir: Path, *args: str, **kwargs: Any) -> Iterator[Server]:
    server = start(data_dir, *args, **kwargs)
    try:
        yield server
    finally:
        stop(server)
