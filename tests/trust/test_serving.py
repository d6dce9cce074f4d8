"""The server's edge as an outsider meets it (issue 30, items 1, 3, 4 and 5): a real `hebbs serve` on
loopback, raw sockets and HTTP. Every refusal is checked to change nothing (the store's count before and
after), and every wait polls a condition (no fixed sleeps)."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from click.testing import CliRunner
from hebbs._generated import hebbs_pb2 as pb
from hebbs._generated import hebbs_pb2_grpc as pb_grpc

from engine import config
from interfaces.cli import main
from tests.interfaces.conftest import free_port, wait_until
from tests.trust.servers import HEBBS, KEY, Server, launch, ready, running, stop

FAST_READ = {"HEBBS_HEADER_READ_SECONDS": "1", "HEBBS_BODY_READ_SECONDS": "2"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    root = tmp_path_factory.mktemp("edge")
    allowed = root / "allowed"
    allowed.mkdir()
    (allowed / "notes.md").write_text("# Notes\n\nGlobex signed the renewal in March after a long negotiation.\n")
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("The vault combination is 31-17-42, known only to the night guard.\n")
    (allowed / "link.txt").symlink_to(outside / "secret.txt")
    (allowed / "linked-folder").symlink_to(outside)
    with running(root / "data", "--index-root", str(allowed), "--allow-host", "memory.example",
                 env=FAST_READ) as served:
        yield served, root


def _exit_of(proc: subprocess.Popen[bytes], timeout: float = 120) -> int:
    return proc.wait(timeout=timeout)


# --- item 1: exclusive ports ----------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("shared", ["grpc", "rest"])
def test_two_servers_cannot_share_a_port(server: tuple[Server, Path], tmp_path: Path, shared: str) -> None:
    first, _ = server
    before = first.memories()
    ports = {"grpc_port": first.grpc_port} if shared == "grpc" else {"rest_port": first.rest_port}
    second = launch(tmp_path / "second", **ports)  # type: ignore[arg-type]
    assert _exit_of(second.proc) == 1
    out = [line for line in second.output().splitlines() if line.strip()]
    assert len(out) == 1 and "cannot listen for " + ("gRPC" if shared == "grpc" else "REST") in out[0], out
    assert "serving" not in second.output()
    assert not (tmp_path / "second").exists()  # refused before the store was created
    # The first server still owns its ports: every new gRPC connection reaches it (and its store).
    for _ in range(8):
        with grpc.insecure_channel(first.grpc) as channel:
            made = pb_grpc.MemoryServiceStub(channel).Remember(
                pb.RememberRequest(content="still the only server on this port"), metadata=first.metadata, timeout=60)
            assert len(made.memory.memory_id) == 16
    assert first.memories() == before + 8


@pytest.mark.slow
def test_a_port_another_program_holds_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run([HEBBS, "--data-dir", str(tmp_path / "d"), "serve", "--rest-port", str(port),
                               "--grpc-port", str(free_port())], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"hebbs: error: cannot listen for REST on 127.0.0.1:{port}: "
                                                "Address already in use"]


# --- item 4: host, origin, content type, plain-text warning ---------------------------------------------
@pytest.mark.parametrize(("headers", "status", "says"), [
    ({"Host": "attacker.example"}, 421, "--allow-host"),
    ({"Host": "attacker.example:80"}, 421, "--allow-host"),
    ({"Origin": "http://attacker.example"}, 403, "origin"),
    ({"Origin": "null"}, 403, "'null'"),
    ({"Origin": "http://203.0.113.9:8080"}, 403, "origin"),
    ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "application/json"),
    ({"Content-Type": "text/plain"}, 415, "application/json"),
    ({"Content-Type": "multipart/form-data; boundary=x"}, 415, "application/json"),
    ({"Content-Type": ""}, 415, "application/json"),
], ids=["foreign host", "foreign host with port", "foreign origin", "null origin", "IP origin", "form post",
        "text/plain", "multipart", "no content type"])
def test_browser_shaped_requests_are_refused(server: tuple[Server, Path], headers: dict[str, str], status: int,
                                             says: str) -> None:
    served, _ = server
    before = served.memories()
    sent = {"Content-Type": "application/json", **headers}
    with served.http() as http:
        for method, path in [("POST", "/v1/memories"), ("POST", "/v1/forget"), ("PUT", "/v1/memories/x")]:
            reply = http.request(method, path, content=b'{"content": "written by a web page"}', headers=sent)
            assert reply.status_code == status, reply.text
            assert says in reply.json()["error"]
        if "Host" in headers or "Origin" in headers:  # reads too: a rebinding page must not read memories
            assert http.get("/v1/memories", headers=headers).status_code == status
            upload = http.post("/v1/upload", headers=headers, files=[("files", ("page.md", b"# x\n\nFrom a page.\n"))])
            assert upload.status_code == status, upload.text
    assert served.memories() == before


def test_allowed_names_ip_literals_and_localhost_are_accepted(server: tuple[Server, Path]) -> None:
    served, _ = server
    with served.http() as http:
        port = served.rest_port
        for host in ("memory.example", f"memory.example:{port}", "localhost", f"127.0.0.1:{port}", "[::1]"):
            assert http.get("/v1/stats", headers={"Host": host}).status_code == 200, host
        same_site = http.get("/v1/stats", headers={"Origin": f"http://localhost:{served.rest_port}"})
        assert same_site.status_code == 200


def test_a_non_loopback_host_warns_that_it_is_plain_text(tmp_path: Path) -> None:
    with socket.socket() as holder:  # the port is taken, so the server stops right after its warnings
        holder.bind(("0.0.0.0", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run([HEBBS, "--data-dir", str(tmp_path / "d"), "serve", "--host", "0.0.0.0",
                               "--rest-port", str(port), "--grpc-port", str(free_port())],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "accepts connections from other machines" in done.stderr and "plain text" in done.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_tls_serves_both_transports_and_index_is_off_without_roots(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True, timeout=60)
    served = launch(tmp_path / "data", "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        url = f"https://127.0.0.1:{served.rest_port}"
        trusted = ssl.create_default_context(cafile=str(cert))

        def up() -> bool:
            try:
                return httpx.get(f"{url}/v1/health/ready", verify=trusted, timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, 180, f"TLS server: {served.output()[-300:]}", alive=lambda: served.proc.poll() is None)
        with httpx.Client(base_url=url, verify=trusted, headers={"Authorization": f"Bearer {KEY}"}) as http:
            assert http.post("/v1/memories", json={"content": "sent over TLS"}).status_code == 201
            # Indexing the server's files is off until --index-root names a folder.
            refused = http.post("/v1/index", json={"paths": [str(tmp_path)]})
            assert refused.status_code == 403 and "--index-root" in refused.json()["error"]
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{served.rest_port}/v1/health/ready", timeout=5)  # no plain text
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        with grpc.secure_channel(served.grpc, credentials) as channel:
            found = pb_grpc.MemoryServiceStub(channel).Recall(
                pb.RecallRequest(cue="TLS", top_k=1), metadata=served.metadata, timeout=60)
            assert found.results[0].memory.content == "sent over TLS"
        with grpc.insecure_channel(served.grpc) as channel, pytest.raises(grpc.RpcError):
            pb_grpc.MemoryServiceStub(channel).Recall(pb.RecallRequest(cue="TLS"), metadata=served.metadata, timeout=10)
    finally:
        assert stop(served) == 0


# --- item 3: caps, chunks, health, read timeouts --------------------------------------------------------
def _raw(served: Server, request: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", served.rest_port), timeout=60)
    sock.sendall(request)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def test_an_oversized_body_is_refused_from_its_length_before_it_is_sent(server: tuple[Server, Path]) -> None:
    served, _ = server
    before = served.memories()
    size = 100 * 1024 * 1024
    head = (f"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n").encode()
    with _raw(served, head + b'{"content": "') as sock:  # the 100 MB are never sent
        reply = _read_all(sock)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert str(config.MAX_REQUEST_BYTES).encode() in reply
    assert served.memories() == before


def test_a_chunked_body_is_cut_off_at_the_cap(server: tuple[Server, Path]) -> None:
    served, _ = server
    before = served.memories()
    sent = 0

    def body() -> Iterator[bytes]:
        nonlocal sent
        yield b'{"content": "'
        piece = b"x" * (1024 * 1024)
        while sent < 64 * 1024 * 1024:
            sent += len(piece)
            yield piece

    with served.http() as http:
        try:
            reply = http.post("/v1/memories", content=body(), headers={"Content-Type": "application/json"})
            assert reply.status_code == 413 and str(config.MAX_REQUEST_BYTES) in reply.json()["error"]
        except httpx.TransportError:
            pass  # the server answered 413 and closed while the client was still sending
    assert sent < 64 * 1024 * 1024  # refused well before the client finished
    assert served.memories() == before


def test_a_batch_over_the_cap_is_refused_whole(server: tuple[Server, Path]) -> None:
    served, _ = server
    before = served.memories()
    items = [{"content": f"item {n}"} for n in range(config.MAX_BATCH_ITEMS + 1)]
    with served.http() as http:
        reply = http.post("/v1/memories", json={"items": items})
    assert reply.status_code == 400 and str(config.MAX_BATCH_ITEMS) in reply.json()["error"]
    assert served.memories() == before


@pytest.mark.slow
def test_a_large_batch_lets_reads_and_health_through(server: tuple[Server, Path]) -> None:
    served, _ = server
    before = served.memories()
    size = 3 * config.WRITE_CHUNK_ITEMS
    items = [{"content": f"Batch line {n}: the shipment of crate {n} left the dock.", "entity_id": "dock"}
             for n in range(size)]
    result: dict[str, httpx.Response] = {}

    def write() -> None:
        with served.http() as http:
            result["reply"] = http.post("/v1/memories", json={"items": items})

    writer = threading.Thread(target=write)
    writer.start()
    seen: list[int] = []
    slowest_probe = 0.0
    with served.http() as http:
        while writer.is_alive():
            started = time.monotonic()
            assert http.get("/v1/health/ready", timeout=10).status_code == 200
            slowest_probe = max(slowest_probe, time.monotonic() - started)
            seen.append(int(http.get("/v1/memories", params={"limit": 1}, timeout=120).json()["total"]))
    writer.join()
    assert result["reply"].status_code == 201 and len(result["reply"].json()["memories"]) == size
    assert served.memories() == before + size
    # A read ran between two chunks: it saw part of the batch committed, not nothing and not all of it.
    assert any(before < n < before + size for n in seen), seen
    assert slowest_probe < 10


def test_half_sent_headers_are_closed_after_the_header_timeout(server: tuple[Server, Path]) -> None:
    served, _ = server
    opened = time.monotonic()
    with _raw(served, b"GET /v1/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ") as sock:
        assert _read_all(sock) == b""  # closed by the server, no request was ever handled
    assert time.monotonic() - opened < 30


def test_a_stalled_body_is_answered_408(server: tuple[Server, Path]) -> None:
    served, _ = server
    before = served.memories()
    head = (f"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n").encode()
    with _raw(served, head + b'{"content": ') as sock:
        reply = _read_all(sock)
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert served.memories() == before


# --- item 5: index roots --------------------------------------------------------------------------------
@pytest.mark.slow
def test_index_reads_only_under_its_roots_after_links(server: tuple[Server, Path]) -> None:
    served, root = server
    before = served.memories()
    allowed, outside = root / "allowed", root / "outside"
    with served.http() as http:
        for path in (outside / "secret.txt", outside, Path("/etc/hostname"), allowed / "link.txt",
                     allowed / "linked-folder", allowed / ".." / "outside" / "secret.txt"):
            reply = http.post("/v1/index", json={"paths": [str(path)]})
            assert reply.status_code == 403, (path, reply.text)
            assert "outside the folders this server may index" in reply.json()["error"]
        assert served.memories() == before
        done = http.post("/v1/index", json={"paths": [str(allowed / "notes.md")]})
        assert done.status_code == 200 and done.json()["documents_indexed"] == 1
        found = http.post("/v1/recall", json={"cue": "vault combination night guard", "top_k": 50}).json()
        assert not any("31-17-42" in r["memory"]["content"] for r in found["results"])


def test_index_through_the_cli_server_option_is_refused_outside_roots(server: tuple[Server, Path]) -> None:
    served, root = server
    before = served.memories()
    result = CliRunner().invoke(main, ["--server", served.rest, "index", str(root / "outside")],
                                env={"HEBBS_API_KEY": KEY})
    assert result.exit_code == 2 and "outside the folders" in result.stderr
    assert served.memories() == before


def test_sigterm_ends_open_subscription_streams_and_exits(tmp_path: Path) -> None:
    """An SSE client that never closes must not keep a stopping server draining: its stream ends (`closed`)."""
    server = launch(tmp_path / "data")
    wait_until(lambda: ready(server), 180, "hebbs serve", alive=lambda: server.proc.poll() is None)
    with server.http() as http, http.stream("POST", "/v1/subscribe", json={}) as stream:
        lines = stream.iter_lines()
        assert next(line for line in lines if line.startswith("event:")) == "event: subscribed"
        assert stop(server, timeout=60) == 0
        assert "event: closed" in list(lines)
    assert "data dir released" in server.output()
