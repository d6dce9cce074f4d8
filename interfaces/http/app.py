"""The REST API: each route turns its body into an `engine.api` operation, calls the shared service and
sends the response's `to_dict()`; every error is `{"error": "..."}` with the status from
`interfaces.errors`. Routes are plain `def`s, so FastAPI runs them on its thread pool: reads in parallel.

Memories also carry the fields the official SDK's `HebbsRestClient` reads (`memory_id`, `created_at_us`,
`last_accessed_at_us`; flat memory fields on recall results; counts), so it works unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from fastapi import FastAPI, File, Header, Query, Response, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.requests import Request
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from engine import config
from engine.api import IngestRequest, parse_request
from engine.errors import HebbsError, ValidationError
from interfaces.errors import outcome_of
from interfaces.http.limits import BodyRefused, RequestGuard
from interfaces.http.reviews import add_review_routes
from interfaces.http.schemas import (
    EdgesBody,
    ForgetBody,
    IndexBody,
    MemoryBody,
    PolicyBody,
    PrimeBody,
    RecallBody,
    RescoreBody,
    ReviseBody,
    SweepBody,
)
from interfaces.http.subscribe import add_subscribe_routes
from interfaces.http.tenant import Tenant
from interfaces.http.uploads import save_uploads, upload_name
from interfaces.http.wire import forget_to_wire, memory_to_wire, recall_to_wire
from interfaces.service import VERSION, HebbsService, PartialWriteError

log = logging.getLogger("hebbs.http")

IDEMPOTENCY_HELP = (f"Any text up to {config.IDEMPOTENCY_KEY_BYTES} bytes, new per write: a retry with the same "
                    "key gets the first reply instead of storing again.")


def _error(status: int, message: str, stored: dict[str, Any] | None = None) -> JSONResponse:
    """`{"error": ...}`; a failed write answered 5xx also says whether anything was stored (a 4xx never
    stores anything: the request was refused before the write)."""
    return JSONResponse({"error": message, **(stored or {} if status >= 500 else {})}, status_code=status)


_READS_BY_POST = ("/v1/memories/recall", "/v1/recall", "/v1/rescore", "/v1/prime")


def _stored(request: Request, error: BaseException | None) -> dict[str, Any] | None:
    """For a write that failed on the server's side, whether anything was stored (so a client knows whether
    to retry): 0 when the engine rolled the whole write back or never began it (every `HebbsError`: a full
    disk, a server shutting down), the count and ids when a chunked batch committed some chunks, null when
    unknown (a bug mid-write)."""
    if request.method not in ("POST", "PUT", "DELETE") or request.url.path in _READS_BY_POST:
        return None
    if isinstance(error, PartialWriteError):
        return {"stored": len(error.stored), "stored_ids": [m.id for m in error.stored]}
    if error is None or isinstance(error, HebbsError):
        return {"stored": 0}
    return {"stored": None}


def _renamed(fields: dict[str, Any], aliases: Mapping[str, str]) -> dict[str, Any]:
    """The official SDK's field names (`ids`, `strategy`, ...) as the engine's; both at once is an error."""
    for alias, name in aliases.items():
        if alias in fields:
            if name in fields:
                raise ValidationError(f"give {name} or {alias}, not both")
            value = fields.pop(alias)
            fields[name] = [value] if name == "strategies" and isinstance(value, str) else value
    return fields


def create_app(service: HebbsService, allowed_hosts: Sequence[str] = ()) -> FastAPI:
    """The FastAPI app over `service`. Swagger UI at /docs is served from the `swagger-ui-bundle` package.
    `allowed_hosts`: names a client may reach it under besides IP literals and localhost (the bound host
    and each --allow-host; interfaces/http/limits.py)."""
    app = FastAPI(
        title="hebbs",
        version=VERSION,
        description="A cognitive memory engine for AI agents: remember, recall (similarity, temporal, causal, "
        "analogical) with a tunable composite score, revise, forget.",
        docs_url=None,
        redoc_url=None,
    )
    _install_docs(app)
    app.add_middleware(RequestGuard, allowed_hosts=allowed_hosts)

    @app.exception_handler(HebbsError)
    async def hebbs_error(request: Request, exc: HebbsError) -> JSONResponse:
        return _error(outcome_of(exc).http_status, str(exc), _stored(request, exc))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        message = str(first.get("msg", "invalid request"))
        return _error(422, f"{where}: {message}" if where else f"invalid request body: {message}",
                      _stored(request, None))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        response = _error(exc.status_code, str(exc.detail), _stored(request, None))
        if isinstance(exc, BodyRefused):  # the rest of the body is not read: the connection cannot go on
            response.headers["Connection"] = "close"
        return response

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return _error(500, f"internal error: {type(exc).__name__}", _stored(request, exc))

    app.state.service = service  # what `Tenant` authorises against
    call = service.call

    # --- health (no key needed) ----------------------------------------------------------------------
    @app.get("/v1/health/live", tags=["health"])
    def live() -> dict[str, str]:
        """The process is up."""
        return {"status": "live"}

    @app.get("/v1/health/ready", tags=["health"])
    def ready() -> JSONResponse:
        """The store is open (answered without waiting for the store's lock: a long write never fails it)."""
        ok, _ = service.health()
        return JSONResponse({"status": "ready" if ok else "stopping"}, status_code=200 if ok else 503)

    @app.get("/v1/system/health", tags=["health"])
    def system_health() -> dict[str, Any]:
        """Status, version and counts as of the last write (what the SDK's `status()` reads)."""
        ok, counts = service.health()
        return {"status": "ok" if ok else "stopping", "version": VERSION, "engine": "hebbs-workbench",
                "uptime_seconds": round(service.uptime_seconds(), 3), **counts}

    # --- memories ------------------------------------------------------------------------------------
    @app.post("/v1/memories", tags=["memories"], status_code=201)
    def remember(tenant: Tenant, body: MemoryBody, response: Response,
                 idempotency_key: Annotated[str | None, Header(description=IDEMPOTENCY_HELP)] = None) -> dict[str, Any]:
        """Remember one memory, or a batch (`{"items": [...]}`, capped at config.MAX_BATCH_ITEMS; a batch over
        config.WRITE_CHUNK_ITEMS is committed in chunks, and a failure says what was stored)."""
        fields = body.fields()

        def run() -> dict[str, Any]:
            if "items" in fields:
                return {"memories": [memory_to_wire(m) for m in call(tenant, "remember_many", fields).memories]}
            return memory_to_wire(call(tenant, "remember", fields))

        reply, replayed = service.once(tenant, idempotency_key, "remember", run)
        if replayed:
            response.headers["Idempotent-Replayed"] = "true"
        return reply

    @app.get("/v1/memories", tags=["memories"])
    def list_memories(
        tenant: Tenant,
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
        page = call(tenant, "list", {**{k: v for k, v in given.items() if v is not None},
                                     "include_revisions": include_revisions})
        return {**page.to_dict(), "memories": [memory_to_wire(m) for m in page.memories]}

    @app.get("/v1/memories/{memory_id}", tags=["memories"])
    def get(tenant: Tenant, memory_id: str) -> dict[str, Any]:
        return memory_to_wire(call(tenant, "get", {"memory_id": memory_id}))

    @app.put("/v1/memories/{memory_id}", tags=["memories"])
    def revise(tenant: Tenant, memory_id: str, body: ReviseBody) -> dict[str, Any]:
        """Change a memory in place; the old state is kept as a linked revision."""
        return memory_to_wire(call(tenant, "revise", {**body.fields(), "memory_id": memory_id}))

    @app.delete("/v1/memories/{memory_id}", tags=["memories"])
    def delete(tenant: Tenant, memory_id: str) -> dict[str, Any]:
        return forget_to_wire(call(tenant, "forget", {"memory_ids": [memory_id]}))

    @app.post("/v1/forget", tags=["memories"])
    def forget(tenant: Tenant, body: ForgetBody) -> dict[str, Any]:
        """Forget memories by id, every memory of an entity, or those matching criteria (not_accessed_since,
        access_count_below, kind, decay_score_below): everything given is ANDed. `dry_run: true` lists what
        would go and changes nothing. A forget by criteria leaves tombstones (GET /v1/tombstones)."""
        return forget_to_wire(call(tenant, "forget", _renamed(body.fields(), {"ids": "memory_ids"})))

    # --- policy ----------------------------------------------------------------------------------------
    @app.get("/v1/policy", tags=["policy"])
    def get_policy(tenant: Tenant) -> dict[str, Any]:
        """The tenant's policy: decay half-life, auto-forget threshold, snapshots kept per memory."""
        return dict(call(tenant, "get_policy", {}).to_dict())

    @app.put("/v1/policy", tags=["policy"])
    def set_policy(tenant: Tenant, body: PolicyBody) -> dict[str, Any]:
        """Change the tenant's policy (the official SDK's set_policy); values left out are kept."""
        return dict(call(tenant, "set_policy", body.fields()).to_dict())

    @app.post("/v1/sweep", tags=["policy"])
    def sweep(tenant: Tenant, body: SweepBody) -> dict[str, Any]:
        """The auto-forget sweep: forget every memory whose decay score is below the policy's
        auto_forget_threshold, leaving tombstones; `dry_run: true` lists them and changes nothing."""
        return forget_to_wire(call(tenant, "sweep", body.fields()))

    @app.get("/v1/tombstones", tags=["policy"])
    def tombstones(tenant: Tenant,
                   limit: Annotated[int, Query(ge=1, le=config.MAX_LIST_LIMIT)] = 100) -> dict[str, Any]:
        """What is left of memories forgotten by criteria or by the sweep, newest first: id, time, reason
        and the SHA-256 of the content (never the content)."""
        with service.reading():
            stones = service.engine_of(tenant).retention.tombstones.newest(limit)
        return {"tombstones": [t.to_dict() for t in stones], "count": len(stones)}

    @app.post("/v1/memories/{memory_id}/edges", tags=["memories"], status_code=201)
    def add_edges(tenant: Tenant, memory_id: str, body: EdgesBody) -> dict[str, Any]:
        """Edges from this memory to others: `{"edges": [{"target", "type", "confidence"}]}` or TARGET:TYPE[:CONF]."""
        return call(tenant, "add_edges", {"source": memory_id, "edges": body.edges}).to_dict()

    # --- recall --------------------------------------------------------------------------------------
    def recall(tenant: Tenant, body: RecallBody) -> dict[str, Any]:
        """Recall memories for a cue with one or more strategies, ranked by the composite score; each
        result carries `score`, its four `signals` and every strategy's `strategy_details`."""
        return recall_to_wire(call(tenant, "recall", _renamed(body.fields(), {"strategy": "strategies"})))

    app.post("/v1/memories/recall", tags=["recall"])(recall)
    app.post("/v1/recall", tags=["recall"])(recall)

    @app.post("/v1/rescore", tags=["recall"])
    def rescore(tenant: Tenant, body: RescoreBody) -> dict[str, Any]:
        """Re-rank results already retrieved under new weights: no retrieval, no access counted."""
        return recall_to_wire(call(tenant, "rescore", body.fields()))

    @app.post("/v1/prime", tags=["recall"])
    def prime(tenant: Tenant, body: PrimeBody) -> dict[str, Any]:
        """An entity's memories ranked by an optional cue: context to prime an agent with."""
        fields = _renamed(body.fields(), {"similarity_cue": "cue", "max_memories": "top_k"})
        return recall_to_wire(call(tenant, "prime", fields))

    # --- documents -----------------------------------------------------------------------------------
    @app.post("/v1/index", tags=["documents"])
    def index(tenant: Tenant, body: IndexBody) -> dict[str, Any]:
        """Index files or folders on the server's own file system, under its --index-root folders only (none
        configured: refused with 403)."""
        request = parse_request("ingest", body.fields())
        assert isinstance(request, IngestRequest)
        service.check_index_paths(request.paths)
        return call(tenant, "ingest", body.fields()).to_dict()

    @app.post("/v1/upload", tags=["documents"])
    def upload(
        tenant: Tenant,
        files: Annotated[list[UploadFile], File(description="Markdown, text or JSON chats.")],
        response: Response,
        idempotency_key: Annotated[str | None, Header(description=IDEMPOTENCY_HELP)] = None,
    ) -> dict[str, Any]:
        """Index uploaded documents (multipart field `files`). Each is kept in the data dir under its name (folders
        allowed): uploading a name again replaces that file and its memories, or does nothing if unchanged."""

        def run() -> dict[str, Any]:
            names = [upload_name(item.filename) for item in files]
            with service.writing():
                saved = save_uploads(service.engine_of(tenant).data_dir,
                                     [(n, f.file) for n, f in zip(names, files, strict=True)])
                summary = call(tenant, "ingest", {"paths": [str(p) for p in saved]}).to_dict()
            return {"uploaded": len(names), "files": [str(n) for n in names], **summary}

        reply, replayed = service.once(tenant, idempotency_key, "upload", run)
        if replayed:
            response.headers["Idempotent-Replayed"] = "true"
        return reply

    # --- graph, entities, stats ------------------------------------------------------------------------
    @app.get("/v1/graph/{memory_id}", tags=["graph"])
    def graph(
        tenant: Tenant,
        memory_id: str, depth: int | None = None, max_nodes: int | None = None, edge_types: str | None = None
    ) -> dict[str, Any]:
        """The memories within `depth` edges of one memory and the edges among them."""
        given = {"depth": depth, "max_nodes": max_nodes, "edge_types": edge_types}
        params = {k: v for k, v in given.items() if v is not None}
        return call(tenant, "neighbourhood", {"memory_id": memory_id, **params}).to_dict()

    @app.get("/v1/entities", tags=["graph"])
    def entities(tenant: Tenant) -> dict[str, Any]:
        """Entity ids that have memories on a timeline."""
        with service.reading():
            names = service.engine_of(tenant).entities()
        return {"entities": names, "count": len(names)}

    @app.get("/v1/stats", tags=["graph"])
    def stats(tenant: Tenant) -> dict[str, int]:
        return call(tenant, "stats", {}).to_dict()

    add_review_routes(app, call)
    add_subscribe_routes(app, service)

    return app


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
