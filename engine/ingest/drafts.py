"""What an extractor (offline spaCy or LLM) hands the pipeline: one `Draft` per proposition.

Entity names here are surface forms; the pipeline resolves them to canonical ids with the registry.
Causal cues keep the text of each side, so the linker can find which proposition a phrase refers to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class Mention:
    name: str  # surface form, cleaned ("Meridian Analytics")
    type: str  # person | organization | product | place | event | unknown
    weight: int = 1  # votes for `type`: more when the context, not just the model, says so


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a causal statement.

    mode: `self` (this proposition's own main clause), `previous` (the sentence before), `clause` (another
    proposition of the same document, e.g. a cause clause split out of this sentence: `derived` is its
    index in the document's drafts), or `phrase` (a noun phrase or clause naming an event told
    elsewhere, to be resolved).
    """

    mode: str
    text: str = ""
    keywords: tuple[str, ...] = ()
    head: str | None = None  # stem of the phrase's head word ("violation" -> "violat")
    derived: int | None = None
    definite: bool = True  # "the violation" refers to a known event; "one loss" introduces a new one

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "text": self.text, "keywords": list(self.keywords), "head": self.head,
                "derived": self.derived, "definite": self.definite}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Side:
        return cls(d["mode"], d.get("text", ""), tuple(d.get("keywords", ())), d.get("head"), d.get("derived"),
                   d.get("definite", True))


@dataclass(frozen=True, slots=True)
class CausalCue:
    """`effect` was caused by `cause`, signalled by `cue` ("because", "led to", ...) with this confidence."""

    cue: str
    confidence: float
    cause: Side
    effect: Side

    def to_dict(self) -> dict[str, Any]:
        return {"cue": self.cue, "confidence": self.confidence, "cause": self.cause.to_dict(),
                "effect": self.effect.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CausalCue:
        return cls(d["cue"], float(d["confidence"]), Side.from_dict(d["cause"]), Side.from_dict(d["effect"]))


@dataclass(frozen=True, slots=True)
class Relation:
    """Subject entity - verb - object entity, from the dependency parse ("Meridian signed ... with CloudVault")."""

    subject: str  # entity name (surface form in drafts, canonical id once resolved)
    verb: str  # lemma
    object: str
    preposition: str | None = None
    confidence: float = 0.7

    def to_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "verb": self.verb, "object": self.object,
                "preposition": self.preposition, "confidence": self.confidence}


@dataclass
class Draft:
    """One atomic statement, before it becomes a `proposition` memory."""

    text: str
    block: int  # index of the block (paragraph, list item, message) it comes from
    heading_path: tuple[str, ...] = ()
    speaker: str | None = None
    mentions: list[Mention] = field(default_factory=list)
    subject: str | None = None  # entity name of the grammatical subject, if it is an entity
    plan: bool = False  # "will", "scheduled to": dated when written, not when it would happen
    event: bool = False  # something happened (past-tense action), for entity timelines
    causes: list[CausalCue] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    core: list[str] = field(default_factory=list)  # stems of its main verbs, subject and object heads
    root: str | None = None  # stem of the main verb
    reporting: bool = False  # the main verb reports speech ("said", "explained"): the news is in its clause
    structure: dict[str, Any] = field(default_factory=dict)
    derived_from: int | None = None  # a cause clause split out of the draft at this index
    stated_date: datetime | None = None  # the event date an extractor read (LLM); else found from the text
    when: datetime | None = None  # event time, set by the pipeline's date pass
    time_source: str = "document"
