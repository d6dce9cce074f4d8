"""Conversations: JSON chat transcripts read as messages in sessions, one memory per message.

A turn is the unit people ask about ("what did Ana say about the oven?"), so each message becomes one
`episode` memory: content `Speaker: text`, `entity_id` the speaker, `created_at` the message's own time,
else its session's date-time plus its order in seconds (so turns stay in order), and a context naming its
conversation, session, position and source id (`message_id`, e.g. LoCoMo's `D1:3` or an `"id"` field, so
an answer can cite it). Consecutive messages of one session are linked `earlier --followed_by--> later`;
the conversation and session in the context make them one episode for context windows.

Three shapes are read, detected by their structure (anything else is skipped with the reason):
- a list of messages, or `{"messages": [...]}`: one session;
- `{"sessions": [...]}`: each session a list of messages, or `{"messages": [...], "date": ...}`;
- numbered session keys, as in LoCoMo: `session_1`, `session_1_date_time`, ... (optionally inside
  `{"conversation": {...}}`, with `speaker_a` / `speaker_b`, and `sample_id` naming the conversation).
A message is `{"speaker", "text", "time", "id"}`; `author` or `role` may name the speaker, `content` may
hold the text, `timestamp`, `date` or `created_at` the time; a `caption` (or `blip_caption`) describes a
shared photo and is kept in the text.

Pure parsing: no I/O, no models (the pipeline writes; see `engine.ingest.conversation_writer`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

from engine.ingest.dates import parse_datetime

# Bump when what a message becomes changes, so conversations indexed by an older version are rewritten.
CONVERSATION_VERSION = "1"
FORMAT = "conversation"

_TEXT_FIELDS = ("text", "content", "message", "body")
_SPEAKER_FIELDS = ("speaker", "author", "role", "name", "from", "sender")
_TIME_FIELDS = ("time", "timestamp", "date", "created_at", "date_time", "datetime")
_ID_FIELDS = ("id", "dia_id", "message_id")
_CAPTION_FIELDS = ("caption", "blip_caption", "image_caption")
_SESSION_TIME_FIELDS = ("date_time", "date", "time", "started_at", "start", "timestamp")
_SESSION_ID_FIELDS = ("id", "session", "name")
_CONVERSATION_ID_FIELDS = ("sample_id", "conversation_id", "id")
_NUMBERED_SESSION = re.compile(r"^session_(\d+)$")
# Written-out dates that ISO 8601 does not cover (LoCoMo writes "1:56 pm on 8 May, 2023").
_FORMATS = (
    "%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y", "%d %B %Y %H:%M", "%d %B, %Y",
    "%d %B %Y", "%B %d, %Y", "%b %d, %Y", "%Y/%m/%d %H:%M", "%Y/%m/%d", "%d.%m.%Y %H:%M", "%d.%m.%Y",
)
_SHAPES = ('expected a list of {"speaker", "text", "time"} messages, {"sessions": [...]}, '
           "or session_1, session_2, ... keys")


class NotAConversation(ValueError):
    """JSON that parses but is not a chat transcript we can read; the message is the skip reason."""


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation, ready to become a memory."""

    text: str  # what was said (a shared photo's caption appended)
    speaker: str | None
    session: int | str  # the session's id: its number, or the id the file gives it
    session_index: int  # 1-based order of the session in the file
    position: int  # order in the whole conversation, from 0
    at: datetime
    time_source: str  # message | previous message | session | document
    message_id: str | None  # the file's own id for the message (LoCoMo's dia_id), for citing

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


