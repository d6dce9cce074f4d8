from __future__ import annotations

import pytest

from engine import ids


def test_ids_are_unique_sortable_and_round_trip_through_16_bytes() -> None:
    made = [ids.new_id(1_700_000_000_000) for _ in range(1000)] + [ids.new_id(1_700_000_000_001)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)
    for text in made[:10]:
        raw = ids.to_bytes(text)
        assert len(raw) == 16
        assert ids.from_bytes(raw) == text
        assert ids.decode(text) >> 80 in (1_700_000_000_000, 1_700_000_000_001)


@pytest.mark.parametrize("bad", ["", "abc", "8" * 26, "0" * 25 + "U", "0" * 27])
def test_malformed_ids_are_rejected(bad: str) -> None:
    assert not ids.is_valid(bad)
