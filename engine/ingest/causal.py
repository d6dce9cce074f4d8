"""Explicit causal language in a parsed sentence: which part is the cause, which the effect, how sure.

Rules (confidence reflects how explicit the cue is):
- `X because Y` / `Because Y, X`: Y (a clause) caused X. 0.9
- `X because of / due to / as a result of / owing to / thanks to N`: the event named by N caused X. 0.75-0.9
- `N1 caused / led to / resulted in / triggered N2`, `N2 was caused by N1`: N1 caused N2. 0.8-0.9
  (`This led to ...` points at the previous sentence; `..., which led to N2` at this sentence's clause.)
- `As a result, X` / `Consequently, X` / `Therefore, X` / `So X`: the previous sentence caused X. 0.6-0.8
- `X, so Y` / `X, and as a result Y`: clause X caused Y. 0.6-0.8
- `After X, Y`: X probably caused Y (temporal succession, the weakest cue). 0.5; `Y after N` 0.4
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.ingest.dates import find_dates

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

PHRASE_CUES = {
    "because of": 0.9,
    "caused by": 0.9,
    "due to": 0.85,
    "as a result of": 0.8,
    "as a consequence of": 0.8,
    "owing to": 0.8,
    "thanks to": 0.75,
    "in response to": 0.6,
}
VERB_CUES = {"cause": 0.9, "lead": 0.85, "result": 0.85, "trigger": 0.8, "force": 0.7}
_VERB_PREP = {"lead": "to", "result": "in"}
OPENERS = {
    "as a result": 0.8,
    "as a consequence": 0.8,
    "consequently": 0.8,
    "because of this": 0.8,
    "because of that": 0.8,
    "for this reason": 0.8,
    "therefore": 0.75,
    "thus": 0.75,
    "hence": 0.75,
    "this is why": 0.75,
    "that is why": 0.75,
    "so": 0.6,
}
MIDDLES = {
    ", and as a result": 0.8,
    ", as a result": 0.8,
    "; as a result": 0.8,
    ", which is why": 0.75,
    ", and therefore": 0.75,
    ", therefore": 0.75,
    "; therefore": 0.75,
    ", so": 0.6,
}
AFTER_OPENING = 0.5
AFTER_INSIDE = 0.4
_PHRASE_RE = re.compile(r"\b(" + "|".join(re.escape(c) for c in PHRASE_CUES) + r")\s+", re.I)
_OPENER_RE = re.compile(r"^\s*(" + "|".join(re.escape(c) for c in sorted(OPENERS, key=len, reverse=True)) +
                        r")\b,?\s*", re.I)
_MIDDLE_RE = re.compile("(" + "|".join(re.escape(c) for c in MIDDLES) + r")\b,?\s+(?!that\b|far\b)", re.I)
_BOUNDARY = re.compile(r"\s*(?:[,;:.!?]|\band\s+(?:then|so)\b|\bwhich\b|$)")
_ANAPHORS = {"this", "that", "it", "these", "those"}
_TIME_WORDS = re.compile(
    r"((\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|several|many)\s+)?"
    r"(minutes?|hours?|days?|weeks?|months?|years?|launch day|a while|that|this|which)", re.I
)


@dataclass(frozen=True, slots=True)
class Part:
    """One side as found in the sentence; `start`/`end` are character offsets within the sentence."""

    mode: str  # self | previous | clause | phrase
    text: str = ""
    start: int = 0
    end: int = 0


@dataclass(frozen=True, slots=True)
class Found:
    cue: str
    confidence: float
    cause: Part
    effect: Part


SELF = Part("self")
PREVIOUS = Part("previous")


def find_causes(sent: Span) -> list[Found]:
    """Every causal statement in one sentence, in the order the rules above are listed."""
    text = sent.text
    found: list[Found] = []
    taken: list[tuple[int, int]] = []  # character ranges already used by a cue

    def add(item: Found, cue_start: int, cue_end: int) -> None:
        if any(cue_start < e and cue_end > s for s, e in taken):
            return
        taken.append((cue_start, cue_end))
        found.append(item)

    opener = _OPENER_RE.match(text)
    if opener and not (opener.group(1).lower() == "so" and re.match(r"\s*so\s+(far|that|many|much)\b", text, re.I)):
        cue = opener.group(1).lower()
        add(Found(cue, OPENERS[cue], PREVIOUS, SELF), opener.start(1), opener.end(1))

    for m in _PHRASE_RE.finditer(text):
        cue = m.group(1).lower()
        if cue == "caused by":
            continue  # passive `caused by` is read from the parse below
        start = m.end()
        end = _phrase_end(text, start)
        phrase = text[start:end].strip()
        if not phrase:
            continue
        if phrase.lower() in _ANAPHORS:
            add(Found(cue, PHRASE_CUES[cue], PREVIOUS, SELF), m.start(), m.end())
        else:
            add(Found(cue, PHRASE_CUES[cue], Part("phrase", phrase, start, end), SELF), m.start(), m.end())

    for token in sent:
        low = token.lower_
        if low == "because" and token.i + 1 < sent.end and sent.doc[token.i + 1].lower_ != "of":
            clause = _because_clause(sent, token)
            if clause is not None:
                s, e = clause
                add(Found("because", 0.9, Part("clause", text[s:e].strip(" ,;"), s, e), SELF),
                    token.idx - sent.start_char, token.idx - sent.start_char + len(token.text))
        elif token.lemma_ in VERB_CUES and token.pos_ in ("VERB", "AUX"):
            item = _verb_cue(sent, token)
            if item is not None:
                offset = token.idx - sent.start_char
                add(item, offset, offset + len(token.text))
        elif low in ("after", "following") and token.dep_ in ("prep", "mark"):
            item = _after_cue(sent, token)
            if item is not None:
                offset = token.idx - sent.start_char
                add(item, offset, offset + len(token.text))

    for m in _MIDDLE_RE.finditer(text):
        cue = m.group(1).lower().strip(" ,;")
        before = text[: m.start()].strip()
        if len(before.split()) >= 3 and len(text[m.end():].split()) >= 2:
            add(Found(cue, MIDDLES[m.group(1).lower()], Part("clause", before, 0, m.start()), SELF),
                m.start(), m.end())
    return found


def _main_verbs(sent: Span) -> list[Token]:
    return [sent.root, *[c for c in sent.root.children if c.dep_ == "conj"]]


_DEFINITE = re.compile(r"^(the|this|that|these|those|its|their|his|her|our|my|your)\b", re.I)


def is_definite(phrase: str, proper: bool | None = None) -> bool:
    """Does a phrase name something already known ("the DPA violation", "CloudVault's change", "Atlas")
    rather than introduce something new ("one loss", "an expired certificate")? `proper`: whether its first
    word is a proper noun, when a parse says so (a capital letter may only start the sentence)."""
    text = phrase.strip()
    if _DEFINITE.match(text) or re.search(r"\w['’]s\b", text):
        return True
    if proper is not None:
        return proper
    first = text.split(" ", 1)[0] if text else ""
    return first[:1].isupper() and first.lower() not in ("a", "an", "one", "some", "many", "several", "all")


def _phrase_end(text: str, start: int) -> int:
    m = _BOUNDARY.search(text, start)
    return m.start() if m else len(text)


def _rel(sent: Span, token_start: int, token_end: int) -> tuple[int, int]:
    """Character range (within the sentence) of tokens [token_start, token_end)."""
    doc = sent.doc
    s = doc[token_start].idx - sent.start_char
    last = doc[token_end - 1]
    return s, last.idx + len(last.text) - sent.start_char


def _because_clause(sent: Span, because: Token) -> tuple[int, int] | None:
    """The clause `because` introduces: the subtree of the clause it belongs to (the main verb's child
    above it), after `because`; or up to the next comma when the parse hangs `because` off the main verb."""
    clause = because
    while clause.head != clause and clause.head != sent.root:
        clause = clause.head
    doc = sent.doc
    if clause != because and clause.head == sent.root:
        end = max(t.i for t in clause.subtree) + 1
    else:
        end = because.i + 1
        while end < sent.end and doc[end].text not in (",", ";"):
            end += 1
    while end > because.i + 1 and doc[end - 1].is_punct:
        end -= 1
    return _rel(sent, because.i + 1, end) if end > because.i + 1 else None


def _subtree_range(token: Token, exclude: Token | None = None) -> tuple[int, int]:
    ids = [t.i for t in token.subtree if exclude is None or t not in exclude.subtree or t == token]
    start, end = min(ids), max(ids) + 1
    doc = token.doc
    while end > start + 1 and doc[end - 1].is_punct:
        end -= 1
    return start, end


def _verb_cue(sent: Span, verb: Token) -> Found | None:
    """`N1 caused N2`, `N1 led to N2`, `N1 resulted in N2`, `N2 was caused by N1`."""
    lemma = verb.lemma_
    confidence = VERB_CUES[lemma]
    text = sent.text
    agent = next((c for c in verb.children if c.dep_ == "agent"), None)
    passive = any(c.dep_ == "auxpass" for c in verb.children) or verb.dep_ == "acl"
    if lemma == "cause" and agent is not None and passive:
        pobj = next((c for c in agent.children if c.dep_ == "pobj"), None)
        if pobj is None:
            return None
        cs, ce = _rel(sent, *_subtree_range(pobj))
        cause = _side_for_phrase(text[cs:ce], cs, ce)
        subject = next((c for c in verb.children if c.dep_ in ("nsubjpass", "nsubj")), None)
        if subject is not None:
            es, ee = _rel(sent, *_subtree_range(subject))
            effect = _side_for_phrase(text[es:ee], es, ee)
        elif verb.dep_ == "acl":  # "a crash caused by X": the effect is the noun the participle modifies
            head = verb.head
            ids = [t.i for t in head.subtree if t not in verb.subtree]
            es, ee = _rel(sent, min(ids), max(ids) + 1)
            effect = Part("phrase", text[es:ee].strip(" ,"), es, ee)
        else:
            effect = SELF
        return Found("caused by", PHRASE_CUES["caused by"], cause, effect)
    if passive:
        return None
    subject = next((c for c in verb.children if c.dep_ in ("nsubj", "csubj")), None)
    if subject is None and verb.dep_ == "conj":
        subject = next((c for c in verb.head.children if c.dep_ in ("nsubj", "csubj")), None)
    if subject is None:
        return None
    prep = _VERB_PREP.get(lemma)
    if prep:
        link = next((c for c in verb.children if c.dep_ in ("prep", "dative") and c.lower_ == prep), None)
        obj = next((c for c in link.children if c.dep_ in ("pobj", "pcomp")), None) if link is not None else None
    else:
        obj = next((c for c in verb.children if c.dep_ in ("dobj", "ccomp", "xcomp")), None)
    if obj is None:
        return None
    os_, oe = _subtree_range(obj)
    # "caused the app to be pulled": the object's infinitive belongs to the effect
    comp = next((c for c in verb.children if c.dep_ in ("xcomp", "ccomp") and c != obj), None)
    if comp is not None:
        oe = max(oe, _subtree_range(comp)[1])
    es, ee = _rel(sent, os_, oe)
    effect = Part("phrase", text[es:ee].strip(" ,"), es, ee)
    if subject.lower_ in ("which", "that") and verb.dep_ == "relcl":
        # "X, which led to N2": the sentence's own clause is the cause
        return Found(_cue_name(lemma), confidence, SELF, effect)
    if subject.lower_ in _ANAPHORS:
        return Found(_cue_name(lemma), confidence, PREVIOUS, effect)
    cs, ce = _rel(sent, *_subtree_range(subject))
    return Found(_cue_name(lemma), confidence, _side_for_phrase(text[cs:ce], cs, ce), effect)


def _cue_name(lemma: str) -> str:
    return {"cause": "caused", "lead": "led to", "result": "resulted in", "trigger": "triggered",
            "force": "forced"}[lemma]


def _side_for_phrase(text: str, start: int, end: int) -> Part:
    cleaned = text.strip(" ,;")
    if cleaned.lower() in _ANAPHORS:
        return PREVIOUS
    return Part("phrase", cleaned, start, end)


def _after_cue(sent: Span, token: Token) -> Found | None:
    """`After X, Y` (0.5) and `Y after X` (0.4): succession, the weakest causal cue."""
    if token.dep_ == "mark":
        verb = token.head
        ids = [t.i for t in verb.subtree if t.i > token.i]
    else:
        obj = next((c for c in token.children if c.dep_ in ("pobj", "pcomp")), None)
        if obj is None:
            return None
        ids = [t.i for t in obj.subtree]
    if not ids:
        return None
    start, end = token.i + 1, max(ids) + 1
    while end > start and sent.doc[end - 1].is_punct:
        end -= 1
    if end <= start:
        return None
    s, e = _rel(sent, start, end)
    phrase = sent.text[s:e].strip(" ,")
    rest = phrase
    for d in reversed(find_dates(phrase)):
        rest = rest[: d.start] + rest[d.end :]
    rest = re.sub(r"\b(on|in|at|of)\s*$", "", rest.strip(" ,")).strip()
    if not rest or _TIME_WORDS.fullmatch(rest) or re.match(r"^(\d|the first|the last)", rest):
        return None  # "after 2026-03-02", "after two weeks": a time, not an event
    if len(re.findall(r"\w+", phrase)) < 2 and token.dep_ != "mark":
        return None
    opening = token.i == sent.start or (token.i == sent.start + 1 and sent.doc[sent.start].is_punct)
    definite = is_definite(phrase, sent.doc[start].pos_ == "PROPN")
    if not opening and (token.head not in _main_verbs(sent) or not definite):
        return None  # "a bug that reset the delay after each failed retry": a time inside a detail
    has_verb = any(t.pos_ in ("VERB", "AUX") for t in sent.doc[start:end])
    mode = "clause" if has_verb and token.dep_ == "mark" else "phrase"
    return Found(token.lower_, AFTER_OPENING if opening else AFTER_INSIDE, Part(mode, phrase, s, e), SELF)
