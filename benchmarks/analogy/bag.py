"""The old feature bag (session 2), kept only so the analogy benchmark can compare against it.

A structure is a JSON object; its `features` list holds abstract role:value strings such as
`action:start`, `cause:omission`, `outcome:failure`, `actor:ORG`. Two memories are analogous when they
share such roles even if they share no words. The lexical extractor here needs no model; richer
extractors (spaCy, an LLM) produce the same shape, so the similarity below serves them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from engine.analogy.features import weighted_jaccard

# Coarse classes of actions and outcomes. Each word maps to the class it signals.
_LEXICON: dict[str, dict[str, tuple[str, ...]]] = {
    "action": {
        "start": (
            "launch",
            "launched",
            "launches",
            "open",
            "opened",
            "opens",
            "release",
            "released",
            "ship",
            "shipped",
            "debut",
            "debuted",
            "rollout",
            "rolled",
            "introduce",
            "introduced",
            "unveil",
            "unveiled",
            "go-live",
            "started",
            "start",
            "kicked",
        ),
        "agree": ("sign", "signed", "signs", "agree", "agreed", "contract", "contracted", "renew", "renewed"),
        "change": (
            "change",
            "changed",
            "changes",
            "switch",
            "switched",
            "migrate",
            "migrated",
            "replace",
            "replaced",
            "move",
            "moved",
            "update",
            "updated",
        ),
        "escalate": (
            "escalate",
            "escalated",
            "escalation",
            "report",
            "reported",
            "flag",
            "flagged",
            "notify",
            "notified",
            "alert",
            "alerted",
        ),
        "negotiate": (
            "negotiate",
            "negotiated",
            "discount",
            "pricing",
            "price",
            "quote",
            "quoted",
            "offer",
            "offered",
            "objection",
            "objected",
        ),
    },
    "cause": {
        "omission": (
            "skip",
            "skipped",
            "skipping",
            "cut",
            "cuts",
            "omitted",
            "ignored",
            "neglected",
            "missed",
            "without",
            "insufficient",
            "untested",
            "unreviewed",
            "bypassed",
            "dropped",
            "lack",
            "lacked",
            "no",
        ),
        "haste": (
            "rush",
            "rushed",
            "early",
            "hurried",
            "deadline",
            "premature",
            "prematurely",
            "ahead",
            "compressed",
            "shortened",
        ),
        "breach": (
            "breach",
            "breached",
            "violation",
            "violated",
            "unauthorized",
            "unannounced",
            "unapproved",
            "notice",
        ),
        "overload": ("overload", "overloaded", "spike", "surge", "saturated", "exhausted", "capacity"),
        "misconfiguration": (
            "misconfigured",
            "misconfiguration",
            "typo",
            "wrong",
            "incorrect",
            "expired",
            "expiry",
            "stale",
        ),
    },
    "outcome": {
        "failure": (
            "fail",
            "failed",
            "fails",
            "failure",
            "collapse",
            "collapsed",
            "crash",
            "crashed",
            "recall",
            "recalled",
            "outage",
            "broke",
            "broken",
            "flop",
            "flopped",
            "lost",
            "churned",
            "down",
            "disaster",
            "chaos",
            "refunds",
            "complaints",
            "abandoned",
            "cancelled",
            "canceled",
        ),
        "success": (
            "succeed",
            "succeeded",
            "success",
            "successful",
            "won",
            "win",
            "exceeded",
            "smooth",
            "smoothly",
            "praised",
            "grew",
            "growth",
            "sold",
        ),
        "delay": ("delay", "delayed", "postponed", "stalled", "slipped", "paused"),
        "risk": ("risk", "exposure", "liability", "penalty", "fine", "lawsuit", "dispute"),
    },
}
_WORD_TO_ROLE: dict[str, list[str]] = {}
for _role, _classes in _LEXICON.items():
    for _cls, _words in _classes.items():
        for _w in _words:
            _WORD_TO_ROLE.setdefault(_w, []).append(f"{_role}:{_cls}")

_CAUSAL_MARKERS = re.compile(
    r"\b(because|due to|as a result|led to|leads to|caused|causing|resulted in|owing to|therefore|so that)\b"
)
_WORD = re.compile(r"[a-z][a-z'-]*")

# Roles differ in how much they say about a situation's shape. `chain` (a cause class linked to an outcome
# class by causal language, e.g. `chain:omission>failure`) is the relational core of an analogy; `verb`
# (the main verb's lemma) is the most domain-specific, so it counts least.
FEATURE_WEIGHTS = {
    "chain": 3.0,
    "outcome": 3.0,
    "cause": 2.5,
    "action": 2.0,
    "relation": 1.5,
    "polarity": 1.0,
    "actor": 0.5,
    "object": 0.5,
    "verb": 0.5,
}


def word_roles(word: str) -> list[str]:
    """The `role:class` features a lower-case word signals (e.g. "skipped" -> ["cause:omission"])."""
    return _WORD_TO_ROLE.get(word, [])


class LexicalStructureExtractor:
    """Keyword roles compared as a set: no order, direction, roles or negation."""

    name = "bag"

    def extract(self, texts: Sequence[str]) -> list[dict[str, Any]]:
        return [_extract_one(t) for t in texts]


def _extract_one(text: str) -> dict[str, Any]:
    lowered = text.lower()
    roles: dict[str, set[str]] = {"action": set(), "cause": set(), "outcome": set()}
    for word in _WORD.findall(lowered):
        for feature in _WORD_TO_ROLE.get(word, ()):
            role, cls = feature.split(":", 1)
            roles[role].add(cls)
    features = {f"{role}:{cls}" for role, classes in roles.items() for cls in classes}
    if _CAUSAL_MARKERS.search(lowered):
        features.add("relation:causal")
    return {
        "actions": sorted(roles["action"]),
        "causes": sorted(roles["cause"]),
        "outcomes": sorted(roles["outcome"]),
        "causal": "relation:causal" in features,
        "features": sorted(features),
    }


def feature_weight(feature: str) -> float:
    return FEATURE_WEIGHTS.get(feature.split(":", 1)[0], 1.0)


def structural_similarity(a: Iterable[str], b: Iterable[str]) -> float:
    """Weighted Jaccard of two feature sets (the bag's own weights): 1 for the same shape, 0 for nothing in common."""
    return weighted_jaccard(a, b, feature_weight)
