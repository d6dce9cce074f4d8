"""What the REST server refuses before a route runs, and how long it waits for a client.

`RequestGuard` (ASGI middleware), in order: a Host header that is not the bound host, an IP literal,
localhost or an allowed name (a DNS-rebinding page reaches a loopback server under its own name) is 421;
an Origin of another site is 403 (a web page's form post needs no preflight); a write whose body is not
JSON is 415 (uploads: multipart); a body larger than its cap is 413 with the limit, refused from its
Content-Length before any of it is read, or as soon as a chunked body passes the cap; a body that stops
arriving for `config.BODY_READ_SECONDS` is 408. `HeaderDeadlineProtocol` closes a connection whose request
headers are not complete within `config.HEADER_READ_SECONDS` (uvicorn waits forever by default).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import h11
from starlette.exceptions import HTTPException
from uvicorn.protocols.http.h11_impl import H11Protocol

from engine import config

UPLOAD_PATH = "/v1/upload"
JSON_TYPES = (b"application/json",)


class HeaderDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's headers (half-sent requests are closed)."""

    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._arm()  # a request has begun (or the next one): its headers are on the clock
        elif self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(config.HEADER_READ_SECONDS, self._expired)

    def _expired(self) -> None:
        self._deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_of(value: str) -> str:
    """The host name of a Host header or an Origin (no port, lower case)."""
    if "//" not in value:
        value = "//" + value
    return (urlsplit(value).hostname or "").lower()


class RequestGuard:
    def __init__(self, app: Any, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = {"localhost"} | {h.lower().strip("[]") for h in allowed_hosts if h}

    def allows(self, host: str) -> bool:
        """A Host header this server answers to: a DNS-rebinding page's Host is its own name, never an IP."""
        return host in self.allowed or _is_ip(host)

    def same_site(self, origin: str, host: str) -> bool:
        """A web page's Origin that may call this server: its own pages (the Host it was reached by), its
        names and loopback addresses. Any other origin, an IP literal or `null` included, is a foreign page."""
        return bool(origin) and (origin == host or origin in self.allowed or _is_loopback(origin))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        host = _host_of(headers.get(b"host", b"").decode("latin-1"))
        if not self.allows(host):
            await _refuse(send, 421, f"Host {host or '(none)'!r} is not a name of this server; start it with "
                                     "--allow-host NAME to accept that name")
            return
        origin = headers.get(b"origin", b"").decode("latin-1")
        if origin and not self.same_site(_host_of(origin), host):
            await _refuse(send, 403, f"requests from the web page origin {origin!r} are refused")
            return
        method, path = scope["method"], scope["path"]
        if method in ("POST", "PUT", "PATCH"):
            given = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
            if path == UPLOAD_PATH:
                if given != b"multipart/form-data":
                    await _refuse(send, 415, "an upload is multipart/form-data (field `files`)")
                    return
            elif not (given in JSON_TYPES or given.endswith(b"+json")):
                await _refuse(send, 415, "send the body as JSON with 'Content-Type: application/json'"
                                         + (f", not {given.decode('latin-1')!r}" if given else ""))
                return
        limit = config.MAX_UPLOAD_BYTES if path == UPLOAD_PATH else config.MAX_REQUEST_BYTES
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _refuse(send, 413, _too_large(limit), close=True)
            return
        await self.app(scope, _limited(receive, send, limit), send)


def _too_large(limit: int) -> str:
    return f"the request body is larger than this server accepts ({limit} bytes)"


class BodyRefused(HTTPException):
    """Raised inside the app's `receive` when the body passes its cap or stops arriving (an HTTPException,
    so FastAPI's body parsing passes it on instead of calling it a parse error)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status, message)


def _limited(receive: Any, send: Any, limit: int) -> Any:
    """`receive` with the body's cap and deadline; once the whole body has arrived, `receive` is passed through
    unguarded: what waits on it then is a response listening for the client to go away (a Server-Sent Events
    stream waits for as long as the subscription lasts)."""
    seen = 0
    complete = False

    async def guarded() -> Any:
        nonlocal seen, complete
        if complete:
            return await receive()
        try:
            message = await asyncio.wait_for(receive(), config.BODY_READ_SECONDS)
        except TimeoutError:
            raise BodyRefused(408, f"the request body stopped arriving for {config.BODY_READ_SECONDS:g} s") from None
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyRefused(413, _too_large(limit))
            complete = not message.get("more_body", False)
        return message

    return guarded


async def _refuse(send: Any, status: int, message: str, close: bool = False) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
