"""The wrapper every unary RPC runs in: authorise the call, run it, and map errors to gRPC status codes."""

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


def rpc(method: Callable[[Any, Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
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
