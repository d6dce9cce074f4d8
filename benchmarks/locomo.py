"""LoCoMo (Maharana et al., 2024; CC BY-NC 4.0): load it, import it into stores, and score retrieval as the
paper does.

Each conversation is imported through the engine's own conversation format (`MemoryEngine.ingest` on a
per-conversation JSON in LoCoMo's shape: see docs/indexing.md), the path a user's chats take: one memory
per dialog turn, content `Speaker: text` (an image's caption appended), `entity_id` = the speaker,
`created_at` = the session's date-time plus the turn's order in seconds, `context` = {conversation,
session, message_id = the dia_id, ...}; consecutive turns of a session are linked `earlier --followed_by-->
later`. One store per conversation, as in the paper (questions are about one conversation).

R@k (the paper's `recall_acc`): for each question, the fraction of its evidence dialog ids found among
the dia_ids of the top k retrieved memories; a question without evidence counts as 1; the mean over
questions. Evidence strings are parsed leniently (`'D8:6; D9:17'` holds two ids, `'D:11:26'` is D11:26).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engine import MemoryEngine

KS = (5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
TUNE = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")
HELDOUT = ("conv-44", "conv-47", "conv-48", "conv-49", "conv-50")
# The paper's best dialog-level retriever (DRAGON), overall R@k in percent.
DRAGON_DIALOG = {"R@5": 56.7, "R@10": 66.2, "R@25": 76.7, "R@50": 82.7}

_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str  # "Speaker: what was said [shares a photo: caption]": the memory's content
    session: int
    order: int  # position within the conversation
    at: datetime
    said: str = ""  # what was said, as in the file
    caption: str = ""  # the shared photo's caption, if any

    @property
    def content(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, ...]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    @property
    def last_time(self) -> datetime:
        return max(t.at for t in self.turns)


def parse_evidence(raw: Sequence[str]) -> tuple[str, ...]:
    """Every `D<session>:<turn>` in the evidence strings, in order, without duplicates."""
    found = [f"D{a}:{b}" for text in raw for a, b in _EVIDENCE.findall(str(text))]
    return tuple(dict.fromkeys(found))


def parse_session_time(text: str) -> datetime:
    """LoCoMo writes `1:56 pm on 8 May, 2023`; read as UTC."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def _turn_text(speaker: str, raw: dict[str, Any]) -> str:
    text = f"{speaker}: {raw.get('text', '').strip()}"
    caption = str(raw.get("blip_caption") or "").strip()
    if caption:
        text += f" [shares a photo: {caption}]"
    return text


def load(path: Path) -> list[Conversation]:
    data = json.loads(Path(path).read_text())
    conversations = []
    for sample in data:
        conv = sample["conversation"]
        sessions = sorted(
            int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)
        )
        turns: list[Turn] = []
        for s in sessions:
            start = parse_session_time(conv[f"session_{s}_date_time"])
            for raw in conv[f"session_{s}"]:
                turns.append(
                    Turn(
                        raw["dia_id"],
                        raw["speaker"],
                        _turn_text(raw["speaker"], raw),
                        s,
                        len(turns),
                        start + timedelta(seconds=len(turns)),
                        str(raw.get("text", "")).strip(),
                        str(raw.get("blip_caption") or "").strip(),
                    )
                )
        questions = tuple(
            Question(q["question"], int(q["category"]), parse_evidence(q.get("evidence") or [])) for q in sample["qa"]
        )
        speakers = (conv["speaker_a"], conv["speaker_b"])
        conversations.append(Conversation(sample["sample_id"], speakers, tuple(turns), questions))
    return conversations


def conversation_json(conv: Conversation) -> dict[str, Any]:
    """The conversation in LoCoMo's own shape (numbered sessions with their date-times), as a user's file."""
    body: dict[str, Any] = {"speaker_a": conv.speakers[0], "speaker_b": conv.speakers[-1]}
    for t in conv.turns:
        key = f"session_{t.session}"
        if key not in body:
            body[f"{key}_date_time"] = (t.at - timedelta(seconds=t.order)).isoformat()
            body[key] = []
        turn: dict[str, Any] = {"speaker": t.speaker, "dia_id": t.dia_id, "text": t.said}
        if t.caption:
            turn["blip_caption"] = t.caption
        body[key].append(turn)
    return {"sample_id": conv.sample_id, "conversation": body}


def import_conversation(engine: MemoryEngine, conv: Conversation) -> dict[str, str]:
    """Write one conversation into `engine` through its conversation ingest path; returns memory id -> dia_id
    (read back from each memory's `message_id`)."""
    with tempfile.TemporaryDirectory(prefix="hebbs-locomo-") as folder:
        path = Path(folder) / f"{conv.sample_id}.json"
        path.write_text(json.dumps(conversation_json(conv)), encoding="utf-8")
        summary = engine.ingest([path])
    if summary.skipped:
        raise ValueError(f"{conv.sample_id}: {summary.skipped[0].reason}")
    memories = engine.list_memories(kind="episode", limit=len(conv.turns) + 1)
    return {m.id: str(m.context["message_id"]) for m in memories if "message_id" in m.context}


def recall_at_k(retrieved: Sequence[str], evidence: Sequence[str]) -> float:
    """Fraction of `evidence` among `retrieved` (already cut to k); 1.0 when there is no evidence."""
    if not evidence:
        return 1.0
    got = set(retrieved)
    return sum(1 for e in evidence if e in got) / len(evidence)
