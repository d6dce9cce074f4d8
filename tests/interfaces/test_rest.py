"""The REST API of a real `hebbs serve` process: routes, errors, auth, docs, and the README's curl example."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.interfaces.conftest import Served

README = Path(__file__).resolve().parents[2] / "README.md"
ROUTES = {
    ("post", "/v1/memories"), ("get", "/v1/memories"), ("get", "/v1/memories/{memory_id}"),
    ("put", "/v1/memories/{memory_id}"), ("delete", "/v1/memories/{memory_id}"), ("post", "/v1/forget"),
    ("post", "/v1/memories/{memory_id}/edges"), ("post", "/v1/memories/recall"), ("post", "/v1/recall"),
    ("post", "/v1/rescore"), ("post", "/v1/prime"), ("post", "/v1/index"), ("post", "/v1/upload"),
    ("get", "/v1/entities"), ("get", "/v1/graph/{memory_id}"), ("get", "/v1/stats"), ("get", "/v1/system/health"),
    ("get", "/v1/health/live"), ("get", "/v1/health/ready"),
}
SIGNALS = ("relevance", "recency", "importance", "reinforcement")
WEIGHTS = {"w_relevance": 0.3, "w_recency": 0.5, "w_importance": 0.2, "w_reinforcement": 0.0}


def test_every_route_of_the_issue_is_in_the_openapi_schema(served: Served) -> None:
    schema = httpx.get(f"{served.rest}/openapi.json").json()
    found = {(method, path) for path, ops in schema["paths"].items() for method in ops}
    assert found >= ROUTES, ROUTES - found
    recall = schema["paths"]["/v1/memories/recall"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    body = schema["components"]["schemas"][recall["$ref"].rsplit("/", 1)[1]]
    for name in ("cue", "strategies", "top_k", "scoring_weights", "entity_id", "time_range", "ef_search",
                 "seed_memory_id", "max_depth", "edge_types", "analogical_alpha"):
        assert name in body["properties"], name


def test_docs_are_served_from_the_bundled_swagger_ui_not_a_cdn(served: Served) -> None:
    page = httpx.get(f"{served.rest}/docs").text
    assert "/openapi.json" in page and "cdn" not in page.lower()
    for asset in re.findall(r'(?:src|href)="(/static/swagger/[^"]+)"', page):
        assert httpx.get(f"{served.rest}{asset}").status_code == 200, asset


def test_health_needs_no_key_and_everything_else_does(served: Served) -> None:
    for path in ("/v1/health/live", "/v1/health/ready", "/v1/system/health"):
        assert httpx.get(f"{served.rest}{path}").status_code == 200, path
    health = httpx.get(f"{served.rest}/v1/system/health").json()
    assert health["status"] == "ok" and health["version"]
    wrong = "hb_wrong_" + "x" * 30
    for headers in ({}, served.headers(wrong), {"Authorization": "Basic abc"}):
        for method, path in (("GET", "/v1/stats"), ("POST", "/v1/memories/recall"), ("POST", "/v1/memories")):
            reply = httpx.request(method, f"{served.rest}{path}", headers=headers, json={"cue": "x", "content": "x"})
            assert reply.status_code == 401, (headers, path)
            assert set(reply.json()) == {"error"}
    # Neither key ever reaches the log.
    log = served.log.read_text()
    assert served.key not in log and wrong not in log


def test_remember_get_list_revise_edges_graph_and_forget(served: Served) -> None:
    with served.client() as http:
        cause = http.post("/v1/memories", json={"content": "The Acme contract renewal was delayed by legal.",
                                                "entity_id": "acme-rest", "importance": 0.8})
        assert cause.status_code == 201
        cause_id = cause.json()["id"]
        assert cause.json()["memory_id"] == cause_id and cause.json()["importance"] == 0.8
        batch = http.post("/v1/memories", json={"items": [
            {"content": "Acme moved the kickoff meeting to Friday.", "entity_id": "acme-rest"},
            {"content": "Acme's CFO asked for a discount.", "entity_id": "acme-rest", "context": {"deal": 7}},
        ]})
        assert batch.status_code == 201
        effect_id = batch.json()["memories"][0]["id"]
        assert http.get(f"/v1/memories/{effect_id}").json()["content"].startswith("Acme moved")

        page = http.get("/v1/memories", params={"entity_id": "acme-rest", "limit": 2}).json()
        assert page["total"] == 3 and len(page["memories"]) == 2
        assert http.get("/v1/memories", params={"entity_id": "acme-rest", "offset": 2}).json()["total"] == 3

        edges = http.post(f"/v1/memories/{effect_id}/edges", json={"edges": [{"target": cause_id, "type": "caused_by",
                                                                              "confidence": 0.9}]})
        assert edges.status_code == 201 and edges.json()["edges"][0]["target"] == cause_id
        graph = http.get(f"/v1/graph/{effect_id}").json()
        assert {n["memory"]["id"] for n in graph["nodes"]} >= {cause_id, effect_id}
        assert "acme-rest" in http.get("/v1/entities").json()["entities"]

        revised = http.put(f"/v1/memories/{cause_id}", json={"importance": 0.95})
        assert revised.status_code == 200 and revised.json()["importance"] == 0.95

        gone = http.delete(f"/v1/memories/{effect_id}").json()
        assert gone["forgotten"] == [effect_id] and gone["forgotten_count"] == 1
        assert http.get(f"/v1/memories/{effect_id}").status_code == 404
        by_entity = http.post("/v1/forget", json={"entity_id": "acme-rest"}).json()
        assert cause_id in by_entity["forgotten"]
        assert http.get("/v1/memories", params={"entity_id": "acme-rest"}).json()["total"] == 0


def test_recall_with_each_strategy_weights_and_details_then_rescore_counts_no_access(served: Served) -> None:
    with served.client() as http:
        first = http.post("/v1/memories", json={"content": "The payments database credentials were rotated.",
                                                "entity_id": "ledger-rest"}).json()
        second = http.post("/v1/memories", json={
            "content": "The payments service went down because its database credentials were stale.",
            "entity_id": "ledger-rest", "edges": [f"{first['id']}:caused_by:0.9"]}).json()
        cue = "why did the payments service go down"
        for strategies, extra in (
            (["similarity"], {}),
            (["temporal"], {"entity_id": "ledger-rest"}),
            (["causal"], {"seed_memory_id": second["id"], "max_depth": 2, "edge_types": ["caused_by"]}),
            (["analogical"], {"analogical_alpha": 0.7}),
            (["similarity", "temporal", "causal", "analogical"], {"entity_id": "ledger-rest"}),
        ):
            reply = http.post("/v1/memories/recall", json={"cue": cue, "strategies": strategies, "top_k": 5,
                                                           "scoring_weights": WEIGHTS, **extra})
            assert reply.status_code == 200, reply.text
            results = reply.json()["results"]
            assert results, strategies
            found = {d["strategy"] for r in results for d in r["strategy_details"]}
            assert found == set(strategies), (strategies, found)
            for r in results:
                s = r["signals"]
                expected = sum(WEIGHTS[f"w_{k}"] * s[k] for k in SIGNALS)
                assert r["score"] == pytest.approx(expected, abs=1e-9)
            similar = [d for r in results for d in r["strategy_details"] if d["strategy"] == "similarity"]
            assert all("distance" in d and "relevance" in d for d in similar)
        same = http.post("/v1/recall", json={"cue": cue, "top_k": 1}).json()["results"][0]
        before = http.get(f"/v1/memories/{same['memory']['id']}").json()["access_count"]
        rescored = http.post("/v1/rescore", json={"results": [same], "scoring_weights": "1:0:0:0"}).json()["results"]
        assert rescored[0]["score"] == pytest.approx(same["signals"]["relevance"])
        after = http.get(f"/v1/memories/{same['memory']['id']}").json()["access_count"]
        assert after == before
        primed = http.post("/v1/prime", json={"entity_id": "ledger-rest", "cue": "database"}).json()["results"]
        assert {r["memory"]["id"] for r in primed} == {first["id"], second["id"]}


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "says"),
    [
        ("POST", "/v1/memories", {"content": "x", "importance": 7}, 400, "importance"),
        ("POST", "/v1/memories", {"content": "   "}, 400, "content"),
        ("POST", "/v1/memories", {"content": "x", "colour": "red"}, 400, "colour"),
        ("POST", "/v1/memories", {"content": ["not", "text"]}, 400, "content"),
        ("POST", "/v1/memories/recall", {"cue": "x", "strategies": ["telepathy"]}, 400, "telepathy"),
        ("POST", "/v1/memories/recall", {"cue": "x", "strategies": ["temporal"]}, 400, "entity_id"),
        ("POST", "/v1/memories/recall", {"cue": "x", "scoring_weights": "1:2:3"}, 400, "weights"),
        ("POST", "/v1/memories/recall", {"cue": "x", "top_k": "many"}, 400, "top_k"),
        ("GET", "/v1/memories/01NOSUCHMEMORY0000000000", None, 404, "01NOSUCHMEMORY0000000000"),
        ("PUT", "/v1/memories/01NOSUCHMEMORY0000000000", {"content": "y"}, 404, "01NOSUCHMEMORY0000000000"),
        ("DELETE", "/v1/memories/01NOSUCHMEMORY0000000000", None, 404, "01NOSUCHMEMORY0000000000"),
        ("POST", "/v1/forget", {}, 400, "forget"),
        ("GET", "/v1/nowhere", None, 404, "Not Found"),
    ],
)
def test_bad_input_is_a_4xx_with_the_reason_and_changes_nothing(
    served: Served, method: str, path: str, body: object, status: int, says: str
) -> None:
    with served.client() as http:
        before = http.get("/v1/stats").json()
        reply = http.request(method, path, json=body)
        assert reply.status_code == status, reply.text
        assert list(reply.json()) == ["error"] and says in reply.json()["error"]
        assert http.get("/v1/stats").json() == before


def test_the_readme_curl_example_verbatim_but_the_port(served: Served) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    text = README.read_text()
    block = re.search(r"```sh\n(curl -X POST http://localhost:6381/v1/memories/recall.*?)```", text, re.S)
    assert block, "README: the curl recall example is missing"
    with served.client() as http:
        http.post("/v1/memories", json={"content": "Acme meeting: the budget review moved to Friday.",
                                        "entity_id": "acme", "importance": 0.7})
    command = block.group(1).replace("localhost:6381", served.rest.removeprefix("http://"))
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60,
                          env={"HEBBS_API_KEY": served.key, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert results and all("score" in r and r["strategy_details"] for r in results)
    assert {"relevance", "distance"} <= set(results[0]["strategy_details"][0])