@dataclass
class Conversation:
    """A chat transcript file: its messages in order, and what identifies it across runs."""

    path: Path
    source: str  # identity across runs: the resolved path
    display: str  # what users see: relative to the folder they indexed
    title: str
    conversation_id: str
    shape: str  # messages | sessions | numbered sessions
    messages: list[Message]
    content_hash: str
    speakers: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    format: str = FORMAT

    @property
    def date(self) -> datetime:
        return self.messages[0].at

    def context(self, message: Message) -> dict[str, Any]:
        """The context a message's memory carries (its conversation and session name its episode)."""
        ctx: dict[str, Any] = {
            "source": self.display,
            "title": self.title,
            "format": FORMAT,
            "conversation": self.conversation_id,
            "session": message.session,
            "position": message.position,
            "time_source": message.time_source,
        }
        if message.message_id is not None:
            ctx["message_id"] = message.message_id
        if message.speaker:
            ctx["speaker"] = message.speaker
        return ctx

    @cached_property
    def hashes(self) -> list[str]:
        """A chained hash per message: it changes when the message or anything before it changes, so a
        conversation that only grew keeps the ids (and access counts) of the messages it already had.
        Computed once (the stamp, the re-index plan and the ledger rows all read it)."""
        out: list[str] = []
        previous = ""
        for m in self.messages:
            key = json.dumps([previous, m.content, m.speaker, m.at.isoformat(), m.session, m.message_id,
                              self.context(m)], ensure_ascii=False, sort_keys=True, default=str)
            previous = hashlib.sha256(key.encode()).hexdigest()
            out.append(previous)
        return out

    @property
    def stamp(self) -> str:
        """What decides whether the conversation must be written again: every message, and the version."""
        last = self.hashes[-1] if self.messages else ""
        return hashlib.sha256(f"{last}|{len(self.messages)}|{CONVERSATION_VERSION}".encode()).hexdigest()


