"""Dates: absolute and relative mentions, bounds and plans, and which date a sentence's event gets."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine.ingest.dates import event_time, find_dates

DOC = datetime(2026, 3, 20, tzinfo=UTC)
LAST = datetime(2026, 3, 2, tzinfo=UTC)


def day(y: int, m: int, d: int, hh: int = 0, mm: int = 0) -> datetime:
    return datetime(y, m, d, hh, mm, tzinfo=UTC)


@pytest.mark.parametrize(
    ("sentence", "expected", "source"),
    [
        ("On 2026-01-15, Meridian signed the DPA.", day(2026, 1, 15), "text"),
        ("CloudVault moved our backups to NordHost on March 2.", day(2026, 3, 2), "text"),
        ("The deal closed on 4 May 2026.", day(2026, 5, 4), "text"),
        ("In December 2025, Corvid moved the ship date forward to 2026-01-30.", day(2025, 12, 1), "text"),
        ("The customers churned in early June.", day(2026, 6, 5), "text"),
        ("The first report arrived on January 21st, 2026.", day(2026, 1, 21), "text"),
        ("On 2026-03-09 at 10:20 UTC, an engineer changed the record.", day(2026, 3, 9, 10, 20), "text"),
        # relative to the document's date
        ("Initech announced a budget freeze yesterday.", day(2026, 3, 19), "text"),
        ("I paused new backups last night.", day(2026, 3, 19), "text"),
        ("The team shipped the fix three days ago.", day(2026, 3, 17), "text"),
        ("The auditors visited last week.", day(2026, 3, 13), "text"),
        # relative to the last date the document gave
        ("CloudVault sent the summary two days later.", day(2026, 3, 4), "text"),
        ("Dana approved the notice the next day.", day(2026, 3, 3), "text"),
        ("Peter acknowledged the letter the same day.", day(2026, 3, 2), "text"),
        ("Ines found the wrong record at 12:50 UTC.", day(2026, 3, 2, 12, 50), "text"),
        # an absolute date wins over a relative one
        ("CloudVault sent the draft two days later, on 2026-04-30.", day(2026, 4, 30), "text"),
        # bounds are not the event's date
        ("CloudVault promised a full response by 2026-03-31.", DOC, "document"),
        ("The assessment covers the period from 2026-03-02 to 2026-03-20.", DOC, "document"),
        ("The freeze blocks purchases until July 2026.", DOC, "document"),
        # plans are dated when they were written down
        ("The committee will review the risk again on 2026-05-07.", DOC, "document"),
        ("Bistro Lumen was scheduled to open on 2026-03-06.", DOC, "document"),
        ("The original launch date was 2026-02-24.", DOC, "document"),
        # no date at all
        ("NordHost is a hosting company.", DOC, "document"),
    ],
)
def test_event_time(sentence: str, expected: datetime, source: str) -> None:
    found = event_time(sentence, DOC, LAST)
    assert (found.when, found.source) == (expected, source)


def test_a_message_time_is_the_fallback_and_the_anchor_of_yesterday() -> None:
    sent = datetime(2026, 3, 21, 8, 33, tzinfo=UTC)
    assert event_time("I paused the backups.", DOC, None, fallback=sent, fallback_source="message").when == sent
    assert event_time("I paused the backups yesterday.", DOC, None, fallback=sent).when == day(2026, 3, 20)


def test_relative_dates_without_an_earlier_event_use_the_document_date() -> None:
    assert event_time("Two days later the vendor answered.", DOC, None).when == day(2026, 3, 22)


def test_may_is_a_month_only_when_it_reads_as_one() -> None:
    assert [d.text for d in find_dates("Buyers may object. The deal closed in May.")] == ["May"]
    assert find_dates("Buyers may object in May 2026.")[0].value == datetime(2026, 5, 1).date()


def test_find_dates_marks_bounds() -> None:
    mentions = find_dates("From 2026-03-02 to 2026-03-20, backups went to NordHost on 2026-03-02.")
    assert [(d.text, d.bound) for d in mentions] == [
        ("2026-03-02", True),
        ("2026-03-20", True),
        ("2026-03-02", False),
    ]
