"""Tenants as partitions (engine/tenancy.py): two tenants with the same memories see only their own, by every
strategy and every read or write by id, on both record stores; an existing store opens as tenant `default`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine import MemoryEngine
from engine.api import parse_request
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.errors import InvalidTenantError, MemoryNotFoundError, ValidationError
from engine.models import EdgeType
from engine.tenancy import DEFAULT_TENANT, tenant_name
from engine.tenants import Tenants

# The same memories in both tenants: two topics, a causal chain and a contradiction, each on a timeline of its own.
TOPICS = {
    "garden": ["The tomatoes in the garden need watering every evening in July.",
               "Aphids are eating the roses; spray them with soapy water.",
               "We planted basil and parsley beside the tomato beds.",
               "The compost heap is ready to spread on the vegetable garden."],
    "car": ["The car's brakes squeal when stopping on wet roads.",
            "The mechanic said the car needs new brake pads and an oil change.",
            "The car failed its inspection because of a worn tyre.",
            "Car insurance renewal is due next month; compare quotes first."],
}
CHAIN = ["The storm knocked a tree onto the power line.", "The power line failure cut electricity to the farm.",
         "Without electricity the farm's milk cooler stopped and the milk spoiled."]
CONTRADICTION = ["Priya works at the Berlin office.", "Priya does not work at the Berlin office."]
CUES = ["tomatoes watering garden", "brake pads oil change", "storm power line milk", "Priya Berlin office"]


@dataclass
class Seeded:
    """One tenant's memories: every id, and the ids of its causal chain."""

    ids: set[str]
    chain: list[str]


def seed(remember: Any, add_edge: Any, marker: str) -> Seeded:
    """The shared memories plus one of the tenant's own (`marker`), through the given write calls."""
    ids, chain = set(), []
    for topic, texts in TOPICS.items():
        ids |= {remember(text, entity_id=topic) for text in texts}
    for text in CHAIN:
        chain.append(remember(text, entity_id="farm"))
    for a, b in zip(chain, chain[1:], strict=False):
        add_edge(a, b, "caused_by")
    ids |= set(chain)
    ids |= {remember(text, entity_id="priya") for text in CONTRADICTION}
    ids.add(remember(marker, entity_id="garden"))
    return Seeded(ids, chain)


def seed_engine(engine: MemoryEngine, marker: str) -> Seeded:
    return seed(lambda text, **kw: engine.remember(text, **kw).id,
                lambda a, b, t: engine.add_edge(a, b, EdgeType(t)), marker)


@pytest.fixture
def two(store: dict[str, Any], embedder: Embedder, clock: ManualClock
        ) -> Iterator[tuple[Tenants, dict[str, Seeded]]]:
    """Tenants `default` and `acme` of one store (SQLite and PostgreSQL), each with the same memories."""
    tenants = Tenants(MemoryEngine(**store, embedder=embedder, clock=clock))
    try:
        seeded = {name: seed_engine(tenants.get(name), f"Only {name} keeps this note about the garden gate.")
                  for name in (DEFAULT_TENANT, "acme")}
        yield tenants, seeded
    finally:
        tenants.close()


def call(engine: MemoryEngine, op: str, **fields: object) -> Any:
    return engine.handle(parse_request(op, fields))


def test_every_strategy_and_read_sees_only_the_tenants_own_memories(two: tuple[Tenants, dict[str, Seeded]]) -> None:
    tenants, seeded = two
    assert seeded[DEFAULT_TENANT].ids.isdisjoint(seeded["acme"].ids)
    for name, own in seeded.items():
        engine = tenants.get(name)
        other = seeded["acme" if name == DEFAULT_TENANT else DEFAULT_TENANT].ids
        found: set[str] = set()
        for cue in CUES:
            for strategies in (["similarity"], ["lexical"], ["analogical"], ["similarity", "lexical"], None):
                found |= {r.memory.id for r in engine.recall(cue, strategies=strategies, top_k=50)}
            found |= {r.memory.id for r in engine.recall(cue, preset="recommended", top_k=50)}
        for entity in ("garden", "car", "farm", "priya"):
            found |= {r.memory.id for r in engine.recall("", strategies=["temporal"], entity_id=entity, top_k=50)}
            found |= {r.memory.id for r in engine.prime(entity, top_k=50)}
        walk = engine.recall("", strategies=["causal"], seed_memory_id=own.chain[0], max_depth=5, top_k=50)
        assert {r.memory.id for r in walk} >= set(own.chain[1:])
        found |= {r.memory.id for r in walk}
        found |= {m.id for m in engine.list_memories(limit=500)}
        found |= {n.memory.id for n in engine.neighbourhood(own.chain[0], depth=3).nodes}
        found |= {c.memory_a for c in call(engine, "contradiction_prepare").candidates}
        found |= {c.memory_b for c in call(engine, "contradiction_prepare").candidates}
        assert found & other == set(), name
        assert own.ids <= found  # every own memory was reachable: the reads above are not empty by accident
        assert engine.stats(vector_index=True)["memories"] == len(own.ids)
        assert engine.entities() == ["car", "farm", "garden", "priya"]


