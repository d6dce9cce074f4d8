"""Every method of the official SDK (`hebbs` 0.4.x, unchanged) against `hebbs serve`: the 15 of `HebbsClient`
over gRPC and every method of `HebbsRestClient` over REST.

`COVERED` names, for each SDK method, the test that exercises it (here or in test_sdk.py); a
test checks that the SDK has no method the table misses, so an SDK upgrade that adds one fails until it is
tested.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
from hebbs import HebbsClient, HebbsRestClient
from hebbs.exceptions import HebbsInvalidArgumentError
from hebbs.types import ContradictionVerdictInput, MemoryKind, ProducedInsightInput

from tests.interfaces.conftest import Served
from tests.reflect.test_reflect import TOPICS

T = TypeVar("T")

# HebbsClient method -> the test that calls it.
COVERED = {
    "remember": "test_sdk.test_grpc_client_remember_recall_prime_revise_forget",
    "get": "test_sdk.test_grpc_client_remember_recall_prime_revise_forget",
    "recall": "test_sdk.test_grpc_client_remember_recall_prime_revise_forget",
    "prime": "test_sdk.test_grpc_client_remember_recall_prime_revise_forget",
    "revise": "test_sdk.test_grpc_client_remember_recall_prime_revise_forget",
    "forget": "test_sdk.test_grpc_client_remember_recall_prime_revise_forget",
    "health": "test_health_and_count",
    "count": "test_health_and_count",
    "reflect": "test_reflect_and_insights",
    "insights": "test_reflect_and_insights",
    "reflect_prepare": "test_reflect_prepare_and_commit",
    "reflect_commit": "test_reflect_prepare_and_commit",
    "contradiction_prepare": "test_contradiction_prepare_and_commit",
    "contradiction_commit": "test_contradiction_prepare_and_commit",
    "subscribe": "test_subscribe",
    "set_policy": "test_sdk.test_set_policy_is_applied_and_kept",
}
REST_COVERED = {
    "remember": "test_sdk.test_rest_client_remember_recall_prime_forget_status",
    "recall": "test_sdk.test_rest_client_remember_recall_prime_forget_status",
    "prime": "test_sdk.test_rest_client_remember_recall_prime_forget_status",
    "forget": "test_sdk.test_rest_client_remember_recall_prime_forget_status",
    "status": "test_sdk.test_rest_client_remember_recall_prime_forget_status",
    "insights": "test_rest_client_insights_and_index",
    "index": "test_rest_client_insights_and_index",
}
LIFECYCLE = {"connect", "close"}


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def _public_methods(cls: type) -> set[str]:
    return {name for name, member in inspect.getmembers(cls, inspect.iscoroutinefunction)
            if not name.startswith("_")} - LIFECYCLE


def test_every_sdk_method_has_a_test() -> None:
    assert _public_methods(HebbsClient) == set(COVERED)
    assert len(_public_methods(HebbsClient)) == 16  # the 15 of the issue, with health's count() beside it
    assert _public_methods(HebbsRestClient) == set(REST_COVERED)
    for name in {*COVERED.values(), *REST_COVERED.values()}:
        module, _, test = name.rpartition(".")
        home = importlib.import_module(f"tests.interfaces.{module}") if module else None
        assert callable(getattr(home, test, None) if home else globals().get(test)), name


def test_health_and_count(served: Served) -> None:
    async def scenario() -> None:
        async with HebbsClient(served.grpc, api_key=served.key) as client:
            health = await client.health()
            assert health.serving and health.version and health.uptime_seconds >= 0
            before = await client.count()
            await client.remember("A memory counted by health.", entity_id="sdk-count")
            await wait_for(lambda: client.count(), lambda n: n == before + 1)

    run(scenario())


def test_subscribe(served: Served) -> None:
    """A memory remembered in the session surfaces once when a fed chunk is about it (docs/subscribe.md)."""

    async def scenario() -> None:
        async with HebbsClient(served.grpc, api_key=served.key) as client:
            made = await client.remember("The lighthouse lamp was replaced with an LED array in May.",
                                         entity_id="sdk-subscribe")
            sub = await client.subscribe(entity_id="sdk-subscribe")
            await sub.feed("When was the lighthouse lamp ")
            await sub.feed("replaced? ")
            pushes = await sub.listen(timeout=60, max_pushes=1)
            assert [p.memory.id for p in pushes] == [made.id] and pushes[0].confidence >= 0.5
            await sub.feed("Was the lighthouse lamp replaced with LEDs? ")
            assert await sub.listen(timeout=1) == []  # never the same memory twice
            await sub.close()

    run(scenario())


async def wait_for(read: Any, holds: Any, timeout: float = 60.0) -> None:
    """Poll an async read until `holds(value)` (health counts are refreshed after a write, not within it)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not holds(await read()):
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.1)


