"""`RemoteEngine`: the engine's `handle(request)` over a running `hebbs serve` (REST), for `hebbs --server URL`.

The CLI parses every input locally exactly as it does without a server (same errors, same exit codes),
then sends the parsed request as JSON to the route of its operation and reads the response back with the
response type's `from_dict`. So the CLI, the workbench and agents can share one store through one owner.
The key comes from `HEBBS_API_KEY`, as for the official SDK.
"""

from __future__ import annotations

import dataclasses
import os
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import quote

from engine import config
from engine.api import (
    EdgesResponse,
    ForgetResponse,
    ListResponse,
    MemoriesResponse,
    NeighbourhoodResponse,
    PolicyResponse,
    RecallResponse,
    Request,
    StatsResponse,
)
from engine.errors import (
    AmbiguousEntityError,
    HebbsError,
    MemoryNotFoundError,
    StoreError,
    ValidationError,
)
from engine.models import Memory
from engine.recall.scoring import ScoringWeights
from interfaces.auth import API_KEY_ENV, TENANT_HEADER, AuthenticationError, PermissionRefusedError

ERROR_OF_STATUS: dict[int, type[HebbsError]] = {
    400: ValidationError, 422: ValidationError, 401: AuthenticationError, 404: MemoryNotFoundError,
    409: AmbiguousEntityError, 503: StoreError, 403: PermissionRefusedError, 421: PermissionRefusedError,
    408: ValidationError, 413: ValidationError, 415: ValidationError,
}


class RemoteError(HebbsError):
    """The server answered with an error that has no more specific class here."""


REVIEW_ROUTES = {
    "reflect": ("POST", "/v1/reflect"), "reflect_prepare": ("POST", "/v1/reflect/prepare"),
    "reflect_commit": ("POST", "/v1/reflect/commit"), "insights": ("GET", "/v1/insights"),
    "contradiction_prepare": ("GET", "/v1/contradictions"),
    "contradiction_commit": ("POST", "/v1/contradictions/commit"),
}


@dataclasses.dataclass(frozen=True)
class WireReply:
    """A reply the CLI reads only as JSON (reflection and review: interfaces/cli/review.py)."""

    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self.data


def plain(value: Any) -> Any:
    """A parsed request's field as JSON the server's `parse` reads back to the same value."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, ScoringWeights):
        return dict(zip(config.DEFAULT_SCORING_WEIGHTS, value.as_tuple(), strict=True))
    if isinstance(value, Path):
        return str(value.resolve())
    if isinstance(value, frozenset | set):
        return sorted(plain(v) for v in value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_payload(value)
    return value


def to_payload(request: Any) -> dict[str, Any]:
    """The fields of a parsed request (or of a dataclass inside one) that are set."""
    out = {}
    for f in dataclasses.fields(request):
        value = getattr(request, f.name)
        if value is not None and value != ():
            out[f.name] = plain(value)
    return out


class RemoteEngine:
    """Sends `engine.api` requests to a server; the same responses `MemoryEngine.handle` returns."""

    def __init__(self, url: str, api_key: str | None = None, timeout: float = config.SERVER_TIMEOUT_SECONDS,
                 tenant: str | None = None) -> None:
        """`tenant`: sent as X-Hebbs-Tenant; None: the server serves the key's own tenant."""
        import httpx

        self.url = url.rstrip("/")
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        if tenant is not None:
            headers[TENANT_HEADER] = tenant
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RemoteEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, method: str, path: str, body: dict[str, Any] | None = None,
              params: dict[str, Any] | None = None) -> Any:
        import httpx

        try:
            reply = self._http.request(method, path, json=body, params=params)
        except httpx.HTTPError as exc:
            raise StoreError(f"cannot reach the hebbs server at {self.url}: {exc}") from exc
        try:
            data = reply.json()
        except ValueError:
            data = {"error": reply.text.strip() or f"HTTP {reply.status_code}"}
        if reply.status_code >= 400:
            message = data.get("error") if isinstance(data, dict) else None
            raise ERROR_OF_STATUS.get(reply.status_code, RemoteError)(message or f"HTTP {reply.status_code}")
        return data

    def handle(self, request: Request) -> Any:
        op = type(request).OP
        body = to_payload(request)
        if op == "remember":
            return Memory.from_dict(self._send("POST", "/v1/memories", body))
        if op == "remember_many":
            return MemoriesResponse.from_dict(self._send("POST", "/v1/memories", body))
        if op == "revise":
            memory_id = body.pop("memory_id")
            return Memory.from_dict(self._send("PUT", f"/v1/memories/{quote(memory_id, safe='')}", body))
        if op == "forget":
            return ForgetResponse.from_dict(self._send("POST", "/v1/forget", body))
        if op == "sweep":
            return ForgetResponse.from_dict(self._send("POST", "/v1/sweep", body))
        if op in ("set_policy", "get_policy"):
            method = "PUT" if op == "set_policy" else "GET"
            return PolicyResponse.from_dict(self._send(method, "/v1/policy", body if method == "PUT" else None))
        if op == "add_edges":
            return self._add_edges(body["edges"])
        if op == "ingest":
            return self._send("POST", "/v1/index", body)
        if op == "get":
            return Memory.from_dict(self._send("GET", f"/v1/memories/{quote(body['memory_id'], safe='')}"))
        if op == "list":
            return ListResponse.from_dict(self._send("GET", "/v1/memories", params=_query(body)))
        if op == "stats":
            return StatsResponse.from_dict(self._send("GET", "/v1/stats"))
        if op == "neighbourhood":
            memory_id = body.pop("memory_id")
            return NeighbourhoodResponse.from_dict(
                self._send("GET", f"/v1/graph/{quote(memory_id, safe='')}", params=_query(body))
            )
        if op in REVIEW_ROUTES:
            method, path = REVIEW_ROUTES[op]
            reply = self._send(method, path, body if method == "POST" else None,
                               params=_query(body) if method == "GET" else None)
            return WireReply(reply)
        route = {"recall": "/v1/memories/recall", "prime": "/v1/prime", "rescore": "/v1/rescore"}[op]
        return RecallResponse.from_dict(self._send("POST", route, body))

    def _add_edges(self, edges: list[dict[str, Any]]) -> EdgesResponse:
        sources = {e["source"] for e in edges}
        if len(sources) != 1:
            raise ValidationError("through a server, the edges of one call must share their source memory")
        source = sources.pop()
        body = {"edges": [{k: v for k, v in e.items() if k in ("target", "type", "confidence")} for e in edges]}
        return EdgesResponse.from_dict(self._send("POST", f"/v1/memories/{quote(source, safe='')}/edges", body))


def _query(fields: dict[str, Any]) -> dict[str, Any]:
    """Request fields as query parameters: lists joined by commas, a time range as START..END."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name == "time_range":
            start, end = value
            out[name] = f"{start or ''}..{end or ''}"
        elif isinstance(value, list):
            out[name] = ",".join(str(v) for v in value)
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        else:
            out[name] = value
    return out
