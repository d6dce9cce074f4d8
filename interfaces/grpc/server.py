"""The gRPC servicers: `hebbs.v1.MemoryService` and `HealthService` over `interfaces.service.HebbsService`

Each RPC converts its message to an engine operation (`interfaces.grpc.convert`), calls the service and
converts the response back; a `HebbsError` becomes the status code of `interfaces.errors` with the
message as details. The key arrives as metadata `authorization: Bearer <key>` (what the SDK sends).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from hebbs._generated import hebbs_pb2 as pb
from hebbs._generated import hebbs_pb2_grpc as pb_grpc

from engine import config
from interfaces.auth import ListenError
from interfaces.grpc import convert
from interfaces.grpc.calls import rpc as _rpc
from interfaces.grpc.reflect import ReflectServicer
from interfaces.grpc.subscribe import SubscribeServicer
from interfaces.listen import listen
from interfaces.service import VERSION, HebbsService

log = logging.getLogger("hebbs.grpc")
GRPC_WORKERS = 16


class MemoryServicer(pb_grpc.MemoryServiceServicer):
    def __init__(self, service: HebbsService) -> None:
        self.service = service

    @_rpc
    def Remember(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802 (gRPC method names)
        memory = self.service.call(tenant, "remember", convert.remember_fields(request))
        return pb.RememberResponse(memory=convert.memory_to_proto(memory))

    @_rpc
    def Get(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        memory = self.service.call(tenant, "get", {"memory_id": convert.memory_id(request.memory_id)})
        return pb.GetResponse(memory=convert.memory_to_proto(memory))

    @_rpc
    def Recall(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        response = self.service.call(tenant, "recall", convert.recall_fields(request))
        return pb.RecallResponse(results=[convert.result_to_proto(r) for r in response.results])

    @_rpc
    def Prime(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        response = self.service.call(tenant, "prime", convert.prime_fields(request))
        results = [convert.result_to_proto(r) for r in response.results]
        similar = sum(1 for r in response.results if any(d.strategy.value == "similarity" for d in r.strategy_details))
        return pb.PrimeResponse(results=results, temporal_count=len(results) - similar, similarity_count=similar)

    @_rpc
    def Revise(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        memory = self.service.call(tenant, "revise", convert.revise_fields(request))
        return pb.ReviseResponse(memory=convert.memory_to_proto(memory))

    @_rpc
    def Forget(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        fields = convert.forget_fields(request, self.service.engine.clock.now())
        response = self.service.call(tenant, "forget", fields)
        return pb.ForgetResponse(forgotten_count=len(response.forgotten), cascade_count=response.cascade_count,
                                 tombstone_count=response.tombstone_count)

    @_rpc
    def SetPolicy(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        self.service.call(tenant, "set_policy", convert.policy_fields(request))
        return pb.SetPolicyResponse(applied=True)


class HealthServicer(pb_grpc.HealthServiceServicer):
    """Health needs no key, like REST's health routes."""

    def __init__(self, service: HebbsService) -> None:
        self.service = service

    def Check(self, request: Any, context: Any) -> Any:  # noqa: N802
        ok, counts = self.service.health()  # never waits for the store's lock
        memories = int(counts.get("memories") or 0)
        status = pb.HealthCheckResponse.SERVING if ok else pb.HealthCheckResponse.NOT_SERVING
        return pb.HealthCheckResponse(status=status, version=VERSION, memory_count=memories,
                                      uptime_seconds=int(self.service.uptime_seconds()))


class _DecodeErrors(grpc.ServerInterceptor):
    """Requests are decoded inside the handler instead of by grpcio, so garbage or truncated protobuf,
    invalid UTF-8 in a string field and nesting past protobuf's recursion limit answer INVALID_ARGUMENT
    with the reason (grpcio's own decoding failure is an INTERNAL "Exception deserializing request!")."""

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        handler = continuation(details)
        if handler is None or handler.request_deserializer is None or not handler.unary_unary:
            return handler
        decode, behaviour = handler.request_deserializer, handler.unary_unary

        def decoded(raw: bytes, context: grpc.ServicerContext) -> Any:
            try:
                request = decode(raw)
            except Exception as exc:  # DecodeError, and whatever else a hostile message provokes
                reason = str(exc) or type(exc).__name__
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the request is not a valid "
                              f"{details.method.rsplit('/', 1)[-1]} message: {reason}")
            return behaviour(request, context)

        return grpc.unary_unary_rpc_method_handler(decoded, request_deserializer=None,
                                                   response_serializer=handler.response_serializer)


def bind_grpc(host: str, port: int, tls: Any = None) -> grpc.Server:

    """A gRPC server bound to host:port, not yet serving (`serve_grpc` starts it). The port is exclusive:
    grpcio binds with SO_REUSEPORT by default, which lets a second server on the same port take half of
    the new connections; it is switched off, so a port in use is a `ListenError`. `tls`: `server.Tls`."""
    server = grpc.server(
        ThreadPoolExecutor(max_workers=GRPC_WORKERS, thread_name_prefix="hebbs-grpc"),
        interceptors=[_DecodeErrors()],
        options=[("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", config.MAX_REQUEST_BYTES)],
    )
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if port:
        listen(host, port, "gRPC").close()  # a port in use is named here in one line, before grpcio logs its own
    try:
        if tls is None:
            bound = server.add_insecure_port(address)
        else:
            bound = server.add_secure_port(address, grpc.ssl_server_credentials([tls.pair()]))
    except RuntimeError:  # newer grpcio raises instead of returning 0
        bound = 0
    if bound == 0:
        raise ListenError(f"cannot listen for gRPC on {address}: the port is in use or the address is not this "
                          "host's")
    return server


def serve_grpc(server: grpc.Server, service: HebbsService) -> grpc.Server:
    pb_grpc.add_MemoryServiceServicer_to_server(MemoryServicer(service), server)
    pb_grpc.add_ReflectServiceServicer_to_server(ReflectServicer(service), server)
    pb_grpc.add_HealthServiceServicer_to_server(HealthServicer(service), server)
    pb_grpc.add_SubscribeServiceServicer_to_server(SubscribeServicer(service), server)
    server.start()
    return server


def start_grpc(service: HebbsService, host: str, port: int) -> grpc.Server:
    """A started gRPC server on host:port (what tests run in-process)."""
    return serve_grpc(bind_grpc(host, port), service)
