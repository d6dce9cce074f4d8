"""The wrapper every unary RPC runs in: authorise the call and choose its tenant, run it, and map errors to gRPC
status codes. The tenant is the request's `tenant_id` (what the official SDK sets from `HebbsClient(tenant_id=)`),
else the key's own (`HebbsService.authorize`); the method gets it as an argument, so it cannot run without one."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import grpc

from engine.errors import HebbsError
from interfaces.auth import bearer_token
from interfaces.errors import outcome_of
from interfaces.service import HebbsService

log = logging.getLogger("hebbs.grpc")


def authorize(service: HebbsService, request: Any, context: grpc.ServicerContext) -> str:
    """The tenant a call is served for (its key and its `tenant_id`), or the refusal (a `HebbsError`)."""
    key = bearer_token(dict(context.invocation_metadata()).get("authorization"))
    return service.authorize(key, getattr(request, "tenant_id", None) or None)


def rpc(method: Callable[[Any, Any, Any, str], Any]) -> Callable[[Any, Any, Any], Any]:
    """Authorise the call, run it for its tenant, and turn errors into gRPC status codes (never INTERNAL for bad
    input)."""

    def wrapped(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
        service: HebbsService = self.service
        try:
            return method(self, request, context, authorize(service, request, context))
        except HebbsError as exc:
            context.abort(getattr(grpc.StatusCode, outcome_of(exc).grpc_status), str(exc))
        except Exception as exc:  # a bug: report it without a traceback on the wire
            if context.code() not in (None, grpc.StatusCode.OK):
                raise  # the method aborted the call itself (SetPolicy): its status stands
            log.exception("unexpected error in %s", method.__name__)
            context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}")

    wrapped.__name__ = method.__name__
    return wrapped
