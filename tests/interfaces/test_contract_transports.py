"""The transport contract (tests/test_contract.py) over REST and over gRPC: the same table of good and bad
requests gives the same JSON and the same error (message, and the HTTP / gRPC status of the error table)
as the Python API, each transport on a real server over its own fresh store.

gRPC carries what its messages can express: a step that the official protos cannot say (a `created_at`,
a context given as text, an unknown strategy or edge type, an id that is not 16 bytes, weights as text
that do not parse) is sent over REST to the same server, so the scenario stays one story.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import grpc
import httpx
from google.protobuf import struct_pb2
from hebbs._generated import hebbs_pb2 as pb
from hebbs._generated import hebbs_pb2_grpc as pb_grpc

from engine import ids
from engine.errors import HebbsError
from engine.models import iso
from engine.recall.scoring import ScoringWeights
from engine.store.rows import from_micros
from interfaces.errors import outcome_of
from interfaces.grpc.convert import EDGE_TO, KIND_OF, STRATEGY_OF, STRATEGY_TO
from tests.interfaces.conftest import InProcess, strip_sdk_fields
from tests.test_contract import SCENARIO, Outcome, python_api, run_scenario  # noqa: F401 (fixture)

Call = Callable[[str, dict[str, Any]], Outcome]
# A strategy the official protos cannot name (lexical) travels as UNSPECIFIED_STRATEGY.
UNNAMED = "unnamed"


def rest_caller(base: str) -> Call:
    http = httpx.Client(base_url=base, timeout=120)

    def call(op: str, payload: dict[str, Any]) -> Outcome:
        body = dict(payload)
        if op == "remember":
            reply = http.post("/v1/memories", json=body)
        elif op == "get":
            reply = http.get(f"/v1/memories/{body['memory_id']}")
        elif op == "list":
            reply = http.get("/v1/memories", params=body)
        elif op == "stats":
            reply = http.get("/v1/stats")
        elif op == "recall":
            reply = http.post("/v1/memories/recall", json=body)
        elif op == "revise":
            reply = http.put(f"/v1/memories/{body.pop('memory_id')}", json=body)
        elif op == "forget":
            reply = http.post("/v1/forget", json=body)
        else:
            raise AssertionError(f"no REST route in this test for {op}")
        data = reply.json()
        if reply.status_code >= 400:
            assert list(data) == ["error"], data
            return "error", (reply.status_code, data["error"])
        return "ok", strip_sdk_fields(data)

    return call


def test_rest_and_python_api_agree_on_every_request(python_api: Call, in_process: Callable[..., InProcess]) -> None:  # noqa: F811
    through_python = dict(run_scenario(python_api))
    through_rest = dict(run_scenario(rest_caller(in_process().rest)))
    for step, (op, payload, _) in enumerate(SCENARIO):
        kind, value = through_python[step]
        if kind == "error":
            value = (outcome_of(value[2]("")).http_status, value[1])
        assert through_rest[step] == (kind, value), f"step {step}: {op} {payload}"


# --- gRPC ------------------------------------------------------------------------------------------------
class Inexpressible(Exception):
    """The official protos cannot carry this request."""


def _bytes_id(value: object) -> bytes:
    try:
        return ids.to_bytes(str(value))
    except (ValueError, KeyError) as exc:
        raise Inexpressible(f"id {value!r}") from exc


def _struct(value: object) -> struct_pb2.Struct:
    if not isinstance(value, dict):
        raise Inexpressible("context as text")
    s = struct_pb2.Struct()
    s.update(value)
    return s


RECALL_FIELDS = {"cue", "strategies", "top_k", "scoring_weights", "entity_id", "ef_search", "seed_memory_id",
                 "max_depth", "analogical_alpha"}


def _grpc_request(op: str, p: dict[str, Any]) -> tuple[str, Any]:
    if op == "remember":
        if "created_at" in p:
            raise Inexpressible("created_at")
        req = pb.RememberRequest(content=p["content"])
        if "importance" in p:
            req.importance = p["importance"]
        if "context" in p:
            req.context.CopyFrom(_struct(p["context"]))
        if p.get("entity_id"):
            req.entity_id = p["entity_id"]
        if "kind" in p:
            number = {v: k for k, v in KIND_OF.items()}.get(p["kind"])
            if number is None:
                raise Inexpressible("kind")
            req.kind = number
        for edge in p.get("edges", []):
            parts = edge.split(":")
            if len(parts) not in (2, 3) or parts[1] not in EDGE_TO:
                raise Inexpressible("edge")
            target, type_, *conf = parts
            try:
                float(conf[0]) if conf else None
            except ValueError:
                raise Inexpressible("edge") from None
            message = pb.Edge(target_id=_bytes_id(target), edge_type=EDGE_TO[type_])
            if conf:
                message.confidence = float(conf[0])
            req.edges.append(message)
        return "Remember", req
    if op == "get":
        return "Get", pb.GetRequest(memory_id=_bytes_id(p["memory_id"]))
    if op == "revise":
        req = pb.ReviseRequest(memory_id=_bytes_id(p["memory_id"]))
        for name in ("content", "importance", "entity_id"):
            if name in p:
                setattr(req, name, p[name])
        return "Revise", req
    if op == "forget":
        return "Forget", pb.ForgetRequest(memory_ids=[_bytes_id(i) for i in p["memory_ids"]])
    if op == "recall":
        if "time_range" in p or "edge_types" in p or set(p) - RECALL_FIELDS:
            raise Inexpressible("time range or edge types as text")
        config: dict[str, Any] = {}
        if p.get("entity_id"):
            config["entity_id"] = p["entity_id"]
        if p.get("seed_memory_id"):
            config["seed_memory_id"] = _bytes_id(p["seed_memory_id"])
        for name in ("max_depth", "ef_search", "analogical_alpha"):
            if name in p:
                config[name] = p[name]
        strategies = []
        for s in p.get("strategies", []):  # none: the server's default, as the official SDK sends
            if s not in STRATEGY_TO:
                raise Inexpressible("strategy")
            strategies.append(pb.RecallStrategyConfig(strategy_type=STRATEGY_TO[s], **config))
        req = pb.RecallRequest(cue=p.get("cue", ""), strategies=strategies)
        if "top_k" in p:
            req.top_k = p["top_k"]
        if "scoring_weights" in p:
            try:
                weights = ScoringWeights.parse(p["scoring_weights"]).as_tuple()
            except HebbsError as exc:
                raise Inexpressible("weights") from exc
            req.scoring_weights.CopyFrom(pb.ScoringWeights(w_relevance=weights[0], w_recency=weights[1],
                                                           w_importance=weights[2], w_reinforcement=weights[3]))
        return "Recall", req
    raise Inexpressible(op)


def _memory(m: Any) -> dict[str, Any]:
    return {"id": ids.from_bytes(m.memory_id), "content": m.content, "importance": m.importance,
            "entity_id": m.entity_id if m.HasField("entity_id") else None, "kind": KIND_OF[m.kind],
            "created_at": iso(from_micros(m.created_at)), "access_count": m.access_count}


def _grpc_view(method: str, reply: Any) -> Any:
    """What a gRPC reply says, in the terms of the engine's JSON (`project` makes the Python side alike)."""
    if method in ("Remember", "Get", "Revise"):
        return _memory(reply.memory)
    if method == "Forget":
        return {"forgotten": reply.forgotten_count}
    return {"results": [{"memory": _memory(r.memory), "score": r.score,
                         "strategies": [(STRATEGY_OF.get(d.strategy_type, UNNAMED), d.relevance)
                                        for d in r.strategy_details]}
                        for r in reply.results]}


