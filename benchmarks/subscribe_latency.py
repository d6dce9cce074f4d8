"""Subscribe latency for `make bench-serve`: from the end of a fed chunk (the client sends the feed that
completes a sentence) to the first memory pushed for it, received by the client, over gRPC (the SDK's
SubscribeService stream) and REST (Server-Sent Events). One subscription per cue, threshold 0 (the chunk's
nearest memory is always pushed), transports alternated cue by cue so drift on a shared machine hits both."""

from __future__ import annotations

import json
import queue
import threading
import time
from typing import Any

import grpc
import httpx
from hebbs._generated import hebbs_pb2 as pb
from hebbs._generated import hebbs_pb2_grpc as pb_grpc

from benchmarks.timing import summarize


def _grpc_once(stub: Any, cue: str) -> float:
    call = stub.Subscribe(pb.SubscribeRequest(confidence_threshold=0.0))
    sid = next(call).subscription_id
    arrived: queue.Queue[float] = queue.Queue()

    def read() -> None:
        try:
            for message in call:
                if message.HasField("memory"):
                    arrived.put(time.perf_counter())
        except grpc.RpcError:
            pass  # cancelled below

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    t0 = time.perf_counter()
    stub.Feed(pb.FeedRequest(subscription_id=sid, text=f"{cue}. "))
    t1 = arrived.get(timeout=60)
    stub.CloseSubscription(pb.CloseSubscriptionRequest(subscription_id=sid))
    call.cancel()
    reader.join(timeout=10)
    return (t1 - t0) * 1000


def _rest_once(http: httpx.Client, feeder: httpx.Client, cue: str) -> float:
    with http.stream("POST", "/v1/subscribe", json={"confidence_threshold": 0.0}) as stream:
        lines = stream.iter_lines()
        sid = None
        for line in lines:
            if line.startswith("data: "):
                sid = json.loads(line[6:])["subscription_id"]
                break
        t0 = time.perf_counter()
        feeder.post(f"/v1/subscribe/{sid}/feed", json={"text": f"{cue}. "}).raise_for_status()
        for line in lines:
            if line == "event: push":
                t1 = time.perf_counter()
                break
        feeder.delete(f"/v1/subscribe/{sid}")
    return (t1 - t0) * 1000


def measure(rest: str, grpc_address: str, cues: list[str]) -> dict[str, Any]:
    """p50/p95 (ms) per transport, and the in-process recall a chunk costs for comparison is the caller's."""
    samples: dict[str, list[float]] = {"grpc": [], "rest_sse": []}
    with grpc.insecure_channel(grpc_address) as channel, httpx.Client(base_url=rest, timeout=60) as http, \
            httpx.Client(base_url=rest, timeout=60) as feeder:
        stub = pb_grpc.SubscribeServiceStub(channel)
        _grpc_once(stub, cues[0])  # warm both paths
        _rest_once(http, feeder, cues[0])
        for cue in cues:
            samples["grpc"].append(_grpc_once(stub, cue))
            samples["rest_sse"].append(_rest_once(http, feeder, cue))
    return {name: summarize(ms) for name, ms in samples.items()}
