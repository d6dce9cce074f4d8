"""Every bad gRPC input is INVALID_ARGUMENT with the reason, never INTERNAL (issue 30, item 10): raw bytes
on the wire (garbage, truncated, invalid UTF-8, nesting past protobuf's limit) through a raw channel, and
values the protos can carry but the engine cannot store (NaN and Infinity in a Struct, enum numbers the
protos do not define, times past 2^63 microseconds) through the official protos' stub and the SDK."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from hebbs import HebbsClient
from hebbs._generated import hebbs_pb2 as pb
from hebbs.exceptions import HebbsInvalidArgumentError

from tests.trust.servers import Server, running


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("grpc-bad") / "data") as served:
        with served.http() as http:
            http.post("/v1/memories", json={"content": "Initech moved its servers to the new rack.", "entity_id": "a"})
        yield served


def _context(value: Any) -> bytes:
    request = pb.RememberRequest(content="x")
    request.context.update({"k": value})
    return request.SerializeToString()


def _nested(depth: int) -> bytes:
    outer = struct_pb2.Struct()
    inner = outer
    for _ in range(depth):
        inner = inner.fields["k"].struct_value
    request = pb.RememberRequest(content="x")
    request.context.CopyFrom(outer)
    return request.SerializeToString()


def _recall(**config: Any) -> bytes:
    return pb.RecallRequest(cue="rack", strategies=[pb.RecallStrategyConfig(**config)]).SerializeToString()


def _span(start: int, end: int) -> bytes:
    return _recall(strategy_type=pb.TEMPORAL, entity_id="a", time_range=pb.TimeRange(start_us=start, end_us=end))


# (case, method, serialized request, words the reason holds)
CASES: list[tuple[str, str, bytes, str]] = [
    ("NaN in a context Struct", "Remember", _context(float("nan")), "NaN"),
    ("Infinity in a context Struct", "Remember", _context(float("inf")), "Infinity"),
    ("-Infinity in a list in a Struct", "Remember", _context([1.0, float("-inf")]), "Infinity"),
    ("unknown memory kind", "Remember", pb.RememberRequest(content="x", kind=77).SerializeToString(), "77"),
    ("kind revision", "Remember", pb.RememberRequest(content="x", kind=pb.MEMORY_KIND_REVISION).SerializeToString(),
     "revise"),
    ("unknown edge type", "Remember",
     pb.RememberRequest(content="x", edges=[pb.Edge(target_id=b"\x01" * 16, edge_type=91)]).SerializeToString(), "91"),
    ("unknown strategy", "Recall", _recall(strategy_type=55), "55"),
    ("unknown edge type to follow", "Recall", _recall(strategy_type=pb.CAUSAL, edge_types=[66]), "66"),
    ("time range past 2^63", "Recall", _span(2**64 - 1, 2**64 - 1), "past the year"),
    ("time range past year 9998", "Recall", _span(2**62, 2**63 - 1), "past the year"),
    ("invalid UTF-8 in content", "Remember", b"\x0a\x04ab\xff\xfe", "UTF-8"),
    ("invalid UTF-8 in a cue", "Recall", b"\x0a\x03\xc3\x28a", "UTF-8"),
    ("garbage bytes", "Remember", b"\xff" * 12, "not a valid Remember message"),
    ("truncated message", "Remember", pb.RememberRequest(content="hello there").SerializeToString()[:-4],
     "not a valid Remember message"),
    ("truncated Recall", "Recall", pb.RecallRequest(cue="a longer cue").SerializeToString()[:-2],
     "not a valid Recall message"),
    ("Struct nested past protobuf's limit", "Remember", _nested(120), "not a valid Remember message"),
    ("Struct nested past the engine's limit", "Remember", _nested(40), "Remember"),
    ("memory id of 3 bytes", "Get", pb.GetRequest(memory_id=b"abc").SerializeToString(), "16 bytes"),
    ("forget by an unknown kind", "Forget", pb.ForgetRequest(memory_kind=99).SerializeToString(), "kind"),
]


@pytest.mark.parametrize(("case", "method", "raw", "says"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_invalid_argument_with_the_reason(server: Server, case: str, method: str, raw: bytes,
                                                       says: str) -> None:
    before = server.memories()
    with grpc.insecure_channel(server.grpc) as channel:
        call: Callable[..., bytes] = channel.unary_unary(f"/hebbs.v1.MemoryService/{method}",
                                                         request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as caught:
            call(raw, metadata=server.metadata, timeout=60)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    assert says in caught.value.details()
    assert server.memories() == before


def test_the_sdk_gets_invalid_argument_for_a_nan_context(server: Server) -> None:
    before = server.memories()

    async def scenario() -> None:
        async with HebbsClient(server.grpc, api_key=server.key) as client:
            await client.remember("x", context={"score": float("nan")})

    with pytest.raises(HebbsInvalidArgumentError):
        asyncio.run(scenario())
    assert server.memories() == before


def test_the_server_still_serves_after_the_hostile_calls(server: Server) -> None:
    found = server.stub().Recall(pb.RecallRequest(cue="servers rack", top_k=1), metadata=server.metadata, timeout=60)
    assert "rack" in found.results[0].memory.content