async def _seed(client: HebbsClient, prefix: str) -> dict[bytes, str]:
    """Three clear topics, each its own entity; memory id -> entity."""
    made = {}
    for topic, texts in TOPICS.items():
        for text in texts:
            memory = await client.remember(text, entity_id=f"{prefix}-{topic}", importance=0.6)
            made[memory.id] = memory.entity_id or ""
    return made


@pytest.mark.slow
def test_reflect_and_insights(served: Served) -> None:
    async def scenario() -> None:
        async with HebbsClient(served.grpc, api_key=served.key) as client:
            made = await _seed(client, "sdk-reflect")
            for topic in TOPICS:
                done = await client.reflect(entity_id=f"sdk-reflect-{topic}")
                assert (done.insights_created, done.clusters_found, done.memories_processed) == (
                    1, 1, len(TOPICS[topic]))
                again = await client.reflect(entity_id=f"sdk-reflect-{topic}")
                assert again.insights_created == 0  # same sources: no duplicate
            for topic in TOPICS:
                (insight,) = await client.insights(entity_id=f"sdk-reflect-{topic}", max_results=5)
                assert insight.kind == MemoryKind.INSIGHT
                assert {made[s] for s in insight.source_memory_ids} == {f"sdk-reflect-{topic}"}
                assert len(insight.source_memory_ids) == len(TOPICS[topic])
                assert insight.context["insight"]["written_by"] == "engine"
            top = await client.insights(max_results=1)
            every = await client.insights(max_results=1000)
            confidence = [m.context.get("insight", {}).get("confidence", m.importance) for m in every]
            assert confidence == sorted(confidence, reverse=True) and top[0].id == every[0].id
            # Insights are memories: recalled like any other. (The session's server holds other tests' memories,
            # car topics among them, so the cue is the insight's own wording: it must be its own nearest.)
            (car,) = await client.insights(entity_id="sdk-reflect-car", max_results=1)
            found = await client.recall(car.content, strategies=["similarity"], top_k=10)
            seen = [(r.memory.kind.name, round(r.score, 3), r.memory.content[:60]) for r in found.results]
            assert car.id in [r.memory.id for r in found.results], (seen, served.warnings())
            with pytest.raises(HebbsInvalidArgumentError, match="max_results"):
                await client.insights(max_results=0)

    run(scenario())


