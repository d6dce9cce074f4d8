"""LoCoMo (Maharana et al., 2024; CC BY-NC 4.0): load it, import it into stores, and score retrieval as the
paper does.

Each dialog turn becomes one memory: `entity_id` = the speaker, `created_at` = the session's date-time
plus the turn's order (in seconds), `context` = {conversation, session, dia_id}, and an image's caption
appended to the text. Consecutive turns of a conversation are linked `earlier --followed_by--> later`.
One store per conversation, as in the paper (questions are about one conversation).

R@k (the paper's `recall_acc`): for each question, the fraction of its evidence dialog ids found among
the dia_ids of the top k retrieved memories; a question without evidence counts as 1; the mean over
questions. Evidence strings are parsed leniently (`'D8:6; D9:17'` holds two ids, `'D:11:26'` is D11:26).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engine import MemoryEngine, NewMemory

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
    text: str
    session: int
    order: int  # position within the conversation
    at: datetime

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
                    )
                )
        questions = tuple(
            Question(q["question"], int(q["category"]), parse_evidence(q.get("evidence") or [])) for q in sample["qa"]
        )
        speakers = (conv["speaker_a"], conv["speaker_b"])
        conversations.append(Conversation(sample["sample_id"], speakers, tuple(turns), questions))
    return conversations


def import_conversation(engine: MemoryEngine, conv: Conversation) -> dict[str, str]:
    """Write one conversation into `engine`; returns memory id -> dia_id."""
    items = [
        NewMemory(
            t.content,
            entity_id=t.speaker,
            created_at=t.at,
            context={"conversation": conv.sample_id, "session": t.session, "dia_id": t.dia_id},
        )
        for t in conv.turns
    ]
    memories = engine.remember_many(items)
    engine.add_edges([(a.id, b.id, "followed_by") for a, b in zip(memories, memories[1:], strict=False)])
    return {m.id: t.dia_id for m, t in zip(memories, conv.turns, strict=True)}


def recall_at_k(retrieved: Sequence[str], evidence: Sequence[str]) -> float:
    """Fraction of `evidence` among `retrieved` (already cut to k); 1.0 when there is no evidence."""
    if not evidence:
        return 1.0
    got = set(retrieved)
    return sum(1 for e in evidence if e in got) / len(evidence)
