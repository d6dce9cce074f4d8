"""When did it happen? Date mentions in a sentence, resolved to a UTC timestamp.

Absolute dates (`2026-03-02`, `March 2, 2026`, `2 March`, `December 2025`, `early June`) and relative ones
(`yesterday`, `last week`, `three days ago` against the document's date; `the next day`, `two days
later`, `the same afternoon` against the last event date the document gave) are found with patterns.
A date that bounds rather than dates the event (`by`, `until`, `since`, `from ... to`) is not the
event's date, and neither is any date in a plan (`will`, `scheduled to`): a plan is dated by when it was
written down.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            (),
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}
_MONTH = r"(?P<month>January|February|March|April|May|June|July|August|September|October|November|December|" \
         r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14, "thirty": 30}
_NUM = r"(?P<n>\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|thirty)"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_PART = {"early": 5, "mid": 15, "mid-": 15, "late": 25, "the beginning of": 1, "the start of": 1,
         "the middle of": 15, "the end of": 28}
_PARTS = r"\b(?:(?P<part>early|mid-|mid|late|the beginning of|the start of|the middle of|the end of)\s*)?"

_ABSOLUTE = [
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})(?:[T ](?P<hh>\d{2}):(?P<mm>\d{2})(?::\d{2})?Z?)?\b"),
    re.compile(_PARTS + _MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{4}))?\b"),
    re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r"(?:,?\s+(?P<y>\d{4}))?\b"),
    re.compile(_PARTS + _MONTH + r"(?:\s+(?P<y>\d{4}))?\b"),
]
_DEICTIC = [
    (re.compile(r"\b(?:today|this (?:morning|afternoon|evening|week))\b", re.I), 0),
    (re.compile(r"\b(?:yesterday|last night)\b", re.I), -1),
    (re.compile(r"\btomorrow\b", re.I), 1),
    (re.compile(r"\blast week\b", re.I), -7),
    (re.compile(r"\bnext week\b", re.I), 7),
]
_AGO = re.compile(r"\b" + _NUM + r"\s+" + _UNIT + r"\s+ago\b", re.I)
_LATER = re.compile(r"\b" + _NUM + r"\s+" + _UNIT + r"\s+(?:later|afterwards)\b", re.I)
_ANAPHORIC = [
    (re.compile(r"\bthe (?:next|following) (?:day|morning|afternoon|evening)\b|\bthe day after\b", re.I), 1),
    (re.compile(r"\bthe (?:next|following) week\b", re.I), 7),
    (re.compile(r"\bthe same (?:day|morning|afternoon|evening|night)\b", re.I), 0),
    (re.compile(r"\bthe day before\b|\bthe previous day\b", re.I), -1),
]
_CLOCK = re.compile(r"\bat (?P<hh>\d{1,2}):(?P<mm>\d{2})\b")
# Words that make the following date a bound of the event, not its date.
_BOUND_BEFORE = re.compile(r"\b(by|until|till|before|from|to|since|through|dated|due|than|after|and|or)\s+(the\s+)?$",
                           re.I)
_PLAN = re.compile(
    r"\b(will|shall|won't|should|must|going to|scheduled (?:to|for)|planned (?:to|for)|plans to|is due|are due|due on|"
    r"expected (?:to|by|on)|originally|original|was to|were to|set for|would)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class DateMention:
    """One date expression: where it is, how to resolve it, and whether it dates the event."""

    start: int
    end: int
    text: str
    kind: str  # absolute | deictic (against the document's date) | anaphoric (against the last event date)
    value: date | None = None  # absolute: the date (year may be filled in from the anchor)
    offset_days: int = 0  # relative: days from the anchor
    has_year: bool = True
    clock: time | None = None
    bound: bool = False  # "by 2026-03-31", "until July": a limit, not when it happened

    def resolve(self, document_date: datetime, last_event: datetime | None) -> datetime:
        if self.kind == "absolute":
            assert self.value is not None
            day = self.value if self.has_year else _with_year(self.value, document_date.year)
            return datetime.combine(day, self.clock or time.min, tzinfo=UTC)
        anchor = document_date if self.kind == "deictic" or last_event is None else last_event
        day = (anchor + timedelta(days=self.offset_days)).date()
        return datetime.combine(day, self.clock or time.min, tzinfo=UTC)


def parse_datetime(value: object) -> datetime | None:
    """A UTC datetime from a YAML date, a datetime or an ISO 8601 string; None if it is not one."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime.combine(value, time.min, tzinfo=UTC)
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            match = re.search(r"\d{4}-\d{2}-\d{2}", text)
            if not match:
                return None
            parsed = datetime.fromisoformat(match.group(0))
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _with_year(value: date, year: int) -> date:
    last = calendar.monthrange(year, value.month)[1]
    return date(year, value.month, min(value.day, last))


