"""The official `hebbs` SDK as a black-box client of `hebbs serve`: gRPC (`HebbsClient`) and REST
(`HebbsRestClient`), unchanged. The ranking it gets equals the CLI's for the same data and weights."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from click.testing import CliRunner
from hebbs import HebbsClient, HebbsRestClient
from hebbs.exceptions import (
    HebbsAuthenticationError,
    HebbsInvalidArgumentError,
    HebbsNotFoundError,
)
from hebbs.types import RecallStrategyConfig

from engine import MemoryEngine, ids
from engine.embedding import SentenceTransformerEmbedder
from interfaces.cli import main
from tests.interfaces.conftest import InProcess, Served

T = TypeVar("T")
WEIGHTS = {"w_relevance": 0.6, "w_recency": 0.0, "w_importance": 0.4, "w_reinforcement": 0.0}
FACTS = [
    ("Globex signed a three-year cloud contract with Initech.", "globex-sdk", 0.9),
    ("Globex's CTO complained about Initech's slow support.", "globex-sdk", 0.6),
    ("Initech's support queue grew because two engineers left.", "initech-sdk", 0.5),
    ("Globex threatened to cancel the contract over support delays.", "globex-sdk", 0.8),
    ("The office coffee machine was replaced.", "office-sdk", 0.2),
]
CUE = "Globex contract at risk because of support"


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def test_grpc_client_remember_recall_prime_revise_forget(served: Served) -> None:
    async def scenario() -> None:
        async with HebbsClient(served.grpc, api_key=served.key) as client:
            health = await client._health.check() if client._health else None  # noqa: SLF001 (the SDK's own stub)
            assert health is not None and health.serving and health.version
            made = [await client.remember(text, importance=imp, entity_id=entity) for text, entity, imp in FACTS]
            assert all(len(m.id) == 16 for m in made)
            assert made[0].entity_id == "globex-sdk" and made[0].importance == pytest.approx(0.9)
            got = await client.get(made[1].id)
            assert got.content == FACTS[1][0]

            out = await client.recall(CUE, strategies=["similarity"], top_k=3, scoring_weights=WEIGHTS)
            assert len(out.results) == 3
            for r in out.results:
                detail = r.strategy_details[0]
                assert detail.strategy == "similarity" and detail.distance is not None
                assert detail.relevance == pytest.approx(1 - detail.distance, abs=1e-6)
            temporal = await client.recall(CUE, strategies=["temporal"], entity_id="globex-sdk", top_k=10)
            assert {r.memory.id for r in temporal.results} == {made[0].id, made[1].id, made[3].id}
            assert all(r.strategy_details[0].rank is not None for r in temporal.results)

            # Link cause and effect through the SDK's Edge type, then walk it with a seeded causal config.
            from hebbs.types import Edge, EdgeType

            effect = await client.remember("Globex cancelled the Initech contract.", entity_id="globex-sdk",
                                           edges=[Edge(made[3].id, EdgeType.CAUSED_BY, 0.9)])
            causal = await client.recall("", strategies=[RecallStrategyConfig("causal", seed_memory_id=effect.id,
                                                                              max_depth=2)])
            reached = {r.memory.id: r.strategy_details[0] for r in causal.results}
            assert made[3].id in reached and reached[made[3].id].depth == 1
            analogical = await client.recall(CUE, strategies=[RecallStrategyConfig("analogical", analogical_alpha=0.8)])
            assert analogical.results and analogical.results[0].strategy_details[0].embedding_similarity is not None
            every = await client.recall(CUE, strategies=["similarity", "temporal", "causal", "analogical"],
                                        entity_id="globex-sdk", scoring_weights=WEIGHTS)
            assert {d.strategy for r in every.results for d in r.strategy_details} == {
                "similarity", "temporal", "causal", "analogical"}

            primed = await client.prime("globex-sdk", max_memories=2, similarity_cue="support")
            assert len(primed.results) == 2
            assert all(r.memory.entity_id == "globex-sdk" for r in primed.results)

            revised = await client.revise(made[1].id, importance=0.95)
            assert revised.importance == pytest.approx(0.95) and revised.id == made[1].id
            forgotten = await client.forget(memory_ids=[made[4].id])
            assert forgotten.forgotten_count == 1
            with pytest.raises(HebbsNotFoundError):
                await client.get(made[4].id)
            with pytest.raises(HebbsInvalidArgumentError, match="importance"):
                await client.remember("x", importance=3.0)
            with pytest.raises(HebbsInvalidArgumentError, match="16 bytes"):
                await client.get(b"short")
            gone = await client.forget(entity_id="globex-sdk")
            assert gone.forgotten_count >= 4

    run(scenario())


def test_grpc_refuses_a_missing_or_wrong_key(served: Served) -> None:
    async def call(key: str | None) -> None:
        async with HebbsClient(served.grpc, api_key=key or "") as client:
            await client.recall("anything")

    for key in (None, "hb_wrong_" + "y" * 30):
        with pytest.raises(HebbsAuthenticationError):
            run(call(key))
    assert "hb_wrong_" not in served.log.read_text()


def test_rest_client_remember_recall_prime_forget_status(served: Served) -> None:
    async def scenario() -> None:
        async with HebbsRestClient(served.rest, api_key=served.key) as client:
            status = await client.status()
            assert status.status == "ok" and status.version
            made = await client.remember("Umbrella Corp renewed its lab lease.", importance=0.7,
                                         entity_id="umbrella-sdk", context={"site": "raccoon"})
            assert made.memory_id and made.entity_id == "umbrella-sdk" and made.context == {"site": "raccoon"}
            await client.remember("Umbrella Corp's lab failed its safety audit.", entity_id="umbrella-sdk")
            out = await client.recall("Umbrella lab lease", top_k=2, strategy="similarity")
            assert out.count == 2 and out.results[0].memory_id == made.memory_id and out.results[0].score > 0
            primed = await client.prime("umbrella-sdk", max_memories=5, similarity_cue="audit")
            assert primed.count == 2
            gone = await client.forget(entity_id="umbrella-sdk")
            assert gone.forgotten_count == 2
            with pytest.raises(HebbsAuthenticationError):
                async with HebbsRestClient(served.rest, api_key="hb_wrong_key") as wrong:
                    await wrong.recall("x")

    run(scenario())


def test_the_sdk_ranking_equals_the_clis_for_the_same_data_and_weights(
    in_process: Callable[..., InProcess], embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    """The same memories through the SDK into a server's fresh store, and through the Python API into the
    CLI's data dir; the same recalls with the same weights (no recency or reinforcement: those move with
    the clock and the access counts) must rank identically."""
    server = in_process()
    entity = "rank-check"

    async def through_sdk() -> list[list[str]]:
        async with HebbsClient(server.grpc) as client:
            for text, _, imp in FACTS:
                await client.remember(text, importance=imp, entity_id=entity)
            rankings = []
            for strategies in (["similarity"], ["temporal"], ["similarity", "temporal", "analogical"]):
                out = await client.recall(CUE, strategies=strategies, entity_id=entity, scoring_weights=WEIGHTS)
                rankings.append([r.memory.content for r in out.results])
            return rankings

    sdk = run(through_sdk())
    data = tmp_path / "cli"
    with MemoryEngine(data, embedder=embedder) as engine:
        for text, _, imp in FACTS:
            engine.remember(text, importance=imp, entity_id=entity)
    weights = ":".join(str(WEIGHTS[k]) for k in ("w_relevance", "w_recency", "w_importance", "w_reinforcement"))
    runner = CliRunner()

    def cli(*strategies: str) -> list[str]:
        args = [a for s in strategies for a in ("--strategy", s)]
        done = runner.invoke(main, ["--data-dir", str(data), "recall", CUE, *args, "--entity-id", entity,
                                    "--weights", weights, "--format", "json"])
        assert done.exit_code == 0, done.output
        return [r["memory"]["content"] for r in json.loads(done.stdout)["results"]]

    assert sdk == [cli("similarity"), cli("temporal"), cli("similarity", "temporal", "analogical")]
    assert len(sdk[0]) == len(sdk[1]) == len(FACTS)


@pytest.mark.slow
def test_the_cli_talks_to_the_server_with_server_url(served: Served) -> None:
    hebbs = str(Path(sys.executable).with_name("hebbs"))
    env = {"HEBBS_API_KEY": served.key, "HEBBS_SERVER": served.rest, "PATH": "/usr/bin:/bin"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([hebbs, *args], capture_output=True, text=True, env=env, timeout=120)

    made = cli("remember", "Hooli bought Pied Piper.", "--entity-id", "hooli-cli", "--format", "json")
    assert made.returncode == 0, made.stderr
    memory_id = json.loads(made.stdout)["id"]
    assert ids.is_valid(memory_id)
    found = cli("recall", "who bought Pied Piper", "--weights", "1:0:0:0", "--top-k", "1", "--format", "json")
    assert json.loads(found.stdout)["results"][0]["memory"]["id"] == memory_id
    listed = cli("--server", served.rest, "list", "--entity-id", "hooli-cli", "--format", "json")
    assert json.loads(listed.stdout)["total"] == 1
    # Errors come back as the same one line and exit code as locally.
    bad = cli("remember", "x", "--importance", "7")
    assert bad.returncode == 2 and bad.stderr.startswith("hebbs: error: ") and bad.stderr.count("\n") == 1
    missing = cli("get", "01NOSUCHMEMORY0000000000")
    assert missing.returncode == 2 and "01NOSUCHMEMORY0000000000" in missing.stderr
    assert cli("forget", memory_id).returncode == 0


def test_set_policy_is_applied_and_kept(served: Served) -> None:
    """The SDK's set_policy over gRPC changes the policy REST then reads; a bad value is INVALID_ARGUMENT."""

    async def scenario() -> bool:
        async with HebbsClient(served.grpc, api_key=served.key) as client:
            with pytest.raises(HebbsInvalidArgumentError, match="decay_half_life_days"):
                await client.set_policy(decay_half_life_days=-1)
            applied = await client.set_policy(decay_half_life_days=12.5, max_snapshots_per_memory=50)
            made = await client.remember("A policy probe.", importance=0.6)
            assert made.decay_score == pytest.approx(0.6, abs=1e-3)
            return applied

    before = served.client().get("/v1/policy").json()
    assert before["decay_half_life_days"] != 12.5
    assert run(scenario()) is True
    after = served.client().get("/v1/policy").json()
    assert (after["decay_half_life_days"], after["max_snapshots_per_memory"]) == (12.5, 50)
    assert after["auto_forget_threshold"] == before["auto_forget_threshold"]  # not given: kept
    served.client().put("/v1/policy", json={"decay_half_life_days": before["decay_half_life_days"]})
