"""`hebbs.v1.SubscribeService`: Subscribe (a server stream), Feed and CloseSubscription over the service's
subscription hub (interfaces/subscriptions.py).

Subscribe streams a handshake (the subscription id, no memory: what the SDK waits for) and then one message per
pushed memory until the subscription is closed (CloseSubscription, the client going away, the idle timeout,
shutdown); pushes dropped for a slow reader are counted in the trailing metadata `hebbs-dropped`. The SDK's
push message has no strategy details: REST's pushes carry them (docs/subscribe.md).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import grpc
from hebbs._generated import hebbs_pb2 as pb
from hebbs._generated import hebbs_pb2_grpc as pb_grpc

from engine.api.subscriptions import FeedRequest, SubscribeRequest
from engine.errors import HebbsError, MemoryNotFoundError
from interfaces.auth import bearer_token
from interfaces.errors import outcome_of
from interfaces.grpc import convert
from interfaces.grpc.calls import authorize
from interfaces.grpc.calls import rpc as _rpc
from interfaces.service import HebbsService


def _owner(service: HebbsService, context: Any) -> str:
    return service.subscriptions.owner_of(bearer_token(dict(context.invocation_metadata()).get("authorization")))


class SubscribeServicer(pb_grpc.SubscribeServiceServicer):

    def __init__(self, service: HebbsService) -> None:
        self.service = service

    def Subscribe(self, request: Any, context: Any) -> Iterator[Any]:  # noqa: N802
        hub = self.service.subscriptions
        try:
            tenant = authorize(self.service, request, context)
            sub = hub.open(_owner(self.service, context), SubscribeRequest.parse(convert.subscribe_fields(request)),
                           tenant)
        except HebbsError as exc:
            context.abort(getattr(grpc.StatusCode, outcome_of(exc).grpc_status), str(exc))
        ready = threading.Event()
        sub.listeners.append(ready.set)
        context.add_callback(lambda: hub.close(sub.id))  # the client cancelled or went away
        try:
            yield pb.SubscribePushMessage(subscription_id=sub.id)
            while context.is_active():
                ready.clear()
                for push in sub.take():
                    yield convert.push_to_proto(sub.id, push)
                if sub.closed and not sub.stream.pending():
                    break
                ready.wait(timeout=1.0)
        finally:
            hub.close(sub.id)
            context.set_trailing_metadata((("hebbs-dropped", str(sub.stream.dropped)),))

    @_rpc
    def Feed(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        self.service.subscriptions.feed(request.subscription_id, _owner(self.service, context),
                                        FeedRequest.parse({"text": request.text}))
        return pb.FeedResponse()

    @_rpc
    def CloseSubscription(self, request: Any, context: Any, tenant: str) -> Any:  # noqa: N802
        if not self.service.subscriptions.close(request.subscription_id, _owner(self.service, context)):
            raise MemoryNotFoundError(f"no open subscription {request.subscription_id}")
        return pb.CloseSubscriptionResponse()
