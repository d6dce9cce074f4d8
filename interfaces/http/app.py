"""The REST API: each route turns its body into an `engine.api` operation, calls the shared service and
sends the response's `to_dict()`; every error is `{"error": "..."}` with the status from
`interfaces.errors`. Routes are plain `def`s, so FastAPI runs them on its thread pool: reads in parallel.

Memories also carry the fields the official SDK's `HebbsRestClient` reads (`memory_id`, `created_at_us`,
`last_accessed_at_us`; flat memory fields on recall results; counts), so it works unchanged.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, File, Query, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.requests import Request
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from engine.errors import HebbsError, ValidationError
from interfaces.errors import outcome_of
from interfaces.http.schemas import (
    EdgesBody,
    ForgetBody,
    IndexBody,
    MemoryBody,
    PrimeBody,
    RecallBody,
    RescoreBody,
    ReviseBody,
)
from interfaces.http.wire import forget_to_wire, memory_to_wire, recall_to_wire
from interfaces.service import VERSION, HebbsService

log = logging.getLogger("hebbs.http")

_bearer = HTTPBearer(auto_error=False, description="An API key: `hebbs keys create` (or HEBBS_API_KEY).")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _renamed(fields: dict[str, Any], aliases: Mapping[str, str]) -> dict[str, Any]:
    """The official SDK's field names (`ids`, `strategy`, ...) as the engine's; both at once is an error."""
    for alias, name in aliases.items():
        if alias in fields:
            if name in fields:
                raise ValidationError(f"give {name} or {alias}, not both")
            value = fields.pop(alias)
            fields[name] = [value] if name == "strategies" and isinstance(value, str) else value
    return fields


def create_app(service: HebbsService) -> FastAPI:
    """The FastAPI app over `service`. Swagger UI at /docs is served from the `swagger-ui-bundle` package."""
    app = FastAPI(
        title="hebbs",
        version=VERSION,
        description="A cognitive memory engine for AI agents: remember, recall (similarity, temporal, causal, "
        "analogical) with a tunable composite score, revise, forget.",
        docs_url=None,
        redoc_url=None,
    )
    _install_docs(app)
    app.add_middleware(_JsonByDefault)

    @app.exception_handler(HebbsError)
    async def hebbs_error(_: Request, exc: HebbsError) -> JSONResponse:
        return _error(outcome_of(exc).http_status, str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        message = str(first.get("msg", "invalid request"))
        return _error(422, f"{where}: {message}" if where else f"invalid request body: {message}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return _error(500, f"internal error: {type(exc).__name__}")

    def authorized(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
        service.authorize(creds.credentials if creds else None)

    guarded = [Depends(authorized)]
    call = service.call

    # --- health (no key needed) ----------------------------------------------------------------------
    @app.get("/v1/health/live", tags=["health"])
    def live() -> dict[str, str]:
        """The process is up."""
        return {"status": "live"}

    @app.get("/v1/health/ready", tags=["health"])
    def ready() -> dict[str, str]:
        """The store is open and answers."""
        call("stats", {})
        return {"status": "ready"}

    @app.get("/v1/system/health", tags=["health"])
    def system_health() -> dict[str, Any]:
        """Status, version and counts (what the SDK's `status()` reads)."""
        stats = call("stats", {}).to_dict()
        return {"status": "ok", "version": VERSION, "engine": "hebbs-workbench",
                "uptime_seconds": round(service.uptime_seconds(), 3), **stats}

    # --- memories ------------------------------------------------------------------------------------
    @app.post("/v1/memories", tags=["memories"], dependencies=guarded, status_code=201)
    def remember(body: MemoryBody) -> dict[str, Any]:
        """Remember one memory, or a batch (`{"items": [...]}`: all or nothing)."""
        fields = body.fields()
        if "items" in fields:
            return {"memories": [memory_to_wire(m) for m in call("remember_many", fields).memories]}
        return memory_to_wire(call("remember", fields))

    @app.get("/v1/memories", tags=["memories"], dependencies=guarded)
    def list_memories(
        entity_id: str | None = None,
        kind: str | None = None,
        time_range: str | None = None,
        min_importance: float | None = None,
        include_revisions: bool = True,
        limit: Annotated[int | None, Query()] = None,
        offset: Annotated[int | None, Query()] = None,
    ) -> dict[str, Any]:
        """Memories filtered by entity, kind, time and importance, newest first, one page with the total."""
        given = {"entity_id": entity_id, "kind": kind, "time_range": time_range, "min_importance": min_importance,
                 "limit": limit, "offset": offset}
        page = call("list", {**{k: v for k, v in given.items() if v is not None},
                             "include_revisions": include_revisions})
        return {**page.to_dict(), "memories": [memory_to_wire(m) for m in page.memories]}

    @app.get("/v1/memories/{memory_id}", tags=["memories"], dependencies=guarded)
    def get(memory_id: str) -> dict[str, Any]:
        return memory_to_wire(call("get", {"memory_id": memory_id}))

    @app.put("/v1/memories/{memory_id}", tags=["memories"], dependencies=guarded)
    def revise(memory_id: str, body: ReviseBody) -> dict[str, Any]:
        """Change a memory in place; the old state is kept as a linked revision."""
        return memory_to_wire(call("revise", {**body.fields(), "memory_id": memory_id}))

    @app.delete("/v1/memories/{memory_id}", tags=["memories"], dependencies=guarded)
    def delete(memory_id: str) -> dict[str, Any]:
        return forget_to_wire(call("forget", {"memory_ids": [memory_id]}))

    @app.post("/v1/forget", tags=["memories"], dependencies=guarded)
    def forget(body: ForgetBody) -> dict[str, Any]:
        """Forget memories by id, or every memory of an entity."""
        return forget_to_wire(call("forget", _renamed(body.fields(), {"ids": "memory_ids"})))

    @app.post("/v1/memories/{memory_id}/edges", tags=["memories"], dependencies=guarded, status_code=201)
    def add_edges(memory_id: str, body: EdgesBody) -> dict[str, Any]:
        """Edges from this memory to others: `{"edges": [{"target", "type", "confidence"}]}` or TARGET:TYPE[:CONF]."""
        return call("add_edges", {"source": memory_id, "edges": body.edges}).to_dict()

    # --- recall --------------------------------------------------------------------------------------
    def recall(body: RecallBody) -> dict[str, Any]:
        """Recall memories for a cue with one or more strategies, ranked by the composite score; each
        result carries `score`, its four `signals` and every strategy's `strategy_details`."""
        return recall_to_wire(call("recall", _renamed(body.fields(), {"strategy": "strategies"})))

    app.post("/v1/memories/recall", tags=["recall"], dependencies=guarded)(recall)
    app.post("/v1/recall", tags=["recall"], dependencies=guarded)(recall)

    @app.post("/v1/rescore", tags=["recall"], dependencies=guarded)
    def rescore(body: RescoreBody) -> dict[str, Any]:
        """Re-rank results already retrieved under new weights: no retrieval, no access counted."""
        return recall_to_wire(call("rescore", body.fields()))

    @app.post("/v1/prime", tags=["recall"], dependencies=guarded)
    def prime(body: PrimeBody) -> dict[str, Any]:
        """An entity's memories ranked by an optional cue: context to prime an agent with."""
        fields = _renamed(body.fields(), {"similarity_cue": "cue", "max_memories": "top_k"})
        return recall_to_wire(call("prime", fields))

    # --- documents -----------------------------------------------------------------------------------
    @app.post("/v1/index", tags=["documents"], dependencies=guarded)
    def index(body: IndexBody) -> dict[str, Any]:
        """Index files or folders that are on the server's own file system."""
        return call("ingest", body.fields()).to_dict()

    @app.post("/v1/upload", tags=["documents"], dependencies=guarded)
    def upload(files: Annotated[list[UploadFile], File(description="Markdown, text or JSON chats.")]) -> dict[str, Any]:
        """Index uploaded documents (multipart field `files`); their names keep their folders."""
        with tempfile.TemporaryDirectory(prefix="hebbs-upload-") as tmp:
            root = Path(tmp)
            names = []
            for item in files:
                relative = Path(item.filename or "upload.txt")
                if relative.is_absolute() or ".." in relative.parts:
                    raise ValidationError(f"an uploaded file name must be relative, got {item.filename!r}")
                target = root / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                with target.open("wb") as out:
                    shutil.copyfileobj(item.file, out)
                names.append(str(relative))
            summary = call("ingest", {"paths": [str(root)]}).to_dict()
        return {"uploaded": len(names), "files": names, **summary}

    # --- graph, entities, stats ------------------------------------------------------------------------
    @app.get("/v1/graph/{memory_id}", tags=["graph"], dependencies=guarded)
    def graph(
        memory_id: str, depth: int | None = None, max_nodes: int | None = None, edge_types: str | None = None
    ) -> dict[str, Any]:
        """The memories within `depth` edges of one memory and the edges among them."""
        given = {"depth": depth, "max_nodes": max_nodes, "edge_types": edge_types}
        params = {k: v for k, v in given.items() if v is not None}
        return call("neighbourhood", {"memory_id": memory_id, **params}).to_dict()

    @app.get("/v1/entities", tags=["graph"], dependencies=guarded)
    def entities() -> dict[str, Any]:
        """Entity ids that have memories on a timeline."""
        with service.reading():
            names = service.engine.entities()
        return {"entities": names, "count": len(names)}

    @app.get("/v1/stats", tags=["graph"], dependencies=guarded)
    def stats() -> dict[str, int]:
        return call("stats", {}).to_dict()

    return app


class _JsonByDefault:
    """A body sent without a JSON content type (`curl -d '{...}'` sends form encoding) is read as JSON, so
    the documented curl examples work as typed. Uploads keep their multipart type."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] in ("POST", "PUT") and scope["path"] != "/v1/upload":
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-type"]
            given = dict(scope["headers"]).get(b"content-type", b"")
            if not given or given.startswith(b"application/x-www-form-urlencoded"):
                scope = {**scope, "headers": [*headers, (b"content-type", b"application/json")]}
        await self.app(scope, receive, send)


def _install_docs(app: FastAPI) -> None:
    """/docs from the Swagger UI files inside the `swagger-ui-bundle` package: no CDN, works offline."""
    from swagger_ui_bundle import swagger_ui_path

    app.mount("/static/swagger", StaticFiles(directory=swagger_ui_path), name="swagger")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="hebbs API",
            swagger_js_url="/static/swagger/swagger-ui-bundle.js",
            swagger_css_url="/static/swagger/swagger-ui.css",
            swagger_favicon_url="/static/swagger/favicon-32x32.png",
        )
