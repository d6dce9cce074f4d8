"""Policies, decay scores on every memory, forget by criteria (ANDed, dry run), the auto-forget sweep and its
tombstones, revise's context modes and the snapshot cap: through the engine's request model."""

from __future__ import annotations

import hashlib
import math
from datetime import timedelta

import pytest

from engine import MemoryEngine
from engine.api import ForgetRequest, GetRequest, SetPolicyRequest, SweepRequest
from engine.clock import ManualClock
from engine.errors import InvalidPolicyError, MemoryNotFoundError, ValidationError
from engine.models import MemoryKind
from engine.policy import PolicyBook


def test_a_policy_is_kept_per_tenant_and_survives_a_reopen(engine: MemoryEngine) -> None:
    answer = engine.handle(SetPolicyRequest.parse({"decay_half_life_days": 7, "auto_forget_threshold": 0.2}))
    assert answer.to_dict()["decay_half_life_days"] == 7.0 and answer.policy.auto_forget_threshold == 0.2
    engine.handle(SetPolicyRequest.parse({"max_snapshots_per_memory": 2}))  # the others are kept
    policy = PolicyBook(engine._store).get()  # noqa: SLF001 (read back from the store itself)
    assert (policy.decay_half_life_days, policy.auto_forget_threshold, policy.max_snapshots_per_memory) == (7, 0.2, 2)


@pytest.mark.parametrize("fields", [
    {}, {"decay_half_life_days": 0}, {"auto_forget_threshold": 1.5}, {"max_snapshots_per_memory": 0},
    {"max_snapshots_per_memory": True}, {"decay_half_life_days": 3, "tenant_id": "Not a tenant"},
    {"decay_half_life_days": 3, "surprise": 1},
])
def test_a_bad_policy_is_refused_and_nothing_changes(engine: MemoryEngine, fields: dict[str, object]) -> None:
    before = engine.retention.policies.get()
    with pytest.raises(ValidationError) as refused:
        SetPolicyRequest.parse(fields)
    assert str(refused.value)
    assert engine.retention.policies.get() == before
    if "decay_half_life_days" in fields and len(fields) == 1:
        assert isinstance(refused.value, InvalidPolicyError)


def test_every_memory_carries_its_decay_score_under_the_half_life(engine: MemoryEngine, clock: ManualClock) -> None:
    made = engine.remember("The boiler was serviced in March.", importance=0.8, entity_id="house")
    assert made.decay_score == pytest.approx(0.8)
    clock.advance(days=30)
    assert engine.handle(ForgetRequest.parse({"memory_ids": [made.id], "dry_run": True})).forgotten == (made.id,)
    listed = engine.list_memories(entity_id="house")[0]
    assert listed.decay_score == pytest.approx(0.4)  # one default half-life (30 days) later
    engine.handle(SetPolicyRequest.parse({"decay_half_life_days": 15}))
    assert engine.get_many([made.id])[made.id].decay_score is None  # the Python API's raw reads are not stamped
    assert engine.handle(GetRequest(made.id)).decay_score == pytest.approx(0.2)  # two half-lives of 15 days
    recalled = engine.recall("boiler service", strategies=["similarity"], top_k=1)[0].memory
    # the recall accessed it: age 0 from that access, and one access of reinforcement
    assert recalled.decay_score == pytest.approx(0.8 * (1 + math.log2(2) / math.log2(101)))
    assert recalled.to_dict()["decay_score"] == recalled.decay_score