@pytest.mark.slow
def test_reflect_prepare_and_commit(served: Served) -> None:
    async def scenario() -> None:
        async with HebbsClient(served.grpc, api_key=served.key) as client:
            made = await _seed(client, "sdk-prepare")
            prepared = await client.reflect_prepare(entity_id="sdk-prepare-garden")
            assert prepared.session_id and prepared.memories_processed == len(TOPICS["garden"])
            (cluster,) = prepared.clusters
            assert cluster.member_count == len(TOPICS["garden"]) == len(cluster.memories)
            assert {m.content for m in cluster.memories} == set(TOPICS["garden"])
            assert cluster.proposal_user_prompt and cluster.memory_ids == [m.memory_id for m in cluster.memories]
            outsider = next(i for i, e in made.items() if e == "sdk-prepare-car")
            from engine import ids

            before = await client.count()
            for bad, reason in [
                (ProducedInsightInput("x", 0.5, [ids.from_bytes(outsider)]), "not among this session"),
                (ProducedInsightInput("x", 0.5, []), "at least one source"),
                (ProducedInsightInput("", 0.5, cluster.memory_ids), "content"),
                (ProducedInsightInput("x", 0.5, cluster.memory_ids, cluster_id=7), "cluster_id 7"),
            ]:
                with pytest.raises(HebbsInvalidArgumentError, match=reason):
                    await client.reflect_commit(prepared.session_id, [bad])
            with pytest.raises(HebbsInvalidArgumentError, match="no reflect session"):
                await client.reflect_commit("01NOSUCHSESSION", [ProducedInsightInput("x", 0.5, cluster.memory_ids)])
            assert await client.count() == before  # refused commits stored nothing
            done = await client.reflect_commit(prepared.session_id, [ProducedInsightInput(
                "The garden needs regular care: watering, pest control and compost.", 0.85, cluster.memory_ids,
                tags=["garden"], cluster_id=cluster.cluster_id)])
            assert done.insights_created == 1
            (insight,) = await client.insights(entity_id="sdk-prepare-garden")
            assert insight.content.startswith("The garden needs regular care")
            assert sorted(ids.from_bytes(s) for s in insight.source_memory_ids) == sorted(cluster.memory_ids)

    run(scenario())


def test_contradiction_prepare_and_commit(served: Served) -> None:
    async def scenario() -> None:
        async with HebbsClient(served.grpc, api_key=served.key) as client:
            # The session's server holds other tests' candidates and prepare lists the 100 most confident:
            # review them first, as an agent would, so that this test's candidates are all in the list.
            while earlier := await client.contradiction_prepare():
                await client.contradiction_commit([ContradictionVerdictInput(p.pending_id, "dismiss", 0.5)
                                                   for p in earlier])
            a = await client.remember("Dana is allergic to penicillin.", entity_id="sdk-dana")
            await client.remember("Dana likes long walks by the river.", entity_id="sdk-dana")  # compatible
            b = await client.remember("Dana is not allergic to penicillin.", entity_id="sdk-dana")
            c = await client.remember("The Falcons won the cup final.", entity_id="sdk-falcons")
            d = await client.remember("The Falcons lost the cup final.", entity_id="sdk-falcons")
            e = await client.remember("Kim lives in Lisbon.", entity_id="sdk-kim")
            f = await client.remember("Kim no longer lives in Lisbon; she moved to Porto.", entity_id="sdk-kim")
            from engine import ids

            mine = {ids.from_bytes(m.id) for m in (a, b, c, d, e, f)}
            pending = {p.memory_id_b: p for p in await client.contradiction_prepare() if p.memory_id_b in mine}
            key = {name: ids.from_bytes(m.id) for name, m in {"b": b, "d": d, "f": f}.items()}
            assert set(pending) == set(key.values())  # the compatible memory is no candidate
            assert pending[key["b"]].memory_id_a == ids.from_bytes(a.id)
            assert pending[key["b"]].content_a_snippet == "Dana is allergic to penicillin."
            assert "negation" in pending[key["b"]].classifier_method and pending[key["b"]].classifier_score > 0
            assert "revision" in pending[key["f"]].classifier_method
            with pytest.raises(HebbsInvalidArgumentError, match="verdict must be one of"):
                await client.contradiction_commit([ContradictionVerdictInput(pending[key["b"]].pending_id, "maybe",
                                                                             0.9)])
            done = await client.contradiction_commit([
                ContradictionVerdictInput(pending[key["b"]].pending_id, "contradiction", 0.9, "negated"),
                ContradictionVerdictInput(pending[key["d"]].pending_id, "dismiss", 0.5),
                ContradictionVerdictInput(pending[key["f"]].pending_id, "revision", 0.8),
            ])
            assert (done.contradictions_confirmed, done.revisions_created, done.dismissed) == (1, 1, 1)
            left = {p.memory_id_b for p in await client.contradiction_prepare()}
            assert not left & mine
            out = await client.recall("Is Dana allergic to penicillin?", strategies=["similarity"], top_k=3)
            both = [r for r in out.results if r.memory.id in (a.id, b.id)]
            assert len(both) == 2  # the SDK's detail has no field for it; REST's strategy details name it

    run(scenario())
    with served.client() as http:
        found = http.post("/v1/recall", json={"cue": "Is Dana allergic to penicillin?", "top_k": 3,
                                             "strategies": ["similarity"]}).json()["results"]
        marked = {r["memory_id"]: r["strategy_details"][0].get("contradicts") for r in found}
        sides = [i for i, other in marked.items() if other]
        assert len(sides) == 2 and marked[sides[0]] == [sides[1]] and marked[sides[1]] == [sides[0]]