def test_another_tenants_ids_are_not_found_and_stay_unchanged(two: tuple[Tenants, dict[str, Seeded]]) -> None:
    tenants, seeded = two
    mine, theirs = tenants.get("acme"), tenants.get(DEFAULT_TENANT)
    target = seeded[DEFAULT_TENANT].chain[0]
    before, edges = theirs.get(target), theirs.edges_of(target)
    attempts = [
        lambda: mine.get(target),
        lambda: mine.revise(target, content="Overwritten by another tenant."),
        lambda: mine.forget([target]),
        lambda: mine.neighbourhood(target),
        lambda: mine.structure_of(target),
        lambda: mine.recall("", strategies=["causal"], seed_memory_id=target),
        lambda: mine.add_edge(seeded["acme"].chain[0], target, EdgeType.CAUSED_BY),
    ]
    for attempt in attempts:
        with pytest.raises((MemoryNotFoundError, ValidationError)):
            attempt()
    assert mine.get_many([target]) == {}
    assert theirs.get(target).content == before.content and theirs.edges_of(target) == edges


def test_reflect_insights_policy_and_sweep_stay_within_the_tenant(two: tuple[Tenants, dict[str, Seeded]]) -> None:
    tenants, seeded = two
    acme, default = tenants.get("acme"), tenants.get(DEFAULT_TENANT)
    done = call(acme, "reflect")
    assert done.insights and all(set(i.source_ids) <= seeded["acme"].ids for i in done.insights)
    assert call(default, "insights").insights == ()  # acme's reflection wrote nothing of default's
    call(acme, "set_policy", decay_half_life_days=3)
    assert call(acme, "get_policy").to_dict()["tenant_id"] == "acme"
    assert call(default, "get_policy").policy.decay_half_life_days == 30
    with pytest.raises(ValidationError, match="this store holds tenant 'acme'"):
        call(acme, "set_policy", tenant_id=DEFAULT_TENANT, decay_half_life_days=5)
    call(acme, "set_policy", auto_forget_threshold=0.99)
    swept = call(acme, "sweep")
    assert set(swept.forgotten) and set(swept.forgotten) <= seeded["acme"].ids | {i.memory.id for i in done.insights}
    assert default.stats(vector_index=False)["memories"] == len(seeded[DEFAULT_TENANT].ids)
    assert tenants.known() == [DEFAULT_TENANT, "acme"]


@pytest.mark.parametrize("bad", ["Acme", "../acme", "a" * 41, "-acme", "acme-", "ac me", "ac/me", 7])
def test_a_bad_tenant_name_is_refused_with_the_rule(bad: object, tmp_path: Path, embedder: Embedder) -> None:
    with pytest.raises(InvalidTenantError, match="lower-case letters") as refused:
        tenant_name(bad)
    assert isinstance(refused.value, ValidationError)
    tenants = Tenants(MemoryEngine(tmp_path / "data", embedder=embedder))
    try:
        with pytest.raises(InvalidTenantError):
            tenants.get(bad)  # type: ignore[arg-type]
    finally:
        tenants.close()
    assert not (tmp_path / "data" / "tenants").exists()  # nothing was created for it


def test_a_store_written_before_tenants_opens_as_tenant_default(tmp_path: Path, embedder: Embedder) -> None:
    """A data dir of the old layout (no tenants folder, the policy under `policy:default`) is tenant `default`,
    byte for byte as it was; another tenant starts empty beside it."""
    data_dir = tmp_path / "old"
    with MemoryEngine(data_dir, embedder=embedder) as old:
        kept = old.remember("Written before there were tenants.", entity_id="legacy").id
        old.handle(parse_request("set_policy", {"decay_half_life_days": 9}))
    tables = _tables(data_dir / "records.sqlite3")
    assert not (data_dir / "tenants").exists()
    tenants = Tenants(MemoryEngine(data_dir, embedder=embedder, tenant=DEFAULT_TENANT))
    try:
        assert tenants.default.get(kept).content == "Written before there were tenants."
        assert call(tenants.default, "get_policy").policy.decay_half_life_days == 9
        assert tenants.get("acme").stats(vector_index=False)["memories"] == 0
        assert tenants.get("acme").recall("tenants", strategies=["similarity"]) == []
    finally:
        tenants.close()
    assert _tables(data_dir / "records.sqlite3") == tables  # no schema change was needed
    assert (data_dir / "tenants" / "acme" / "records.sqlite3").exists()


def _tables(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        return sorted(conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall())


def test_tenants_writers_on_postgresql_do_not_wait_for_each_other(database_url: str) -> None:
    """Each tenant's schema has its own writers' lock: tenant b commits while a write of tenant a holds a's."""
    import threading

    from engine.store.postgres import PostgresStore

    a, b = PostgresStore(database_url, schema="tenant_a"), PostgresStore(database_url, schema="tenant_b")
    committed = threading.Event()
    try:
        with a.transaction() as cur:  # a's writers' lock is held until this block ends
            cur.execute("INSERT INTO meta (key, value) VALUES ('held', 'yes')")
            writer = threading.Thread(target=lambda: (b.set_meta("during", "a's write"), committed.set()))
            writer.start()
            assert committed.wait(60), "tenant b's write waited for tenant a's lock"
        writer.join()
        assert (a.get_meta("held"), b.get_meta("during"), a.get_meta("during")) == ("yes", "a's write", None)
    finally:
        a.close()
        b.close()
