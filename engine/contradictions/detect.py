"""Contradiction candidates between two statements, found offline from their spaCy parses.

Four checks, each needing the two statements to be about the same subject and to say mostly the same
thing otherwise (their content words overlap):
- negation: one side negates what the other asserts ("works at" / "does not work at");
- opposites: the statements differ by a pair of opposite words ("won" / "lost", "married" / "unmarried");
- values: different numbers, dates, times, codes or weekdays for the same attribute ("three" / "five
  direct reports", "B12" / "C4");
- revision: one side says that something changed ("no longer", "moved to", "switched from ... to",
  "now"); such a pair is a revision (the newer statement replaces the older), not a contradiction.

The result is a candidate with its reason and a confidence, for review by an agent (the SDK's
`contradiction_prepare` / `contradiction_commit`), never an automatic verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from engine.contradictions.lexicon import (
    MONTHS,
    NEGATIONS,
    NUMBER_WORDS,
    REVISION_ADVERBS,
    REVISION_PHRASES,
    REVISION_VERBS,
    WEEKDAYS,
    opposite_pair,
)
from engine.ingest.keywords import stem

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

Verdict = Literal["contradiction", "revision"]

_SUBJECT_DEPS = ("nsubj", "nsubjpass", "csubj")
_CONTENT_POS = {"NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM"}
_PRONOUNS = {"he", "she", "they", "it", "we", "i", "you"}
_PAST_AUXILIARIES = {"has", "have", "had", "'s", "'ve", "was", "were", "been", "got", "get"}
_DIGITS = re.compile(r"\d")
_NUMBER_VALUES = {
    "zero": "0", "one": "1", "single": "1", "once": "1", "two": "2", "twice": "2", "double": "2", "three": "3",
    "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11",
    "twelve": "12", "dozen": "12", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50",
}
# Minimum overlap of the two statements' other content words for each check: how much else must agree.
NEGATION_OVERLAP = 0.5
OPPOSITE_OVERLAP = 0.4
VALUE_OVERLAP = 0.6
REVISION_OVERLAP = 0.25


@dataclass(frozen=True)
class Statement:
    """What the checks read of one statement."""

    text: str
    subjects: frozenset[str]  # lemmas of the clauses' subject heads (and a name a copula equates), lower case
    owner: frozenset[str]  # possessors and compounds of the subjects ("Ana" of "Ana's son")
    content: frozenset[str]  # stems of the content words, without negations, values and revision cues
    nouns: frozenset[str]  # stems of the nouns and names: the attributes a value can belong to
    words: frozenset[str]  # every word, lemma and surface form (opposites may be function words: on/off)
    values: frozenset[str]  # numbers, times, dates, codes with digits, weekdays, months (normalised)
    negated: bool
    revision_cue: str | None
    strong_cue: bool  # a phrase ("no longer") or a change verb in the past whose object the other side names
    objects: frozenset[str] = frozenset()  # stems of what a change verb acts on (object, from/to)


@dataclass(frozen=True)
class Finding:
    """A contradiction candidate: why the two statements may not both hold, and how sure the check is."""

    verdict: Verdict
    reason: Literal["negation", "opposites", "values", "revision"]
    confidence: float
    detail: str


def statement(doc: Doc) -> Statement:
    """The features of one parsed statement."""
    lower = doc.text.lower()
    phrase = next((p for p in REVISION_PHRASES if re.search(rf"\b{re.escape(p)}\b", lower)), None)
    cue: str | None = phrase
    strong = phrase is not None
    objects: set[str] = set()
    negations = 0
    content: set[str] = set()
    nouns: set[str] = set()
    words: set[str] = set()
    values: set[str] = set()
    for token in doc:
        if token.is_punct or token.is_space:
            continue
        lemma = token.lemma_.lower()
        words.update((lemma, token.lower_))
        if _is_negation(token):
            negations += 1
            continue
        value = _value(token)
        if value is not None:
            values.add(value)
            continue
        if _is_change_verb(token, lemma):
            if cue is None or not strong:
                cue, strong = lemma, True
            objects.update(_acted_on(token))
            continue
        if lemma in REVISION_ADVERBS and token.pos_ == "ADV" and lemma != "longer":
            cue = cue or lemma
            continue
        if token.pos_ in _CONTENT_POS and not token.is_stop:
            content.add(stem(lemma))
            if token.pos_ in ("NOUN", "PROPN"):
                nouns.add(stem(lemma))
    heads = _subject_heads(doc)
    owner = frozenset(
        child.lemma_.lower() for head in heads for child in head.children
        if child.dep_ in ("poss", "compound") and child.pos_ in ("PROPN", "NOUN")
    )
    return Statement(
        text=doc.text,
        subjects=frozenset(head.lemma_.lower() for head in heads),
        owner=owner,
        content=frozenset(content),
        nouns=frozenset(nouns),
        words=frozenset(words),
        values=frozenset(values),
        negated=negations % 2 == 1,
        revision_cue=cue,
        strong_cue=strong,
        objects=frozenset(objects),
    )


def compare(a: Statement, b: Statement) -> Finding | None:
    """A candidate if the older statement `a` and the newer `b` may not both hold; None when they look
    compatible. For a revision, `b` replaces `a`."""
    same = _same_subject(a, b)
    if same == 0.0:
        return None
    overlap = _jaccard(a.content, b.content)
    subject = {stem(word) for word in a.subjects | b.subjects}
    rest = _jaccard(a.content - subject, b.content - subject)
    values_differ = bool(a.values) and bool(b.values) and a.values != b.values
    opposites = opposite_pair(sorted(a.words - b.words), sorted(b.words - a.words))
    negation_differs = a.negated != b.negated
    revision = _revision(a, b, rest, changed=values_differ or opposites is not None or negation_differs)
    if revision is not None:
        return revision
    if same < 1.0:
        return None  # a contradiction needs the very same subject; a related one (its owner) only revises
    if negation_differs and overlap >= NEGATION_OVERLAP:
        negated = "b" if b.negated else "a"
        return Finding("contradiction", "negation", _confidence(0.6, overlap, same),
                       f"the same statement, negated in {negated}")
    if opposites is not None and not values_differ:  # "opens at 8" / "closes at 6": two attributes
        pair = {stem(word) for word in opposites}
        besides = _jaccard(a.content - pair, b.content - pair)  # what else the two statements share
        if besides >= OPPOSITE_OVERLAP:
            return Finding("contradiction", "opposites", _confidence(0.55, besides, same),
                           f"opposite words: {opposites[0]!r} / {opposites[1]!r}")
    if values_differ and overlap >= VALUE_OVERLAP and a.nouns == b.nouns:
        only_a = ", ".join(sorted(a.values - b.values)) or ", ".join(sorted(a.values))
        only_b = ", ".join(sorted(b.values - a.values)) or ", ".join(sorted(b.values))
        return Finding("contradiction", "values", _confidence(0.5, overlap, same),
                       f"different values for the same attribute: {only_a} / {only_b}")
    return None


def _revision(older: Statement, newer: Statement, rest: float, changed: bool) -> Finding | None:
    """A revision when the newer statement says that what the older one states has changed.

    A strong cue ("no longer", a change verb in the past acting on what the older side names) needs only
    the same subject; a weak one ("now", "instead") needs shared content besides the subject (`rest`) or a
    changed value as well. A cue in the older statement says nothing about the newer one."""
    cue = newer.revision_cue
    if cue is None or cue in older.words:
        return None
    acts_on_older = not newer.objects or bool(newer.objects & (older.content | older.words))
    if newer.strong_cue and acts_on_older:
        bonus = 0.15 if changed else 0.0
    elif rest >= REVISION_OVERLAP or changed:
        bonus = 0.0
    else:
        return None
    confidence = _confidence(0.55, rest, _same_subject(older, newer), bonus=bonus)
    return Finding("revision", "revision", confidence, f"says it changed ({cue!r})")


def _confidence(base: float, overlap: float, same: float, bonus: float = 0.0) -> float:
    """Grows with how much else the two statements share; lower when the subject match is a pronoun."""
    return round(min(0.99, (base + 0.4 * overlap + bonus) * same), 3)


def _same_subject(a: Statement, b: Statement) -> float:
    """1 for a shared subject (and no conflicting owner), 0.9 when one is the other's owner ("Jen" and
    "Jen's dose"), 0.8 when either is a pronoun or has no subject but they share content, else 0."""
    if a.subjects & b.subjects - _PRONOUNS:
        return 0.0 if a.owner and b.owner and not (a.owner & b.owner) else 1.0
    if (a.subjects & b.owner) or (b.subjects & a.owner):
        return 0.9
    if not a.subjects or not b.subjects or (a.subjects | b.subjects) & _PRONOUNS:
        return 0.8 if a.content & b.content else 0.0
    return 0.0


def _jaccard(x: frozenset[str] | set[str], y: frozenset[str] | set[str]) -> float:
    union = x | y
    return len(x & y) / len(union) if union else 0.0


def _is_negation(token: Token) -> bool:
    lower = token.lower_
    if token.dep_ == "neg":
        return True
    if lower == "no" and token.i + 1 < len(token.doc) and token.doc[token.i + 1].lower_ in ("longer", "more"):
        return False  # "no longer" is a revision cue, not a negation of the statement
    return lower in NEGATIONS and lower not in ("without", "nor")


def _value(token: Token) -> str | None:
    """The normalised value a token names, or None."""
    lower = token.lower_
    if _DIGITS.search(lower):
        return lower.replace(",", "")
    if lower in WEEKDAYS or lower in MONTHS:
        return lower
    if lower in NUMBER_WORDS or (token.like_num and token.pos_ == "NUM"):
        return _NUMBER_VALUES.get(lower, lower)
    return None


def _is_change_verb(token: Token, lemma: str) -> bool:
    """A verb that reports a change, in the past or perfect ("moved", "has switched", "was replaced"): not a
    habit ("closes") and not a state ("is married")."""
    if lemma not in REVISION_VERBS or token.pos_ != "VERB" or token.dep_ not in ("ROOT", "conj", "ccomp", "acl"):
        return False
    if token.tag_ == "VBD":
        return True
    auxiliaries = {child.lower_ for child in token.children if child.dep_ in ("aux", "auxpass")}
    return token.tag_ == "VBN" and (not auxiliaries or bool(auxiliaries & _PAST_AUXILIARIES))


def _acted_on(verb: Token) -> set[str]:
    """Stems of what a change verb acts on and the old value it names: its direct object and the nouns of a
    `from` phrase ("moved his accounts from Northbank"). The new value ("to Munich", "become vegan") is
    left out: the older statement cannot name it."""
    out: set[str] = set()
    for child in verb.children:
        if child.dep_ == "dobj":
            out.add(stem(child.lemma_.lower()))
        elif child.dep_ == "prep" and child.lower_ == "from":
            out.update(stem(t.lemma_.lower()) for t in child.subtree if t.pos_ in ("NOUN", "PROPN"))
    return out


def _subject_heads(doc: Doc) -> list[Token]:
    """The subject heads of the main clauses (and a name that a copula equates with the subject: "the coach
    is Maria Lopez"); the first noun chunk's head when the parse found no subject."""
    heads: list[Token] = []
    for sent in doc.sents:
        clauses = [sent.root, *(t for t in sent.root.children if t.dep_ in ("conj", "ccomp"))]
        for clause in clauses:
            for child in clause.children:
                named = child.dep_ == "attr" and child.pos_ == "PROPN" and clause.lemma_ == "be"
                if child.dep_ in _SUBJECT_DEPS or named:
                    heads.append(child)
    heads = heads or [chunk.root for chunk in doc.noun_chunks][:1]
    first = doc[0] if len(doc) else None
    if first is not None and first.pos_ == "PROPN" and first not in heads:
        heads.append(first)  # a name that opens the statement is its topic, whatever the parse made of it
    return heads