def test_rest_client_insights_and_index(served: Served, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "boat.md").write_text("# The boat\n\nThe sailing boat needs new sails before the summer regatta.\n")

    async def scenario() -> None:
        async with HebbsClient(served.grpc, api_key=served.key) as grpc_client:
            await _seed(grpc_client, "sdk-rest")
            await grpc_client.reflect(entity_id="sdk-rest-tax")
        async with HebbsRestClient(served.rest, api_key=served.key) as client:
            out = await client.insights(entity_id="sdk-rest-tax")
            assert out.count == 1 and "tax" in out.text.lower()
            assert out.insights[0]["kind"] == "insight" and len(out.insights[0]["source_memory_ids"]) == 4
            indexed = await client.index(str(folder))
            assert indexed["uploaded"] == 1 and indexed["files"] == ["boat.md"]
            found = await client.recall("sails for the regatta", top_k=3, strategy="similarity")
            assert any("regatta" in m.content for m in found.results)

    run(scenario())


def test_bad_input_to_the_reflect_service_is_invalid_argument(served: Served) -> None:
    """Raw stubs, so the server's own check answers (the SDK's types would refuse some before sending)."""
    from hebbs._generated import hebbs_pb2 as pb
    from hebbs._generated import hebbs_pb2_grpc as pb_grpc

    metadata = [("authorization", f"Bearer {served.key}")]
    with grpc.insecure_channel(served.grpc) as channel:
        stub = pb_grpc.ReflectServiceStub(channel)
        cases = [
            (stub.GetInsights, pb.GetInsightsRequest(min_confidence=1.5), "min_confidence"),
            (stub.ReflectCommit, pb.ReflectCommitRequest(session_id=""), "session_id"),
            (stub.ContradictionCommit, pb.ContradictionCommitRequest(), "at least one verdict"),
            (stub.ContradictionCommit, pb.ContradictionCommitRequest(verdicts=[pb.ContradictionVerdictInput(
                pending_id="01NOSUCHPENDING", verdict="dismiss")]), "no pending contradiction"),
            (stub.Reflect, pb.ReflectRequest(scope=pb.ReflectScope(entity=pb.EntityScope(entity_id="x\u200b"))),
             "invisible"),
        ]
        for method, request, reason in cases:
            with pytest.raises(grpc.RpcError) as caught:
                method(request, metadata=metadata, timeout=60)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, reason
            assert reason in (caught.value.details() or "")
    with served.client() as http:
        for method, path, body, reason in [
            ("POST", "/v1/reflect", {"entity_id": 5}, "entity_id"),
            ("POST", "/v1/reflect", {"since": "not a date"}, "since"),
            ("GET", "/v1/insights?max_results=0", None, "max_results"),
            ("POST", "/v1/reflect/prepare", {"bogus": 1}, "unknown field"),
            ("POST", "/v1/reflect/commit", {"session_id": "s", "insights": "no"}, "insights must be a list"),
            ("GET", "/v1/contradictions?limit=0", None, "limit"),
            ("POST", "/v1/contradictions/commit", {"verdicts": [{"pending_id": "p", "verdict": "?"}]}, "verdict"),
        ]:
            answer = http.request(method, path, json=body)
            assert 400 <= answer.status_code < 500 and reason in answer.json()["error"], (path, answer.text)


def test_insights_need_the_key(served: Served) -> None:
    with served.client() as http:
        assert http.get("/v1/insights", headers={"Authorization": "Bearer hb_wrong"}).status_code == 401