def project(op: str, value: dict[str, Any]) -> Any:
    def memory(m: dict[str, Any]) -> dict[str, Any]:
        return {k: m[k] for k in ("id", "content", "importance", "entity_id", "kind", "created_at", "access_count")}

    if op == "forget":
        return {"forgotten": len(value["forgotten"])}
    if op == "recall":
        return {"results": [{"memory": memory(r["memory"]), "score": r["score"],
                             "strategies": [(d["strategy"] if d["strategy"] in STRATEGY_TO else UNNAMED,
                                             d["relevance"]) for d in r["strategy_details"]]}
                            for r in value["results"]]}
    return memory(value)


def same(a: Any, b: Any) -> bool:
    """Equal, with floats equal to 1e-4 (gRPC carries importance and scores as 32-bit floats)."""
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return abs(a - b) <= 1e-4
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def numbers_rounded(message: str) -> str:
    return re.sub(r"-?\d+\.\d+|\b\d+\b", lambda m: f"{round(float(m.group()), 4):g}", message)


def test_grpc_and_python_api_agree_on_every_request_grpc_can_express(
    python_api: Call, in_process: Callable[..., InProcess]  # noqa: F811
) -> None:
    server = in_process()
    channel = grpc.insecure_channel(server.grpc)
    stub = pb_grpc.MemoryServiceStub(channel)
    over_rest = rest_caller(server.rest)
    sent: dict[int, str] = {}

    def call(op: str, payload: dict[str, Any]) -> Outcome:
        step = len(sent)
        try:
            method, request = _grpc_request(op, payload)
        except Inexpressible:
            sent[step] = "rest"
            return over_rest(op, payload)
        sent[step] = method
        try:
            reply = getattr(stub, method)(request, timeout=120)
        except grpc.RpcError as exc:
            return "error", (exc.code().name, exc.details())
        return "ok", _grpc_view(method, reply)

    try:
        through_python = dict(run_scenario(python_api))
        through_grpc = dict(run_scenario(call))
    finally:
        channel.close()
    checked = 0
    for step, (op, payload, _) in enumerate(SCENARIO):
        if sent[step] == "rest":
            continue
        checked += 1
        kind, value = through_python[step]
        got_kind, got = through_grpc[step]
        where = f"step {step}: {op} {payload}"
        assert got_kind == kind, f"{where}: {got}"
        if kind == "error":
            assert got[0] == outcome_of(value[2]("")).grpc_status, where
            assert numbers_rounded(got[1]) == numbers_rounded(value[1]), where
        else:
            assert same(got, project(op, value)), f"{where}:\n{got}\n{project(op, value)}"
    assert checked >= 15, f"only {checked} steps went over gRPC"

