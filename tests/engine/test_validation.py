from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine import validation
from engine.errors import InvalidTimeRangeError


def test_date_ranges_cover_whole_days() -> None:
    lo, hi = validation.time_range("2025-01-01:2025-03-31")  # type: ignore[misc]
    assert lo == datetime(2025, 1, 1, tzinfo=UTC)
    assert hi is not None and hi.date().isoformat() == "2025-03-31" and hi.hour == 23


def test_datetime_ranges_and_open_ends() -> None:
    assert validation.time_range("2025-01-01T09:00:00Z..2025-03-31T18:00:00Z") == (
        datetime(2025, 1, 1, 9, tzinfo=UTC),
        datetime(2025, 3, 31, 18, tzinfo=UTC),
    )
    assert validation.time_range("2025-01-01:") == (datetime(2025, 1, 1, tzinfo=UTC), None)
    assert validation.time_range("..2025-01-01T00:00:00+02:00") == (
        None,
        datetime(2024, 12, 31, 22, tzinfo=UTC),
    )
    assert validation.time_range({"start": None, "end": "2025-02-01"})[0] is None  # type: ignore[index]


@pytest.mark.parametrize(
    "bad", ["yesterday", "2025-13-01:2025-12-01", "2025-03-01:2025-01-01", "2025-01-01", "a..b", {"from": 1}]
)
def test_malformed_time_ranges_are_rejected(bad: object) -> None:
    with pytest.raises(InvalidTimeRangeError):
        validation.time_range(bad)
