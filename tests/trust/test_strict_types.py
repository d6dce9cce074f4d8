"""Strict types and look-alike ids, the same refusal on every transport (issue 30, item 11).

The engine's parse is the one validation: a bool is not a number, "0.5" is not a number, 10**400 is a
ValidationError (not an OverflowError), `kind="revision"` is made only by revise, and ids holding an
invisible or bidirectional-control character are refused with its name. Each case is sent through the
Python API, REST (the same message, 400), raw gRPC stubs and the official SDK (INVALID_ARGUMENT), the CLI
and the CLI with --server (exit 2, one line), and the store's count is compared before and after.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from hebbs import HebbsClient
from hebbs._generated import hebbs_pb2 as pb
from hebbs.exceptions import HebbsInvalidArgumentError

from engine import MemoryEngine
from engine.api import parse_request
from engine.embedding import SentenceTransformerEmbedder
from engine.errors import ValidationError
from interfaces.cli import main
from tests.trust.servers import Server, running

HUGE = 10**400
LOOK_ALIKES = {
    "zero-width space": "acme\u200b",
    "soft hyphen": "ac\u00adme",
    "right-to-left override": "\u202eemca",
    "byte order mark": "\ufeffacme",
    "zero-width joiner": "ac\u200dme",
    "left-to-right isolate": "\u2066acme",
    "no-break space": "ac\u00a0me",
    "line separator": "ac\u2028me",
}

# (case, operation, fields, words the message must hold)
CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("importance true", "remember", {"content": "x", "importance": True}, "importance must be a number"),
    ("importance '0.5'", "remember", {"content": "x", "importance": "0.5"}, "importance must be a number"),
    ("importance 10**400", "remember", {"content": "x", "importance": HUGE}, "about 401 digits"),
    ("kind revision", "remember", {"content": "x", "kind": "revision"}, "made only by revise"),
    ("edge confidence true", "remember",
     {"content": "x", "edges": [{"target": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "type": "caused_by", "confidence": True}]},
     "edge confidence must be a number"),
    ("batch item importance '1'", "remember_many", {"items": [{"content": "x"}, {"content": "y", "importance": "1"}]},
     "importance must be a number"),
    ("top_k true", "recall", {"cue": "x", "top_k": True}, "top_k must be an integer"),
    ("top_k '5'", "recall", {"cue": "x", "top_k": "5"}, "top_k must be an integer"),
    ("top_k 10**400", "recall", {"cue": "x", "top_k": HUGE}, "about 401 digits"),
    ("analogical_alpha '0.5'", "recall", {"cue": "x", "analogical_alpha": "0.5"}, "analogical_alpha"),
    ("analogical_alpha 10**400", "recall", {"cue": "x", "analogical_alpha": HUGE}, "about 401 digits"),
    ("weight true", "recall", {"cue": "x", "scoring_weights": {"w_relevance": True}}, "w_relevance"),
    ("weight 10**400", "recall", {"cue": "x", "scoring_weights": {"w_relevance": HUGE}}, "w_relevance"),
    ("fusion weight 10**400", "recall", {"cue": "x", "fusion": {"neighbour_weight": HUGE}}, "neighbour_weight"),
    ("list limit true", "list", {"limit": True}, "limit must be an integer"),
    *[(f"entity id with a {name}", "remember", {"content": "x", "entity_id": value}, "U+")
      for name, value in LOOK_ALIKES.items()],
    ("recall entity id with a zero-width space", "recall",
     {"cue": "x", "strategies": ["temporal"], "entity_id": "acme\u200b"}, "ZERO WIDTH SPACE"),
]
REST_ROUTES = {"remember": "/v1/memories", "remember_many": "/v1/memories", "recall": "/v1/recall"}


def _message(op: str, fields: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as caught:
        parse_request(op, fields)
    return str(caught.value)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("strict") / "data") as served:
        with served.http() as http:
            http.post("/v1/memories", json={"content": "Acme renewed the contract.", "entity_id": "acme"})
        yield served


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder) -> Iterator[MemoryEngine]:
    with MemoryEngine(tmp_path_factory.mktemp("strict-py") / "data", embedder=embedder) as opened:
        opened.remember("Acme renewed the contract.", entity_id="acme")
        yield opened


@pytest.mark.parametrize(("case", "op", "fields", "says"), CASES, ids=[c[0] for c in CASES])
def test_python_api_refuses_with_a_validation_error(
    engine: MemoryEngine, case: str, op: str, fields: dict[str, Any], says: str
) -> None:
    message = _message(op, fields)
    assert says in message and "\n" not in message
    before = engine.stats()["memories"]
    call = {"remember": lambda: engine.remember(**fields), "remember_many": lambda: engine.remember_many(
        fields["items"]), "recall": lambda: engine.recall(**fields), "list": lambda: engine.list_memories(**fields)}
    with pytest.raises(ValidationError) as caught:
        call[op]()
    assert str(caught.value) == message
    assert engine.stats()["memories"] == before


@pytest.mark.parametrize(("case", "op", "fields", "says"), [c for c in CASES if c[1] in REST_ROUTES],
                         ids=[c[0] for c in CASES if c[1] in REST_ROUTES])
def test_rest_reaches_the_engine_parse_unchanged(
    server: Server, case: str, op: str, fields: dict[str, Any], says: str
) -> None:
    before = server.memories()
    with server.http() as http:
        reply = http.post(REST_ROUTES[op], json=fields)
    assert reply.status_code == 400, reply.text
    assert reply.json() == {"error": _message(op, fields)}
    assert server.memories() == before


def test_rest_list_query_and_edges_route_are_strict(server: Server) -> None:
    before = server.memories()
    with server.http() as http:
        first = http.get("/v1/memories", params={"limit": 1}).json()["memories"][0]["id"]
        edges = http.post(f"/v1/memories/{first}/edges", json={"edges": [{"target": first, "type": "caused_by",
                                                                          "confidence": "1"}]})
        assert edges.status_code == 400 and "edge confidence must be a number" in edges.json()["error"]
        revise = http.put(f"/v1/memories/{first}", json={"importance": False})
        assert revise.status_code == 400 and "importance must be a number" in revise.json()["error"]
    assert server.memories() == before


@pytest.mark.parametrize("name", list(LOOK_ALIKES))
def test_grpc_stub_and_sdk_refuse_look_alike_ids(server: Server, name: str) -> None:
    before = server.memories()
    entity = LOOK_ALIKES[name]
    with pytest.raises(grpc.RpcError) as caught:
        server.stub().Remember(pb.RememberRequest(content="x", entity_id=entity), metadata=server.metadata, timeout=60)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details() == _message("remember", {"content": "x", "entity_id": entity})

    async def sdk() -> None:
        async with HebbsClient(server.grpc, api_key=server.key) as client:
            await client.remember("x", entity_id=entity)

    with pytest.raises(HebbsInvalidArgumentError):
        asyncio.run(sdk())
    assert server.memories() == before


def test_grpc_refuses_kind_revision(server: Server) -> None:
    before = server.memories()
    with pytest.raises(grpc.RpcError) as caught:
        server.stub().Remember(pb.RememberRequest(content="x", kind=pb.MEMORY_KIND_REVISION),
                               metadata=server.metadata, timeout=60)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "made only by revise" in caught.value.details()
    assert server.memories() == before


@pytest.mark.parametrize("via_server", [False, True], ids=["cli", "cli --server"])
@pytest.mark.parametrize("args", [
    ["remember", "x", "--kind", "revision"],
    ["remember", "x", "--entity-id", "acme\u200b"],
    ["remember", "x", "--entity-id", "\u202eemca"],
    ["recall", "x", "--strategy", "temporal", "--entity-id", "ac\u00adme"],
], ids=["kind revision", "zero-width space", "RLO", "soft hyphen"])
def test_cli_refuses_in_one_line(server: Server, tmp_path: Path, via_server: bool, args: list[str]) -> None:
    before = server.memories()
    prefix = ["--server", server.rest] if via_server else ["--data-dir", str(tmp_path / "data")]
    result = CliRunner().invoke(main, [*prefix, *args], env={"HEBBS_API_KEY": server.key})
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and ("revise" in lines[0] or "U+" in lines[0]), result.stderr
    assert server.memories() == before
