"""Subscriptions over real servers on loopback: the official SDK's gRPC subscribe and REST's Server-Sent Events
push a memory fed in the same session, once, with its strategy details; entity scope; bad input refused; the
per-key limit; a client that goes away frees its subscription. The hub's bounds (queue, idle timeout, paused
chunks) with a fake recall, to isolate the unit."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from hebbs import HebbsClient
from hebbs._generated import hebbs_pb2 as pb
from hebbs._generated import hebbs_pb2_grpc as pb_grpc
from hebbs.exceptions import HebbsInvalidArgumentError

from engine import ids
from engine.api.subscriptions import FeedRequest, SubscribeRequest
from engine.embedding import SentenceTransformerEmbedder
from engine.errors import MemoryNotFoundError
from engine.facade import MemoryEngine
from engine.models import Memory, MemoryKind, RecallResult, Signals, Strategy, StrategyDetail
from interfaces.service import HebbsService
from interfaces.subscriptions import SubscriptionHub, TooManySubscriptionsError, _similarity
from tests.interfaces.conftest import InProcess, wait_until

BOILER = "The boiler in the basement was serviced in March."
TEA = "Kim prefers tea over coffee."


def _seed(rest: str) -> dict[str, Any]:
    """The two memories' ids: as the SDK's bytes under their text, as text under `<text> id`."""
    with httpx.Client(base_url=rest, timeout=60) as http:
        made = {text: http.post("/v1/memories", json={"content": text, "entity_id": entity}).json()["id"]
                for text, entity in ((BOILER, "house"), (TEA, "kim"))}
    return {text: ids.to_bytes(memory_id) for text, memory_id in made.items()} | {
        f"{text} id": memory_id for text, memory_id in made.items()}


def test_the_sdk_subscribes_over_grpc_and_gets_each_memory_once(in_process: Callable[..., InProcess]) -> None:
    server = in_process()
    made = _seed(server.rest)

    async def scenario() -> None:
        async with HebbsClient(server.grpc) as client:
            with pytest.raises(HebbsInvalidArgumentError, match="confidence_threshold"):
                await client.subscribe(confidence_threshold=1.5)
            sub = await client.subscribe()  # the SDK's default threshold, 0.5
            await sub.feed("When was the basement boiler ")
            await sub.feed("last serviced? ")
            pushes = await sub.listen(timeout=30, max_pushes=1)
            assert [p.memory.id for p in pushes] == [made[BOILER]]
            assert pushes[0].confidence >= 0.5 and pushes[0].sequence_number == 1
            assert pushes[0].subscription_id == sub.subscription_id
            await sub.feed("Was the boiler in the basement serviced in March? ")  # the same memory again: not pushed
            await sub.feed("Who prefers tea over coffee? ")
            again = await sub.listen(timeout=30, max_pushes=1)
            assert [p.memory.id for p in again] == [made[TEA]] and again[0].sequence_number == 2
            await sub.close()
            scoped = await client.subscribe(entity_id="house")
            await scoped.feed("Who prefers tea over coffee? Kim does. ")
            await scoped.feed("The basement boiler was serviced. ")
            only = await scoped.listen(timeout=30, max_pushes=1)
            assert [p.memory.id for p in only] == [made[BOILER]]
            await scoped.close()

    asyncio.run(scenario())
    wait_until(lambda: server.service.subscriptions.count() == 0, 30, "subscriptions freed")


def test_a_cancelled_grpc_stream_frees_its_subscription(in_process: Callable[..., InProcess]) -> None:
    server = in_process()
    hub = server.service.subscriptions
    with grpc.insecure_channel(server.grpc) as channel:
        stub = pb_grpc.SubscribeServiceStub(channel)
        call = stub.Subscribe(pb.SubscribeRequest(confidence_threshold=0.5))
        handshake = next(call)
        assert handshake.subscription_id and not handshake.HasField("memory")
        assert hub.count() == 1
        with pytest.raises(grpc.RpcError) as refused:
            stub.Feed(pb.FeedRequest(subscription_id=handshake.subscription_id + 99, text="hi"), timeout=30)
        assert refused.value.code() == grpc.StatusCode.NOT_FOUND
        call.cancel()
    wait_until(lambda: hub.count() == 0, 30, "the cancelled stream's subscription freed")


def _sse(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event, data) of a Server-Sent Events stream; comments (keep-alives) skipped."""
    name = None
    for line in lines:
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: ") and name:
            yield name, json.loads(line[6:])
            name = None


