"""The gRPC servicers: `hebbs.v1.MemoryService` and `HealthService` over `interfaces.service.HebbsService`.

Each RPC converts its message to an engine operation (`interfaces.grpc.convert`), calls the service and
converts the response back; a `HebbsError` becomes the status code of `interfaces.errors` with the
message as details. The key arrives as metadata `authorization: Bearer <key>` (what the SDK sends).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from hebbs._generated import hebbs_pb2 as pb
from hebbs._generated import hebbs_pb2_grpc as pb_grpc

from engine.errors import HebbsError
from interfaces.auth import ListenError, bearer_token
from interfaces.errors import outcome_of
from interfaces.grpc import convert
from interfaces.service import VERSION, HebbsService

log = logging.getLogger("hebbs.grpc")
GRPC_WORKERS = 16


def _rpc(method: Callable[[Any, Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    """Authorise the call, run it, and turn errors into gRPC status codes (never INTERNAL for bad input)."""

    def wrapped(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
        service: HebbsService = self.service
        try:
            metadata = dict(context.invocation_metadata())
            service.authorize(bearer_token(metadata.get("authorization")))
            return method(self, request, context)
        except HebbsError as exc:
            context.abort(getattr(grpc.StatusCode, outcome_of(exc).grpc_status), str(exc))
        except Exception as exc:  # a bug: report it without a traceback on the wire
            if context.code() not in (None, grpc.StatusCode.OK):
                raise  # the method aborted the call itself (SetPolicy): its status stands
            log.exception("unexpected error in %s", method.__name__)
            context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}")

    wrapped.__name__ = method.__name__
    return wrapped


class MemoryServicer(pb_grpc.MemoryServiceServicer):
    def __init__(self, service: HebbsService) -> None:
        self.service = service

    @_rpc
    def Remember(self, request: Any, context: Any) -> Any:  # noqa: N802 (gRPC method names)
        memory = self.service.call("remember", convert.remember_fields(request))
        return pb.RememberResponse(memory=convert.memory_to_proto(memory))

    @_rpc
    def Get(self, request: Any, context: Any) -> Any:  # noqa: N802
        memory = self.service.call("get", {"memory_id": convert.memory_id(request.memory_id)})
        return pb.GetResponse(memory=convert.memory_to_proto(memory))

    @_rpc
    def Recall(self, request: Any, context: Any) -> Any:  # noqa: N802
        response = self.service.call("recall", convert.recall_fields(request))
        return pb.RecallResponse(results=[convert.result_to_proto(r) for r in response.results])

    @_rpc
    def Prime(self, request: Any, context: Any) -> Any:  # noqa: N802
        response = self.service.call("prime", convert.prime_fields(request))
        results = [convert.result_to_proto(r) for r in response.results]
        similar = sum(1 for r in response.results if any(d.strategy.value == "similarity" for d in r.strategy_details))
        return pb.PrimeResponse(results=results, temporal_count=len(results) - similar, similarity_count=similar)

    @_rpc
    def Revise(self, request: Any, context: Any) -> Any:  # noqa: N802
        memory = self.service.call("revise", convert.revise_fields(request))
        return pb.ReviseResponse(memory=convert.memory_to_proto(memory))

    @_rpc
    def Forget(self, request: Any, context: Any) -> Any:  # noqa: N802
        response = self.service.call("forget", convert.forget_fields(request))
        return pb.ForgetResponse(forgotten_count=len(response.forgotten))

    @_rpc
    def SetPolicy(self, request: Any, context: Any) -> Any:  # noqa: N802
        context.abort(grpc.StatusCode.UNIMPLEMENTED,
                      "SetPolicy is not implemented: this engine has no decay or snapshot policies to set")


class HealthServicer(pb_grpc.HealthServiceServicer):
    """Health needs no key, like REST's health routes."""

    def __init__(self, service: HebbsService) -> None:
        self.service = service

    def Check(self, request: Any, context: Any) -> Any:  # noqa: N802
        try:
            memories = self.service.call("stats", {}).memories
            status = pb.HealthCheckResponse.SERVING
        except HebbsError:
            memories, status = 0, pb.HealthCheckResponse.NOT_SERVING
        return pb.HealthCheckResponse(status=status, version=VERSION, memory_count=memories,
                                      uptime_seconds=int(self.service.uptime_seconds()))


def start_grpc(service: HebbsService, host: str, port: int) -> grpc.Server:
    """A started gRPC server on host:port (port 0 picks one; `server.bound_port` tells which)."""
    server = grpc.server(ThreadPoolExecutor(max_workers=GRPC_WORKERS, thread_name_prefix="hebbs-grpc"))
    pb_grpc.add_MemoryServiceServicer_to_server(MemoryServicer(service), server)
    pb_grpc.add_HealthServiceServicer_to_server(HealthServicer(service), server)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError:  # newer grpcio raises instead of returning 0
        bound = 0
    if bound == 0:
        raise ListenError(f"cannot listen for gRPC on {address} (port in use?)")
    server.start()
    return server