def parse_when(value: object) -> datetime | None:
    """A UTC datetime from what `dates.parse_datetime` reads (a datetime, a date, an ISO 8601 string), a
    common written-out string, or epoch seconds (milliseconds when the number is that large); None if it
    is none of these."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC) if seconds > 0 else None
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        text = " ".join(value.split())
        parsed = (parse_datetime(text) or _written_out(text)) if text else None
    else:
        parsed = parse_datetime(value)
    return parsed.astimezone(UTC) if parsed is not None else None


def _written_out(text: str) -> datetime | None:
    for fmt in _FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


@dataclass(frozen=True, slots=True)
class _Session:
    key: int | str
    started: datetime | None
    raw: Sequence[Any]


def read_conversation(
    data: Any, *, path: Path, display: str, content_hash: str, fallback: datetime, fallback_source: str = "document"
) -> Conversation:
    """The conversation in parsed JSON `data`, or `NotAConversation` saying why it is not one. Messages
    with no time, in a session with none either, are dated `fallback` (the file's date) plus their order."""
    shape, sessions, meta = _sessions(data)
    messages: list[Message] = []
    speakers: dict[str, None] = {}
    for index, session in enumerate(sessions, start=1):
        previous: datetime | None = None
        for raw in session.raw:
            if not isinstance(raw, Mapping):
                raise NotAConversation(f"not a chat transcript (a message is {type(raw).__name__}, not an object)")
            text = _first_text(raw, _TEXT_FIELDS, collapse=False)
            if text is None:
                continue
            caption = _first_text(raw, _CAPTION_FIELDS)
            if caption:
                text += f" [shares a photo: {caption}]"
            speaker = _first_text(raw, _SPEAKER_FIELDS)
            own = next((t for t in (parse_when(raw.get(f)) for f in _TIME_FIELDS) if t is not None), None)
            position = len(messages)
            if own is not None:
                at, source = own, "message"
            elif previous is not None:  # after a dated message of this session: just after it
                at, source = previous + timedelta(seconds=1), "previous message"
            elif session.started is not None:
                at, source = session.started + timedelta(seconds=position), "session"
            else:
                at, source = fallback + timedelta(seconds=position), fallback_source
            previous = at if source in ("message", "previous message") else None
            ident = next((str(raw[f]).strip() for f in _ID_FIELDS if raw.get(f) not in (None, "")), None)
            messages.append(Message(text, speaker, session.key, index, position, at, source, ident))
            if speaker:
                speakers.setdefault(speaker)
    if not messages:
        raise NotAConversation('not a chat transcript (no message has a "text")')
    declared = [str(meta[k]) for k in ("speaker_a", "speaker_b") if isinstance(meta.get(k), str)]
    title = _first_text(meta, ("title", "name")) or _title_from(path)
    conversation_id = next((str(meta[f]).strip() for f in _CONVERSATION_ID_FIELDS
                            if isinstance(meta.get(f), str | int) and str(meta[f]).strip()), display)
    return Conversation(
        path=path,
        source=str(path),
        display=display,
        title=title,
        conversation_id=conversation_id,
        shape=shape,
        messages=messages,
        content_hash=content_hash,
        speakers=tuple(dict.fromkeys([*(s.strip() for s in declared if s.strip()), *speakers])),
        metadata={k: v for k, v in meta.items() if isinstance(v, str | int | float) and not _is_session_key(k)},
    )


def _sessions(data: Any) -> tuple[str, list[_Session], Mapping[str, Any]]:
    """(shape, sessions, the object's other fields) of a transcript in any of the accepted shapes."""
    if isinstance(data, list):
        if data and all(isinstance(d, Mapping) and isinstance(d.get("conversation"), Mapping) for d in data):
            raise NotAConversation(f"holds {len(data)} conversations; put each in a file of its own")
        return "messages", [_Session(1, None, data)], {}
    if not isinstance(data, Mapping):
        raise NotAConversation(f"not a chat transcript ({_SHAPES})")
    if isinstance(data.get("conversation"), Mapping):  # LoCoMo's sample: {"sample_id", "conversation", "qa"}
        inner = data["conversation"]
        meta = {**{k: v for k, v in data.items() if k != "conversation"}, **inner}
        return _sessions_of_object(inner, meta)
    return _sessions_of_object(data, data)


def _sessions_of_object(
    obj: Mapping[str, Any], meta: Mapping[str, Any]
) -> tuple[str, list[_Session], Mapping[str, Any]]:
    if isinstance(obj.get("messages"), list):
        return "messages", [_Session(1, parse_when(_first(obj, _SESSION_TIME_FIELDS)), obj["messages"])], meta
    if isinstance(obj.get("sessions"), list):
        sessions = []
        for n, raw in enumerate(obj["sessions"], start=1):
            if isinstance(raw, list):
                sessions.append(_Session(n, None, raw))
            elif isinstance(raw, Mapping) and isinstance(raw.get("messages", raw.get("turns")), list):
                key = _first(raw, _SESSION_ID_FIELDS)
                sessions.append(_Session(key if isinstance(key, int | str) and key != "" else n,
                                         parse_when(_first(raw, _SESSION_TIME_FIELDS)),
                                         raw.get("messages", raw.get("turns"))))
            else:
                raise NotAConversation(f'not a chat transcript (session {n} is neither a list of messages nor '
                                       'an object with "messages")')
        return "sessions", sessions, meta
    numbered = sorted(
        (int(m.group(1)), k) for k in obj if (m := _NUMBERED_SESSION.match(k)) and isinstance(obj[k], list)
    )
    if numbered:
        sessions = [_Session(n, parse_when(obj.get(f"{key}_date_time", obj.get(f"{key}_date"))), obj[key])
                    for n, key in numbered]
        return "numbered sessions", sessions, meta
    raise NotAConversation(f"not a chat transcript ({_SHAPES})")


def _is_session_key(key: str) -> bool:
    return bool(re.match(r"^session_\d+", key))


def _first(raw: Mapping[str, Any], fields: Sequence[str]) -> Any:
    return next((raw[f] for f in fields if raw.get(f) not in (None, "")), None)


def _first_text(raw: Mapping[str, Any], fields: Sequence[str], collapse: bool = True) -> str | None:
    """The first field holding non-blank text, stripped (and its whitespace collapsed, for names)."""
    for f in fields:
        value = raw.get(f)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split()) if collapse else value.strip()
    return None


def _title_from(path: Path) -> str:
    title = re.sub(r"^\d{4}-\d{2}-\d{2}-?", "", path.stem).replace("-", " ").replace("_", " ").strip()
    return title.capitalize() or path.stem
