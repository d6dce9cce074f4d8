"""Tenants over the transports: keys bound to a tenant, an admin key, `X-Hebbs-Tenant` and the SDK's tenant_id,
on a real REST + gRPC server. Two tenants hold the same memories; every route and strategy answers a key with
its own tenant's memories only, and another tenant's ids are not found (404 / NOT_FOUND) or refused (403)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from hebbs import HebbsClient
from hebbs.exceptions import HebbsInvalidArgumentError, HebbsNotFoundError, HebbsPermissionDeniedError

from engine import ids
from interfaces.auth import TENANT_HEADER
from tests.engine.test_tenants import CONTRADICTION, CUES, TOPICS, Seeded, seed
from tests.interfaces.conftest import InProcess

_ID = re.compile(r"^[0-9A-Z]{26}$")


def ids_in(value: Any) -> set[str]:
    """Every memory id anywhere in a JSON reply (ids, sources, seeds, candidates' sides)."""
    if isinstance(value, dict):
        return set().union(*(ids_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(ids_in(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) and _ID.match(value) else set()


class Tenant:
    """A REST client with one key (and optionally a tenant header)."""

    def __init__(self, rest: str, key: str, tenant: str | None = None) -> None:
        headers = {"Authorization": f"Bearer {key}", **({TENANT_HEADER: tenant} if tenant else {})}
        self.http = httpx.Client(base_url=rest, headers=headers, timeout=60)

    def ok(self, method: str, path: str, **kw: Any) -> Any:
        reply = self.http.request(method, path, **kw)
        assert reply.status_code in (200, 201), (path, reply.text)
        return reply.json()

    def seed(self, marker: str) -> Seeded:
        def remember(text: str, **fields: Any) -> str:
            return str(self.ok("POST", "/v1/memories", json={"content": text, **fields})["id"])

        def add_edge(source: str, target: str, kind: str) -> None:
            self.ok("POST", f"/v1/memories/{source}/edges", json={"edges": [{"target": target, "type": kind}]})

        return seed(remember, add_edge, marker)


@pytest.fixture
def tenants(in_process: Callable[..., InProcess], store: dict[str, Any]
            ) -> Iterator[tuple[InProcess, dict[str, str], dict[str, Seeded]]]:
    """A guarded server on each record store (SQLite, PostgreSQL); keys of tenants alpha and beta and an admin
    key; the same memories in both tenants."""
    server = in_process(auth=True, database=store.get("database"))
    keys = {name: server.service.keys.create(name, tenant)[1]
            for name, tenant in (("alpha", "alpha"), ("beta", "beta"), ("admin", None))}
    seeded = {name: Tenant(server.rest, keys[name]).seed(f"Only {name} keeps this note about the garden gate.")
              for name in ("alpha", "beta")}
    yield server, keys, seeded


def test_every_rest_route_and_strategy_answers_with_the_keys_tenant_only(
    tenants: tuple[InProcess, dict[str, str], dict[str, Seeded]],
) -> None:
    server, keys, seeded = tenants
    for name, own in seeded.items():
        other = seeded["beta" if name == "alpha" else "alpha"].ids
        client = Tenant(server.rest, keys[name])
        client.ok("POST", "/v1/reflect", json={})
        replies = [client.ok("GET", "/v1/memories", params={"limit": 500}), client.ok("GET", "/v1/insights"),
                   client.ok("GET", "/v1/contradictions"), client.ok("GET", "/v1/entities"),
                   client.ok("GET", f"/v1/graph/{own.chain[0]}", params={"depth": 3}),
                   client.ok("GET", "/v1/tombstones"), client.ok("POST", "/v1/reflect/prepare", json={})]
        for cue in CUES:
            for body in ({}, {"preset": "recommended"}, {"strategies": ["similarity"]}, {"strategies": ["lexical"]},
                         {"strategies": ["analogical"]}, {"strategies": ["similarity", "lexical"]}):
                replies.append(client.ok("POST", "/v1/recall", json={"cue": cue, "top_k": 50, **body}))
        for entity in [*TOPICS, "farm", "priya"]:
            replies.append(client.ok("POST", "/v1/recall", json={"strategies": ["temporal"], "entity_id": entity,
                                                                  "top_k": 50}))
            replies.append(client.ok("POST", "/v1/prime", json={"entity_id": entity, "max_memories": 50}))
        walk = client.ok("POST", "/v1/recall", json={"strategies": ["causal"], "seed_memory_id": own.chain[0],
                                                      "max_depth": 5, "top_k": 50})
        assert ids_in(walk) >= set(own.chain[1:])
        replies.append(walk)
        found = ids_in(replies)
        assert found & other == set(), name
        assert own.ids <= found  # every own memory was reached: the replies are not empty by accident
        assert client.ok("GET", "/v1/stats")["memories"] >= len(own.ids)
        pending = client.ok("GET", "/v1/contradictions")["candidates"]
        assert [{c["memory_id_a"], c["memory_id_b"]} <= own.ids for c in pending] == [True]  # its own pair only


def test_another_tenants_ids_are_not_found_and_other_tenants_are_refused(
    tenants: tuple[InProcess, dict[str, str], dict[str, Seeded]],
) -> None:
    server, keys, seeded = tenants
    alpha, beta = Tenant(server.rest, keys["alpha"]), Tenant(server.rest, keys["beta"])
    target = seeded["beta"].chain[0]
    before = beta.ok("GET", f"/v1/memories/{target}")
    edge = {"edges": [{"target": target, "type": "caused_by"}]}
    # An edge to it is refused as bad input, as for an id that never existed (400 "edge endpoint(s) not found").
    for method, path, body, status in [
        ("GET", f"/v1/memories/{target}", None, 404), ("PUT", f"/v1/memories/{target}", {"content": "New."}, 404),
        ("DELETE", f"/v1/memories/{target}", None, 404), ("POST", "/v1/forget", {"ids": [target]}, 404),
        ("GET", f"/v1/graph/{target}", None, 404),
        ("POST", "/v1/recall", {"strategies": ["causal"], "seed_memory_id": target}, 404),
        ("POST", f"/v1/memories/{seeded['alpha'].chain[0]}/edges", edge, 400),
    ]:
        reply = alpha.http.request(method, path, json=body)
        error = reply.json()["error"]
        assert reply.status_code == status and target in error, (method, path, reply.text)
    alpha.ok("POST", "/v1/forget", json={"entity_id": "car"})  # an erasure by entity: alpha's car memories only
    assert beta.ok("GET", f"/v1/memories/{target}")["content"] == before["content"]
    assert len(beta.ok("GET", "/v1/memories", params={"entity_id": "car"})["memories"]) == len(TOPICS["car"])

    for key, tenant, status in [(keys["alpha"], "beta", 403), (keys["alpha"], "Beta!", 400), ("hb_nope", "beta", 401)]:
        reply = Tenant(server.rest, key, tenant).http.get(f"/v1/memories/{target}")
        assert reply.status_code == status and (status == 401 or "tenant" in reply.json()["error"]), reply.text
    assert Tenant(server.rest, keys["alpha"], "alpha").ok("GET", "/v1/stats")["memories"] > 0  # its own, named
    admin = Tenant(server.rest, keys["admin"], "beta")
    assert admin.ok("GET", f"/v1/memories/{target}")["id"] == target  # an admin key may use any tenant
    assert Tenant(server.rest, keys["admin"]).http.get(f"/v1/memories/{target}").status_code == 404  # default's
    refused = alpha.http.put("/v1/policy", json={"tenant_id": "beta", "decay_half_life_days": 3})
    assert refused.status_code == 400 and "tenant" in refused.json()["error"]
    assert beta.ok("GET", "/v1/policy")["decay_half_life_days"] == 30


def test_rest_subscriptions_surface_the_subscribers_tenant_only(
    tenants: tuple[InProcess, dict[str, str], dict[str, Seeded]],
) -> None:
    server, keys, seeded = tenants
    alpha = Tenant(server.rest, keys["alpha"])
    with alpha.http.stream("POST", "/v1/subscribe", json={"confidence_threshold": 0.3}) as stream:
        events = _events(stream.iter_lines())
        subscribed = next(events)
        assert subscribed[0] == "subscribed"
        sub_id = subscribed[1]["subscription_id"]
        assert Tenant(server.rest, keys["beta"]).http.post(f"/v1/subscribe/{sub_id}/feed",
                                                           json={"text": "x. "}).status_code == 404  # not beta's
        alpha.ok("POST", f"/v1/subscribe/{sub_id}/feed", json={"text": f"{TOPICS['garden'][0]} "})
        alpha.ok("DELETE", f"/v1/subscribe/{sub_id}")
        pushed = {data["memory"]["id"] for name, data in events if name == "push"}
    assert pushed and pushed <= seeded["alpha"].ids


def _events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Server-Sent Events as (name, data) until the stream ends."""
    name = ""
    for line in lines:
        if line.startswith("event: "):
            name = line[len("event: "):]
        elif line.startswith("data: "):
            yield name, json.loads(line[len("data: "):])


def test_the_sdk_over_grpc_sees_its_tenant_only(tenants: tuple[InProcess, dict[str, str], dict[str, Seeded]]) -> None:
    server, keys, seeded = tenants
    target = ids.to_bytes(seeded["beta"].chain[0])

    async def scenario() -> None:
        async with HebbsClient(server.grpc, api_key=keys["alpha"]) as alpha:
            found: set[str] = set()
            for cue in CUES:
                for strategies in (["similarity"], ["analogical"], None):
                    out = await alpha.recall(cue, strategies=strategies, top_k=50)
                    found |= {ids.from_bytes(r.memory.id) for r in out.results}
            for entity in [*TOPICS, "farm", "priya"]:
                out = await alpha.recall("", strategies=["temporal"], entity_id=entity, top_k=50)
                found |= {ids.from_bytes(r.memory.id) for r in out.results}
                found |= {ids.from_bytes(r.memory.id) for r in (await alpha.prime(entity, max_memories=50)).results}
            await alpha.reflect()
            for insight in await alpha.insights(max_results=100):
                found |= {ids.from_bytes(s) for s in insight.source_memory_ids}
            for candidate in await alpha.contradiction_prepare():
                found |= {candidate.memory_id_a, candidate.memory_id_b}
            assert found & seeded["beta"].ids == set() and seeded["alpha"].ids <= found
            for attempt in (alpha.get(target), alpha.revise(target, content="Overwritten."),
                            alpha.forget(memory_ids=[target])):
                with pytest.raises(HebbsNotFoundError):
                    await attempt
            sub = await alpha.subscribe(confidence_threshold=0.3)
            await sub.feed(f"{CONTRADICTION[0]} ")
            pushes = await sub.listen(timeout=30, max_pushes=1)
            assert pushes and {ids.from_bytes(p.memory.id) for p in pushes} <= seeded["alpha"].ids
            await sub.close()
        async with HebbsClient(server.grpc, api_key=keys["alpha"], tenant_id="beta") as wrong:
            with pytest.raises(HebbsPermissionDeniedError, match="tenant"):
                await wrong.recall("garden")
        async with HebbsClient(server.grpc, api_key=keys["alpha"], tenant_id="Beta!") as bad:
            with pytest.raises(HebbsInvalidArgumentError, match="tenant"):
                await bad.recall("garden")
        async with HebbsClient(server.grpc, api_key=keys["admin"], tenant_id="beta") as admin:
            assert ids.from_bytes((await admin.get(target)).id) == seeded["beta"].chain[0]
            await admin.set_policy(decay_half_life_days=7)
        async with HebbsClient(server.grpc, api_key=keys["beta"]) as beta:
            assert ids.from_bytes((await beta.get(target)).id) == seeded["beta"].chain[0]  # unchanged, still there

    asyncio.run(scenario())
    beta = Tenant(server.rest, keys["beta"])
    assert beta.ok("GET", "/v1/policy")["decay_half_life_days"] == 7  # the admin's set_policy reached beta
    assert Tenant(server.rest, keys["alpha"]).ok("GET", "/v1/policy")["decay_half_life_days"] == 30


def test_uploads_idempotency_keys_and_reflect_sessions_are_the_tenants_own(
    tenants: tuple[InProcess, dict[str, str], dict[str, Seeded]],
) -> None:
    """A retry key, an uploaded document and a reflect session of one tenant mean nothing to another: the same
    Idempotency-Key stores beta's memory instead of replaying alpha's reply."""
    server, keys, seeded = tenants
    alpha, beta = Tenant(server.rest, keys["alpha"]), Tenant(server.rest, keys["beta"])
    retry = {"Idempotency-Key": "same-key-everywhere"}
    first = alpha.http.post("/v1/memories", json={"content": "Alpha's retried note."}, headers=retry)
    other = beta.http.post("/v1/memories", json={"content": "Beta's retried note."}, headers=retry)
    assert first.status_code == other.status_code == 201 and "Idempotent-Replayed" not in other.headers
    assert other.json()["content"] == "Beta's retried note." and other.json()["id"] not in seeded["alpha"].ids
    again = alpha.http.post("/v1/memories", json={"content": "Alpha's retried note."}, headers=retry)
    assert again.headers.get("Idempotent-Replayed") == "true" and again.json()["id"] == first.json()["id"]

    page = b"# Gate\n\nThe garden gate code changed to 4417 on Monday.\n"
    uploaded = alpha.ok("POST", "/v1/upload", files=[("files", ("gate.md", page, "text/markdown"))])
    assert uploaded["uploaded"] == 1
    cue = {"cue": "garden gate code 4417", "strategies": ["lexical"], "top_k": 20}
    assert any("4417" in r["memory"]["content"] for r in alpha.ok("POST", "/v1/recall", json=cue)["results"])
    assert not any("4417" in r["memory"]["content"] for r in beta.ok("POST", "/v1/recall", json=cue)["results"])

    session = alpha.ok("POST", "/v1/reflect/prepare", json={})["session_id"]
    insight = {"content": "x", "confidence": 0.5, "source_memory_ids": [seeded["alpha"].chain[0]]}
    stolen = beta.http.post("/v1/reflect/commit", json={"session_id": session, "insights": [insight]})
    assert stolen.status_code == 400 and "no reflect session" in stolen.json()["error"]
