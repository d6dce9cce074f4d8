"""What a store keeps and for how long: forget (by id, entity or criteria, ANDed, with a dry run), the
auto-forget sweep of a tenant's policy, the snapshots a revise keeps, and tombstones for audit.

A forget by criteria or by the sweep leaves a tombstone per memory it removed (engine/store/tombstones.py: id,
time, content hash, no text); a forget by id or entity is an erasure and leaves nothing. Revisions go with
their memory, and a forgotten document's propositions with it (they were derived from it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from engine import validation
from engine.api.requests import ForgetRequest, GetPolicyRequest, ReviseRequest, SetPolicyRequest, SweepRequest
from engine.api.responses import ForgetResponse, PolicyResponse
from engine.clock import Clock
from engine.errors import MemoryNotFoundError, ValidationError
from engine.models import EdgeType, Memory
from engine.policy import PolicyBook
from engine.recall.scoring import decay_score
from engine.store.entities import EntityRegistry
from engine.store.interface import Storage
from engine.store.ledger import Ledger
from engine.store.rows import DecayInputs
from engine.store.tombstones import Tombstone, Tombstones, content_hash
from engine.tenancy import DEFAULT_TENANT
from engine.uploads import remove_unreferenced_uploads
from engine.writer import Writer


class Retention:
    """Forget, sweep, revise with the policy's snapshot cap, and the policies themselves."""

    def __init__(self, store: Storage, writer: Writer, entities: EntityRegistry, clock: Clock, data_dir: Path,
                 resolve_entity: Callable[[str], str], tenant: str = DEFAULT_TENANT) -> None:
        self._store, self._writer, self._entities, self._clock = store, writer, entities, clock
        self._data_dir, self._resolve_entity = data_dir, resolve_entity
        self.policies = PolicyBook(store, tenant)
        self.tombstones = Tombstones(store)

    # --- policies --------------------------------------------------------------------------------------
    def set_policy(self, request: SetPolicyRequest) -> PolicyResponse:
        self._own(request.tenant_id)
        changed = self.policies.get().updated(
            request.max_snapshots_per_memory, request.auto_forget_threshold, request.decay_half_life_days)
        return PolicyResponse(self.policies.tenant, self.policies.set(changed))

    def get_policy(self, request: GetPolicyRequest) -> PolicyResponse:
        self._own(request.tenant_id)
        return PolicyResponse(self.policies.tenant, self.policies.get())

    def _own(self, tenant: str | None) -> None:
        """A request may name its tenant, which must be this store's (servers route by tenant before)."""
        if tenant is not None and tenant != self.policies.tenant:
            raise ValidationError(f"unknown tenant {tenant!r}: this store holds tenant {self.policies.tenant!r}")

    # --- revise ----------------------------------------------------------------------------------------
    def revise(self, request: ReviseRequest) -> Memory:
        """A revise whose context is merged into the memory's (`context_mode` merge) or replaces it; then the
        oldest snapshots beyond the policy's `max_snapshots_per_memory` are forgotten."""
        if request.context is not None and request.context_mode == "merge":
            found = self._store.get_many([request.memory_id])
            if request.memory_id not in found:
                raise MemoryNotFoundError(f"no memory with id {request.memory_id}")
            merged = validation.context({**found[request.memory_id].context, **request.context})
            request = dataclasses.replace(request, context=merged)
        revised = self._writer.revise(request)
        cap = self.policies.get().max_snapshots_per_memory
        if cap is not None:
            snapshots = sorted(e.target for e in self._store.edges_of(revised.id)
                               if e.type == EdgeType.REVISED_FROM and e.source == revised.id)
            if len(snapshots) > cap:  # ids are time-ordered: the oldest first
                self._writer.forget(snapshots[: len(snapshots) - cap])
        return revised

    # --- forget ----------------------------------------------------------------------------------------
    def forget(self, request: ForgetRequest) -> ForgetResponse:
        return self._remove(self._select(request), request.dry_run, "criteria" if request.criteria else None)

    def sweep(self, request: SweepRequest) -> ForgetResponse:
        """Forget every memory whose decay score is below the policy's auto-forget threshold (none set: none)."""
        self._own(request.tenant_id)
        threshold = self.policies.get().auto_forget_threshold
        if threshold is None:
            return ForgetResponse((), dry_run=request.dry_run)
        return self._remove(self._decayed_below(self._store.decay_inputs(), threshold), request.dry_run, "sweep")

    def _decayed_below(self, rows: list[DecayInputs], threshold: float) -> list[str]:
        half_life, now = self.policies.get().decay_half_life_days, self._clock.now()
        return [r.id for r in rows
                if decay_score(r.importance, r.created_at, r.last_accessed_at, r.access_count, now, half_life)
                < threshold]

    def _select(self, request: ForgetRequest) -> list[str]:
        """The memories every part of the request names (ANDed), before revisions and derived memories."""
        named = list(request.memory_ids)
        missing = set(named) - self._store.existing(named)
        if missing:
            raise MemoryNotFoundError(f"no memory with id {', '.join(sorted(missing))}")
        entity = None
        if request.entity_id is not None:
            entity = self._resolve_entity(request.entity_id) if request.prefix else request.entity_id
            if not request.prefix and not self._store.ids_of_entity(entity):
                raise MemoryNotFoundError(
                    f"no memory has entity_id {entity!r}; forget needs the exact id "
                    "(prefix=True, or --prefix, also matches an alias or unique prefix)"
                )
        if not request.criteria:
            if entity is None:
                return named
            of_entity = self._store.ids_of_entity(entity)
            return of_entity if not named else [i for i in named if i in set(of_entity)]
        c = request.criteria
        rows = self._store.decay_inputs(entity_id=entity, kind=c.kind, accessed_before=c.not_accessed_since,
                                        access_count_below=c.access_count_below)
        chosen = [r.id for r in rows] if c.decay_score_below is None else self._decayed_below(rows, c.decay_score_below)
        return chosen if not named else [i for i in chosen if i in set(named)]

    def _remove(self, targets: list[str], dry_run: bool, reason: str | None) -> ForgetResponse:
        """Forget `targets`, their revisions and what was derived from them (a document's propositions);
        with `reason`, leave a tombstone for each memory removed."""
        named = set(targets)
        derived = [i for i in dict.fromkeys(Ledger(self._store).derived_from(targets)) if i not in named]
        if dry_run:
            going = self._store.ids_with_revisions([*targets, *derived])
            return ForgetResponse(tuple(going), len(derived), dry_run=True)
        contents = ({i: m.content for i, m in self._store.get_many(
            self._store.ids_with_revisions([*targets, *derived])).items()} if reason else {})
        forgotten = self._writer.forget([*targets, *derived])
        stones = []
        if forgotten:
            self._entities.purge_unreferenced()
            now = self._clock.now()
            stones = [Tombstone(i, now, content_hash(contents[i]), reason) for i in forgotten
                      if reason and i in contents]
            self.tombstones.add(stones)
            self._store.checkpoint()
            remove_unreferenced_uploads(self._data_dir, self._store)
        return ForgetResponse(tuple(forgotten), len(set(derived) & set(forgotten)), tombstone_count=len(stones))
