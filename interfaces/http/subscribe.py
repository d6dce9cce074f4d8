"""REST routes of subscriptions (the SDK's SubscribeService over HTTP), on the service's hub
(interfaces/subscriptions.py):

- `POST /v1/subscribe` answers a Server-Sent Events stream: `subscribed` (the subscription id), then one `push`
  per surfaced memory (the memory, its confidence, sequence number and strategy details), `dropped` when a slow
  reader lost pushes (the running count), comment lines as keep-alives, and `closed` at the end.
- `POST /v1/subscribe/{id}/feed` feeds text (`{"text": ...}`); chunks it completes are recalled before it answers.
- `DELETE /v1/subscribe/{id}` closes it; so does the client going away or the idle timeout.

A bad subscription is refused with a JSON 4xx before any stream starts.
"""



import asyncio
import json
import time
from collections.abc import AsyncIterator
from enum import Enum
from typing import Annotated, Any

from fastapi import Depends, FastAPI
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials

from engine.api.subscriptions import FeedRequest, SubscribeRequest
from engine.errors import MemoryNotFoundError
from interfaces.http.schemas import FeedBody, SubscribeBody
from interfaces.http.tenant import Tenant, authorized_tenant, bearer
from interfaces.http.wire import memory_to_wire
from interfaces.service import HebbsService
from interfaces.subscriptions import Subscription

KEEP_ALIVE_SECONDS = 15.0


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


async def _events(service: HebbsService, sub: Subscription) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()

    def wake() -> None:
        loop.call_soon_threadsafe(ready.set)

    sub.listeners.append(wake)
    dropped = 0
    try:
        yield _event("subscribed", {"subscription_id": sub.id, "confidence_threshold": sub.request.confidence_threshold,
                                    "entity_id": sub.request.entity_id})
        while True:
            ready.clear()
            for push in sub.take():
                result = push.item
                yield _event("push", {
                    "subscription_id": sub.id, "sequence_number": push.sequence, "confidence": push.confidence,
                    "memory": memory_to_wire(result.memory), "score": result.score,
                    "strategy_details": [d.to_dict() for d in result.strategy_details],
                    "push_timestamp_us": int(time.time() * 1_000_000),
                })
            if sub.stream.dropped != dropped:
                dropped = sub.stream.dropped
                yield _event("dropped", {"subscription_id": sub.id, "dropped": dropped})
            if sub.closed and not sub.stream.pending():
                yield _event("closed", {"subscription_id": sub.id, "dropped": dropped})
                return
            try:
                await asyncio.wait_for(ready.wait(), timeout=KEEP_ALIVE_SECONDS)
            except TimeoutError:
                yield ": keep-alive\n\n"
    finally:  # the client went away (the stream is cancelled) or the subscription ended: free it
        service.subscriptions.close(sub.id)


def add_subscribe_routes(app: FastAPI, service: HebbsService) -> None:
    tags: list[str | Enum] = ["subscribe"]
    hub = service.subscriptions

    def owner(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> str:
        return hub.owner_of(creds.credentials if creds and service.auth else None)

    @app.post("/v1/subscribe", tags=tags, response_class=StreamingResponse,
              responses={200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events."}})
    def subscribe(tenant: Tenant, body: SubscribeBody, who: Annotated[str, Depends(owner)]) -> StreamingResponse:
        """Open a subscription: a Server-Sent Events stream of the tenant's memories that surface as text is fed."""
        sub = hub.open(who, SubscribeRequest.parse(body.fields()), tenant)
        return StreamingResponse(_events(service, sub), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.post("/v1/subscribe/{subscription_id}/feed", tags=tags, dependencies=[Depends(authorized_tenant)])
    def feed(subscription_id: int, body: FeedBody, who: Annotated[str, Depends(owner)]) -> dict[str, Any]:
        """Feed text as it arrives; the chunks it completes are recalled before this answers."""
        hub.feed(subscription_id, who, FeedRequest.parse(body.fields()))
        return {"subscription_id": subscription_id}

    @app.delete("/v1/subscribe/{subscription_id}", tags=tags, dependencies=[Depends(authorized_tenant)])
    def close(subscription_id: int, who: Annotated[str, Depends(owner)]) -> dict[str, Any]:
        """Close a subscription: its stream ends with a `closed` event."""
        if not hub.close(subscription_id, who):
            raise MemoryNotFoundError(f"no open subscription {subscription_id}")
        return {"subscription_id": subscription_id, "closed": True}
