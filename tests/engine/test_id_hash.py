"""The hashed id lookup answers exactly what a binary search over the sorted ids answers."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index.id_hash import IdHash, hashes

_IDS = st.lists(st.binary(min_size=0, max_size=30).filter(lambda b: not b.endswith(b"\0")), max_size=300,
                unique=True)


def _searched(ids: np.ndarray, keys: np.ndarray) -> np.ndarray:
    at = np.minimum(np.searchsorted(ids, keys), max(len(ids) - 1, 0))
    return np.where(len(ids) and ids[at] == keys, at, -1) if len(ids) else np.full(len(keys), -1)


@settings(max_examples=200, deadline=None)
@given(_IDS, st.lists(st.binary(min_size=0, max_size=30), max_size=50))
def test_positions_are_the_binary_search_s(stored: list[bytes], others: list[bytes]) -> None:
    width = max([1, *map(len, stored), *map(len, others)])
    ids = np.sort(np.array(stored, dtype=f"S{width}"))
    keys = np.array([*stored, *others], dtype=f"S{width}")
    assert np.array_equal(IdHash(ids).positions(keys), _searched(ids, keys))


def test_colliding_ids_probe_past_each_other() -> None:
    """Seven ids with one home slot (a table of 16 slots) are all found, each a probe further; absent ones that
    share the slot are not."""
    candidates = np.array([f"{n:05d}".encode() for n in range(2000)], dtype="S5")
    same = candidates[(hashes(candidates) & np.uint64(15)) == 3]
    ids = np.sort(same[:7])
    table = IdHash(ids)
    assert table.positions(ids).tolist() == list(range(7))
    assert table.positions(same[7:12]).tolist() == [-1] * 5
    assert table.positions(np.array([b"", b"0000"], dtype="S5")).tolist() == [-1, -1]


def test_a_million_ids_are_found_with_short_probes() -> None:
    ids = np.sort(np.array([f"01KDY{n:021d}".encode() for n in range(0, 3_000_000, 3)], dtype="S26"))
    table = IdHash(ids)
    picked = np.random.default_rng(0).choice(len(ids), 1000, replace=False)
    assert np.array_equal(table.positions(ids[picked]), picked)
    missing = np.array([f"01KDY{n:021d}".encode() for n in range(1, 3000, 3)], dtype="S26")
    assert (table.positions(missing) == -1).all()