def test_forget_by_criteria_is_anded_with_a_dry_run_that_changes_nothing(
        engine: MemoryEngine, clock: ManualClock) -> None:
    old = engine.remember("Old note about the garden shed.", importance=0.3, entity_id="garden")
    used = engine.remember("Old note about the garden gate.", importance=0.3, entity_id="garden")
    other = engine.remember("Old note about the office printer.", importance=0.3, entity_id="office")
    clock.advance(days=60)
    engine.recall("garden gate", strategies=["similarity"], top_k=1)  # `used` is accessed now
    fresh = engine.remember("New note about the garden pond.", importance=0.3, entity_id="garden")
    since = (clock.now() - timedelta(days=1)).isoformat()
    criteria = {"entity_id": "garden", "not_accessed_since": since, "kind": "episode"}
    dry = engine.handle(ForgetRequest.parse({**criteria, "dry_run": True}))
    assert dry.dry_run and set(dry.forgotten) == {old.id} and dry.tombstone_count == 0
    assert len(engine.get_many([old.id, used.id, other.id, fresh.id])) == 4
    done = engine.handle(ForgetRequest.parse(criteria))
    assert done.forgotten == (old.id,) and not done.dry_run and done.tombstone_count == 1
    assert set(engine.get_many([old.id, used.id, other.id, fresh.id])) == {used.id, other.id, fresh.id}
    stone = engine.retention.tombstones.newest()[0]
    assert stone.memory_id == old.id and stone.reason == "criteria" and stone.forgotten_at == clock.now()
    assert stone.content_sha256 == hashlib.sha256(old.content.encode()).hexdigest()
    assert "garden shed" not in str(stone.to_dict())
    # ids and criteria together: only the ids that match
    assert engine.forget([used.id, other.id], access_count_below=1) == [other.id]
    assert engine.forget(decay_score_below=0.0001, kind="episode") == []


def test_bad_criteria_are_refused(engine: MemoryEngine) -> None:
    kept = engine.remember("Keep me.", entity_id="k")
    for fields in ({"kind": "thought"}, {"access_count_below": 0}, {"not_accessed_since": "yesterday-ish"},
                   {"decay_score_below": -1}, {"dry_run": "yes"}, {}):
        with pytest.raises(ValidationError):
            ForgetRequest.parse(fields)
    with pytest.raises(MemoryNotFoundError):
        engine.forget(["0" * 26], kind="episode")
    assert engine.get(kept.id).content == "Keep me."


def test_the_sweep_applies_the_policy_and_leaves_tombstones(engine: MemoryEngine, clock: ManualClock) -> None:
    weak = engine.remember("A passing remark about the weather.", importance=0.2)
    strong = engine.remember("The server root password rotates monthly.", importance=0.9)
    assert engine.handle(SweepRequest.parse({})).forgotten == ()  # no threshold set: nothing goes
    engine.handle(SetPolicyRequest.parse({"auto_forget_threshold": 0.15, "decay_half_life_days": 10}))
    clock.advance(days=5)  # weak: 0.2 x 2^-0.5 = 0.141 < 0.15; strong: 0.64
    assert engine.handle(SweepRequest.parse({"dry_run": True})).forgotten == (weak.id,)
    assert engine.get(weak.id)
    swept = engine.handle(SweepRequest.parse({}))
    assert swept.forgotten == (weak.id,) and swept.tombstone_count == 1
    assert set(engine.get_many([weak.id, strong.id])) == {strong.id}
    assert engine.retention.tombstones.newest()[0].reason == "sweep"


def test_revise_merges_context_by_default_and_replaces_when_asked(engine: MemoryEngine) -> None:
    made = engine.remember("Meeting with Acme.", context={"room": "4B", "topic": "pricing"})
    merged = engine.revise(made.id, context={"topic": "renewal", "owner": "kim"})
    assert merged.context == {"room": "4B", "topic": "renewal", "owner": "kim"}
    replaced = engine.revise(made.id, context={"only": True}, context_mode="replace")
    assert replaced.context == {"only": True}
    with pytest.raises(ValidationError, match="context_mode"):
        engine.revise(made.id, context={"x": 1}, context_mode="append")
    assert engine.get(made.id).context == {"only": True}


def test_the_snapshot_cap_keeps_the_newest_revisions(engine: MemoryEngine, clock: ManualClock) -> None:
    made = engine.remember("Version 0.")
    engine.handle(SetPolicyRequest.parse({"max_snapshots_per_memory": 2}))
    for n in range(1, 5):
        clock.advance(seconds=1)
        engine.revise(made.id, content=f"Version {n}.")
    kept = engine.revisions_of(made.id)
    assert [m.content for m in kept] == ["Version 3.", "Version 2."]
    assert all(m.kind == MemoryKind.REVISION for m in kept)

