"""Policy, forget by criteria, the sweep and tombstones, revise's context_mode, decay scores: over real REST and
gRPC servers on loopback (a store of the test's own: a sweep forgets across the whole store)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from hebbs._generated import hebbs_pb2 as pb
from hebbs._generated import hebbs_pb2_grpc as pb_grpc

from engine import MemoryEngine, ids
from engine.embedding import SentenceTransformerEmbedder
from interfaces.service import HebbsService
from tests.interfaces.conftest import InProcess, wait_until


def _remember(http: httpx.Client, content: str, importance: float, **fields: Any) -> dict[str, Any]:
    made = http.post("/v1/memories", json={"content": content, "importance": importance, **fields})
    assert made.status_code == 201, made.text
    return dict(made.json())


def test_policy_sweep_and_tombstones_over_rest(in_process: Callable[..., InProcess]) -> None:
    server = in_process()
    with httpx.Client(base_url=server.rest, timeout=60) as http:
        weak = _remember(http, "Someone mentioned the weather.", 0.2)
        strong = _remember(http, "The backup key is in the safe.", 0.9)
        assert weak["decay_score"] == pytest.approx(0.2, abs=1e-3)  # every memory carries it
        for bad, reason in (({"auto_forget_threshold": 2}, "auto_forget_threshold"), ({}, "at least one"),
                            ({"decay_half_life_days": "long"}, "decay_half_life_days"),
                            ({"tenant_id": "other", "decay_half_life_days": 3}, "tenant")):
            refused = http.put("/v1/policy", json=bad)
            assert refused.status_code == 400 and reason in refused.json()["error"], refused.text
        assert http.get("/v1/policy").json()["auto_forget_threshold"] is None  # nothing changed
        assert http.post("/v1/sweep", json={}).json()["forgotten"] == []  # no threshold: nothing goes

        policy = http.put("/v1/policy", json={"auto_forget_threshold": 0.5})
        assert policy.status_code == 200 and policy.json()["auto_forget_threshold"] == 0.5
        dry = http.post("/v1/sweep", json={"dry_run": True}).json()
        assert dry["forgotten"] == [weak["id"]] and dry["dry_run"] is True
        assert http.get(f"/v1/memories/{weak['id']}").status_code == 200
        swept = http.post("/v1/sweep", json={}).json()
        assert swept["forgotten"] == [weak["id"]] and swept["tombstone_count"] == 1
        assert http.get(f"/v1/memories/{weak['id']}").status_code == 404
        assert http.get(f"/v1/memories/{strong['id']}").status_code == 200
        stones = http.get("/v1/tombstones").json()["tombstones"]
        assert [(s["memory_id"], s["reason"]) for s in stones] == [(weak["id"], "sweep")]
        assert "weather" not in str(stones) and len(stones[0]["content_sha256"]) == 64
        assert http.get("/v1/tombstones", params={"limit": 0}).status_code == 422


def test_forget_by_criteria_and_revise_context_mode_over_rest(in_process: Callable[..., InProcess]) -> None:
    server = in_process()
    with httpx.Client(base_url=server.rest, timeout=60) as http:
        a = _remember(http, "Shed roof leaks.", 0.5, entity_id="shed", context={"room": "shed", "n": 1})
        b = _remember(http, "Shed door sticks.", 0.5, entity_id="shed")
        c = _remember(http, "Office printer jams.", 0.5, entity_id="office")
        for bad, reason in (({"kind": "dream"}, "kind"), ({"access_count_below": -2}, "access_count_below"),
                            ({"decay_score_below": "low"}, "decay_score_below"), ({"dry_run": 1}, "dry_run"),
                            ({"not_accessed_since": "whenever"}, "not_accessed_since"), ({}, "criterion")):
            refused = http.post("/v1/forget", json=bad)
            assert refused.status_code == 400 and reason in refused.json()["error"], (bad, refused.text)
        assert http.get("/v1/stats").json()["memories"] == 3
        http.post("/v1/recall", json={"cue": "shed door", "strategies": ["similarity"], "top_k": 1})  # b accessed
        dry = http.post("/v1/forget", json={"entity_id": "shed", "access_count_below": 1, "dry_run": True}).json()
        assert dry["forgotten"] == [a["id"]] and dry["dry_run"] is True
        gone = http.post("/v1/forget", json={"entity_id": "shed", "access_count_below": 1}).json()
        assert gone["forgotten"] == [a["id"]] and gone["tombstone_count"] == 1
        assert {m["id"] for m in http.get("/v1/memories").json()["memories"]} == {b["id"], c["id"]}

        merged = http.put(f"/v1/memories/{b['id']}", json={"context": {"tool": "plane"}}).json()
        assert merged["context"] == {"tool": "plane"}
        merged = http.put(f"/v1/memories/{b['id']}", json={"context": {"hinge": 2}}).json()
        assert merged["context"] == {"tool": "plane", "hinge": 2}
        replaced = http.put(f"/v1/memories/{b['id']}", json={"context": {"x": 1}, "context_mode": "replace"})
        assert replaced.json()["context"] == {"x": 1}
        refused = http.put(f"/v1/memories/{b['id']}", json={"context": {"y": 1}, "context_mode": "union"})
        assert refused.status_code == 400 and "context_mode" in refused.json()["error"]
        assert http.get(f"/v1/memories/{b['id']}").json()["context"] == {"x": 1}


def test_forget_criteria_revise_mode_and_decay_over_grpc(in_process: Callable[..., InProcess]) -> None:
    server = in_process()
    with httpx.Client(base_url=server.rest, timeout=60) as http:
        kept = _remember(http, "Grpc probe kept.", 0.9, entity_id="probe", context={"a": 1})
        old = _remember(http, "Grpc probe old.", 0.1, entity_id="probe")
    with grpc.insecure_channel(server.grpc) as channel:
        stub = pb_grpc.MemoryServiceStub(channel)
        got = stub.Get(pb.GetRequest(memory_id=ids.to_bytes(kept["id"])), timeout=30).memory
        assert got.decay_score == pytest.approx(0.9, abs=1e-3)
        with pytest.raises(grpc.RpcError) as refused:
            stub.Forget(pb.ForgetRequest(entity_id="probe", staleness_threshold_us=0), timeout=30)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "staleness_threshold_us" in (refused.value.details() or "")
        done = stub.Forget(pb.ForgetRequest(entity_id="probe", decay_score_floor=0.5,
                                            memory_kind=pb.MEMORY_KIND_EPISODE), timeout=30)
        assert (done.forgotten_count, done.tombstone_count) == (1, 1)
        with pytest.raises(grpc.RpcError):
            stub.Get(pb.GetRequest(memory_id=ids.to_bytes(old["id"])), timeout=30)
        context = pb.ReviseRequest(memory_id=ids.to_bytes(kept["id"]), context_mode=pb.CONTEXT_MODE_REPLACE)
        context.context.update({"b": 2})
        assert dict(stub.Revise(context, timeout=30).memory.context) == {"b": 2}
        merge = pb.ReviseRequest(memory_id=ids.to_bytes(kept["id"]))
        merge.context.update({"c": 3})
        assert dict(stub.Revise(merge, timeout=30).memory.context) == {"b": 2, "c": 3}
        applied = stub.SetPolicy(pb.SetPolicyRequest(decay_half_life_days=3), timeout=30)
        assert applied.applied
        with pytest.raises(grpc.RpcError) as refused:
            stub.SetPolicy(pb.SetPolicyRequest(auto_forget_threshold=7), timeout=30)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert server.service.engine.retention.policies.get().decay_half_life_days == 3


def test_the_server_sweeps_on_its_own(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    """`hebbs serve --sweep-minutes`: the service runs the sweep on a timer; it forgets only below the policy."""
    service = HebbsService(MemoryEngine(tmp_path / "data", embedder=embedder), auth=False)
    try:
        weak = service.call("default", "remember", {"content": "A remark about the weather.", "importance": 0.1})
        strong = service.call("default", "remember", {"content": "The safe's code changed.", "importance": 0.9})
        service.sweep_every(0.05)
        service.call("default", "set_policy", {"auto_forget_threshold": 0.5})
        stones = service.engine.retention.tombstones
        wait_until(lambda: bool(stones.newest()), 60, "the timed sweep")  # written once the forget committed
        assert [(t.memory_id, t.reason) for t in stones.newest()] == [(weak.id, "sweep")]
        assert set(service.engine.get_many([weak.id, strong.id])) == {strong.id}
    finally:
        service.close()