def test_rest_subscribe_streams_pushes_with_strategy_details(in_process: Callable[..., InProcess]) -> None:
    server = in_process()
    made = _seed(server.rest)
    hub = server.service.subscriptions
    with httpx.Client(base_url=server.rest, timeout=60) as http:
        for bad, reason in (({"confidence_threshold": "high"}, "confidence_threshold"),
                            ({"max_tokens": 0}, "max_tokens"), ({"queue_size": 10**9}, "queue size"),
                            ({"topic": "x"}, "unknown field")):
            refused = http.post("/v1/subscribe", json=bad)
            assert refused.status_code == 400 and reason in refused.json()["error"], refused.text
        assert hub.count() == 0
        with http.stream("POST", "/v1/subscribe", json={"entity_id": "house", "confidence_threshold": 0.4}) as stream:
            events = _sse(stream.iter_lines())
            name, hello = next(events)
            sid = hello["subscription_id"]
            assert name == "subscribed" and hello["entity_id"] == "house"
            assert http.post(f"/v1/subscribe/{sid}/feed", json={"text": 5}).status_code == 400
            assert http.post(f"/v1/subscribe/{sid + 50}/feed", json={"text": "x"}).status_code == 404
            fed = http.post(f"/v1/subscribe/{sid}/feed", json={"text": "Did anyone service the basement boiler? "})
            assert fed.status_code == 200, fed.text
            name, push = next(events)
            assert name == "push" and push["memory"]["id"] == made[f"{BOILER} id"] and push["confidence"] >= 0.4
            detail = push["strategy_details"][0]
            assert detail["strategy"] == "similarity" and detail["relevance"] == pytest.approx(push["confidence"])
            assert push["memory"]["decay_score"] is not None
            assert http.delete(f"/v1/subscribe/{sid}").json()["closed"] is True
            assert next(events)[0] == "closed"
        assert http.delete(f"/v1/subscribe/{sid}").status_code == 404
    assert hub.count() == 0


def test_a_dropped_sse_client_frees_its_subscription_and_the_key_limit_holds(
        in_process: Callable[..., InProcess]) -> None:
    server = in_process()
    hub = server.service.subscriptions
    with httpx.Client(base_url=server.rest, timeout=60) as http:
        streams, readers = [], []
        for _ in range(hub.per_key):
            stream = http.stream("POST", "/v1/subscribe", json={})
            readers.append(_sse(stream.__enter__().iter_lines()))  # kept: a dropped reader closes its stream
            streams.append(stream)
            assert next(readers[-1])[0] == "subscribed"
        assert hub.count() == hub.per_key
        with http.stream("POST", "/v1/subscribe", json={}) as refused:
            assert refused.status_code == 429 and "limit" in json.loads(refused.read())["error"]
        for stream in streams:
            stream.__exit__(None, None, None)  # the client goes away without closing
    wait_until(lambda: hub.count() == 0, 30, "dropped clients' subscriptions freed")


# --- the hub's bounds, with a fake recall ---------------------------------------------------------------
def _result(memory_id: str, similarity: float) -> RecallResult:
    now = time.time()
    from datetime import UTC, datetime

    when = datetime.fromtimestamp(now, UTC)
    memory = Memory(memory_id, memory_id, 0.5, {}, None, MemoryKind.EPISODE, when, when, None, 0)
    return RecallResult(memory, similarity, Signals(similarity, 1, 0.5, 0),
                        (StrategyDetail(Strategy.SIMILARITY, similarity, {"distance": 1 - similarity}),))


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