def _number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.lower()]


def _days(n: int, unit: str) -> int:
    return n * {"day": 1, "week": 7, "month": 30, "year": 365}[unit.lower()]


def find_dates(text: str) -> list[DateMention]:
    """Every date mention in `text`, in order of appearance, overlapping matches removed."""
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    def add(mention: DateMention) -> None:
        taken.append((mention.start, mention.end))
        found.append(mention)

    for pattern in _ABSOLUTE:
        for m in pattern.finditer(text):
            if not free(m.start(), m.end()):
                continue
            groups = m.groupdict()
            month = int(groups["m"]) if groups.get("m") else _MONTHS[groups["month"].lower().rstrip(".")]
            day = int(groups["d"]) if groups.get("d") else _PART.get((groups.get("part") or "").strip(), 1)
            year = int(groups["y"]) if groups.get("y") else 2000  # 2000 is a leap year: Feb 29 survives
            try:
                value = date(year, month, min(day, calendar.monthrange(year, month)[1]))
            except ValueError:
                continue
            clock = time(int(groups["hh"]), int(groups["mm"])) if groups.get("hh") else None
            bare_may = groups.get("month") == "May" and not any(groups.get(k) for k in ("y", "d", "part"))
            if bare_may and not text[: m.start()].rstrip().lower().endswith(("in", "of", "during")):
                continue  # "May" alone is as often a verb as a month; only "in May" counts
            add(DateMention(m.start(), m.end(), m.group(0), "absolute", value, has_year=bool(groups.get("y")),
                            clock=clock, bound=_is_bound(text, m.start())))
    for pattern, offset in _DEICTIC:
        for m in pattern.finditer(text):
            if free(m.start(), m.end()):
                add(DateMention(m.start(), m.end(), m.group(0), "deictic", offset_days=offset,
                                bound=_is_bound(text, m.start())))
    for m in _AGO.finditer(text):
        if free(m.start(), m.end()):
            days = -_days(_number(m.group("n")), m.group("unit"))
            add(DateMention(m.start(), m.end(), m.group(0), "deictic", offset_days=days))
    for m in _LATER.finditer(text):
        if free(m.start(), m.end()):
            days = _days(_number(m.group("n")), m.group("unit"))
            add(DateMention(m.start(), m.end(), m.group(0), "anaphoric", offset_days=days))
    for pattern, offset in _ANAPHORIC:
        for m in pattern.finditer(text):
            if free(m.start(), m.end()):
                add(DateMention(m.start(), m.end(), m.group(0), "anaphoric", offset_days=offset,
                                bound=_is_bound(text, m.start())))
    found.sort(key=lambda d: d.start)
    return found


def _is_bound(text: str, start: int) -> bool:
    return bool(_BOUND_BEFORE.search(text[max(0, start - 16) : start]))


def is_plan(text: str) -> bool:
    """Does the sentence state a plan or expectation (so its dates are not when anything happened)?"""
    return bool(_PLAN.search(text))


@dataclass(frozen=True, slots=True)
class EventTime:
    when: datetime
    source: str  # text | document | message
    mention: str | None = None


def event_time(
    text: str,
    document_date: datetime,
    last_event: datetime | None,
    *,
    plan: bool | None = None,
    fallback: datetime | None = None,
    fallback_source: str = "document",
) -> EventTime:
    """The date the sentence gives for its event, else `fallback` (a message's time) or the document's date.

    An absolute date wins over a relative one; bounds are ignored; a plan keeps the fallback date. A bare
    clock time (`at 10:20 UTC`) lands on the last event date of the document.
    """
    base = fallback or document_date
    if plan if plan is not None else is_plan(text):
        return EventTime(base, fallback_source)
    mentions = [d for d in find_dates(text) if not d.bound]
    chosen = next((d for d in mentions if d.kind == "absolute"), None) or (mentions[0] if mentions else None)
    clock = _CLOCK.search(text)
    if chosen is None:
        if clock and not _is_bound(text, clock.start()):
            day = (last_event or base).date()
            when = datetime.combine(day, time(int(clock.group("hh")) % 24, int(clock.group("mm")) % 60), tzinfo=UTC)
            return EventTime(when, "text", clock.group(0))
        return EventTime(base, fallback_source)
    when = chosen.resolve(base, last_event)
    if chosen.clock is None and clock and when.time() == time.min:
        when = when.replace(hour=int(clock.group("hh")) % 24, minute=int(clock.group("mm")) % 60)
    return EventTime(when, "text", chosen.text)
