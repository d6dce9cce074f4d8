"""A tenant's memory policy (the official SDK's `set_policy`), and where it is kept.

The decay half-life feeds `engine.recall.scoring.decay_score`; the auto-forget sweep removes memories whose
decay score falls below the policy's threshold (engine/forgetting.py); a revise keeps at most
`max_snapshots_per_memory` earlier states of a memory. A policy is kept as JSON in the record store's meta
table under `policy:<tenant>` (one row, no table of its own), so it survives restarts and backups.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

from engine.errors import InvalidPolicyError
from engine.tenancy import DEFAULT_TENANT

DEFAULT_HALF_LIFE_DAYS = 30.0
MAX_SNAPSHOTS_LIMIT = 10_000


@dataclass(frozen=True)
class Policy:
    """What a tenant set; None for the auto-forget threshold and snapshot cap means "no limit"."""

    max_snapshots_per_memory: int | None = None
    auto_forget_threshold: float | None = None
    decay_half_life_days: float = DEFAULT_HALF_LIFE_DAYS

    def updated(self, max_snapshots_per_memory: object = None, auto_forget_threshold: object = None,
                decay_half_life_days: object = None) -> Policy:
        """This policy with the given values changed (None leaves a value as it is), each validated."""
        changes: dict[str, object] = {}
        if max_snapshots_per_memory is not None:
            changes["max_snapshots_per_memory"] = _snapshots(max_snapshots_per_memory)
        if auto_forget_threshold is not None:
            changes["auto_forget_threshold"] = _fraction("auto_forget_threshold", auto_forget_threshold)
        if decay_half_life_days is not None:
            changes["decay_half_life_days"] = _half_life(decay_half_life_days)
        return replace(self, **changes)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Policy:
        """The inverse of `to_dict`, validated again (a hand-edited row must not slip an invalid value in)."""
        return cls().updated(**{k: raw.get(k) for k in ("max_snapshots_per_memory", "auto_forget_threshold",
                                                        "decay_half_life_days")})


class _Meta(Protocol):
    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...


class PolicyBook:
    """The policy of a store's tenant (each tenant has a store of its own: engine/tenancy.py), read through (a
    set is seen by the next read, in any process)."""

    def __init__(self, store: _Meta, tenant: str = DEFAULT_TENANT) -> None:
        self._store, self.tenant = store, tenant

    def get(self) -> Policy:
        raw = self._store.get_meta(f"policy:{self.tenant}")
        return Policy() if raw is None else Policy.from_dict(json.loads(raw))

    def set(self, policy: Policy) -> Policy:
        self._store.set_meta(f"policy:{self.tenant}", json.dumps(policy.to_dict(), sort_keys=True))
        return policy


def _snapshots(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SNAPSHOTS_LIMIT:
        raise InvalidPolicyError(
            f"max_snapshots_per_memory must be a whole number from 1 to {MAX_SNAPSHOTS_LIMIT}, got {value!r}")
    return value


def _fraction(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise InvalidPolicyError(f"{name} must be a number from 0 to 1, got {value!r}")
    return float(value)


def _half_life(value: object) -> float:
    if (isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(float(value))
            or float(value) <= 0):
        raise InvalidPolicyError(f"decay_half_life_days must be a positive number of days, got {value!r}")
    return float(value)