def test_the_queue_is_bounded_and_a_slow_reader_is_told_what_was_dropped() -> None:
    recalled: list[str] = []

    def surface(tenant: str, chunk: str, entity: str | None) -> list[RecallResult]:
        recalled.append(chunk)
        return [_result(f"{chunk[:1]}{n}", 0.9) for n in range(5)] + [_result("low", 0.1)]

    hub = SubscriptionHub(surface)
    try:
        sub = hub.open("", SubscribeRequest.parse({"queue_size": 3}), "default")
        hub.feed(sub.id, "", FeedRequest.parse({"text": "A first sentence. "}))
        assert sub.stream.pending() == 3 and sub.stream.dropped == 2  # 5 over the threshold, room for 3
        assert [p.item.memory.id for p in sub.take()] == ["A0", "A1", "A2"]
        hub.feed(sub.id, "", FeedRequest.parse({"text": "A first sentence again. "}))
        assert [p.item.memory.id for p in sub.take()] == ["A3", "A4"]  # dropped ones may come later; no repeats
        with pytest.raises(MemoryNotFoundError):
            hub.feed(sub.id, "someone else", FeedRequest.parse({"text": "x. "}))
        assert hub.close(sub.id) and hub.count() == 0 and not hub.close(sub.id)
    finally:
        hub.shutdown()


def test_pauses_complete_chunks_and_idle_subscriptions_close() -> None:
    clock = FakeClock()
    chunks: list[str] = []
    hub = SubscriptionHub(lambda tenant, chunk, entity: chunks.append(chunk) or [], idle_seconds=60, clock=clock)
    try:
        rule = SubscribeRequest.parse({"pause_seconds": 2, "sentence_end": False, "max_tokens": 50})
        sub = hub.open("k", rule, "default")
        hub.feed(sub.id, "k", FeedRequest.parse({"text": "no sentence end here"}))
        assert chunks == []
        clock.advance(2.5)
        wait_until(lambda: chunks == ["no sentence end here"], 30, "the paused chunk recalled")
        woken = threading.Event()
        sub.listeners.append(woken.set)
        clock.advance(61)
        wait_until(lambda: hub.count() == 0, 30, "the idle subscription closed")
        assert sub.closed and woken.is_set()
        others = [hub.open("k", SubscribeRequest(), "default") for _ in range(hub.per_key)]
        with pytest.raises(TooManySubscriptionsError):
            hub.open("k", SubscribeRequest(), "default")
        assert hub.open("another key", SubscribeRequest(), "default").id not in {s.id for s in others}
    finally:
        hub.shutdown()
    assert hub.count() == 0


def test_entity_scope_finds_the_entitys_memory_when_other_entities_fill_the_top_results(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    """A subscription within one entity searches that entity's memories, not just the store's global top
    results: 30 other-entity memories nearer the chunk must not hide the entity's own."""
    service = HebbsService(MemoryEngine(tmp_path / "data", embedder=embedder), auth=False)
    try:
        for n in range(30):
            flat = {"content": f"The boiler in flat {n} was serviced in March.", "entity_id": f"flat{n}"}
            service.call("default", "remember", flat)
        own = service.call("default", "remember",
                           {"content": "Ortiz Heating came to look at our heating.", "entity_id": "house"})
        chunk = "When was the boiler serviced in March?"
        unscoped = [r.memory.id for r in service.surface("default", chunk, None)]
        assert own.id not in unscoped  # the premise: globally, the flats' memories fill the top results
        scoped = service.surface("default", chunk, "house")
        assert [r.memory.id for r in scoped] == [own.id]
        assert 0.0 < _similarity(scoped[0]) < 1.0  # the chunk's cosine, not the timeline's constant 1
    finally:
        service.close()
