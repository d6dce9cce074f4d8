"""Relational structure from the dependency parse: a small graph of roles per proposition.

Roles: `actor:<TYPE>` and `object:<TYPE>` (entity type of the subject and object, or the class of a
common noun: "a restaurant" is an ORG like "Bistro Lumen"), `verb:<lemma>`, the lexical `action:`,
`cause:` and `outcome:` classes (negation-aware: "did not skip testing" is diligence, not omission),
`polarity:` of the outcome, `relation:causal`, and `chain:<cause>><outcome>` when causal language links a
cause class to an outcome class. "A rushed launch failed because testing was skipped" and "a restaurant
opened early and its kitchen collapsed because training was cut" share `chain:omission>failure`,
`outcome:failure`, `cause:omission`, `cause:haste`, `polarity:negative` while sharing few words.

The output keeps the format of `engine.structure` (a dict with a `features` list), so
`structural_similarity` and the StructureIndex work unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engine import config
from engine.ingest.causal import Found, find_causes
from engine.ingest.entities import mention_type
from engine.structure import LexicalStructureExtractor, StructureExtractor, word_roles

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# Common nouns by the entity type they stand for, so "a restaurant" matches "Bistro Lumen" (ORG).
NOUN_TYPES: dict[str, str] = {
    **dict.fromkeys(("company", "restaurant", "bistro", "bakery", "cafe", "clinic", "hospital", "team", "vendor",
                     "firm", "startup", "agency", "store", "shop", "kitchen", "staff", "supplier", "committee",
                     "board", "bank", "business", "organisation", "organization", "provider", "customer",
                     "client", "department", "brand", "chain", "retailer", "manufacturer", "school"), "ORG"),
    **dict.fromkeys(("app", "application", "product", "device", "thermostat", "api", "software", "feature",
                     "platform", "service", "website", "site", "tool", "model", "version", "phone", "car",
                     "system", "unit", "battery", "dashboard", "menu", "slogan"), "PRODUCT"),
    **dict.fromkeys(("launch", "opening", "rollout", "campaign", "release", "relaunch", "migration", "outage",
                     "incident", "event", "festival", "project", "deal", "negotiation", "review", "trial",
                     "pilot", "beta", "recall"), "EVENT"),
    **dict.fromkeys(("manager", "engineer", "chef", "cook", "doctor", "nurse", "counsel", "officer", "lead",
                     "director", "founder", "owner", "executive", "analyst", "developer", "ceo", "cto", "cfo",
                     "coo", "lawyer", "critic", "patient", "user", "users", "buyer"), "PERSON"),
    **dict.fromkeys(("city", "region", "country", "warehouse", "town", "office", "site"), "PLACE"),
}
_TYPE_LABELS = {"person": "PERSON", "organization": "ORG", "product": "PRODUCT", "place": "PLACE",
                "event": "EVENT"}
_NEGATIVE_OUTCOMES = {"failure", "delay", "risk"}
# Words that, in a cause, say the preparation was protected: "kept the full testing", "fully trained".
_DILIGENCE = {"kept", "completed", "protected", "fully", "full", "thorough", "thoroughly", "refused",
              "validated", "tested", "trained", "rehearsed"}
_NEGATORS = {"not", "never", "no", "n't", "without"}


def _negated(token: Token) -> bool:
    """Is this word (or the verb it hangs off) negated, or its subject a "no ..." ("no endpoint failed")?"""
    for t in (token, token.head):
        for c in t.children:
            if c.dep_ == "neg" or c.lower_ in ("never", "no"):
                return True
            if c.dep_ in ("nsubj", "nsubjpass") and (
                c.lower_ in ("nobody", "nothing", "none") or any(d.lower_ == "no" for d in c.children)
            ):
                return True
    return False


def _type_of(token: Token | None, span: Span) -> str | None:
    """Entity type of a subject/object head: its entity's type, else its noun class."""
    if token is None:
        return None
    if token.ent_type_:
        ent = next((e for e in span.doc.ents if e.start <= token.i < e.end), None)
        if ent is not None:
            kind = mention_type(ent.text, ent.label_)
            if kind in _TYPE_LABELS:
                return _TYPE_LABELS[kind]
    noun = NOUN_TYPES.get(token.lemma_.lower()) or NOUN_TYPES.get(token.lower_)
    if noun:
        return noun
    if token.lower_ in ("i", "we", "he", "she"):
        return "PERSON"
    for child in token.subtree:
        if child.ent_type_ in ("ORG", "PERSON", "PRODUCT", "GPE", "FAC", "EVENT"):
            return {"GPE": "PLACE", "FAC": "PLACE"}.get(child.ent_type_, child.ent_type_)
    return None


def _subject(verb: Token) -> Token | None:
    found = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass", "csubj")), None)
    if found is None and verb.dep_ == "conj":
        return _subject(verb.head)
    return found


def _object(verb: Token) -> Token | None:
    return next((c for c in verb.children if c.dep_ in ("dobj", "attr", "oprd")), None)


def span_structure(span: Span, causes: Sequence[Found] | None = None) -> dict[str, Any]:
    """The structure of one sentence (or clause) span."""
    if causes is None:
        causes = find_causes(span)
    cause_ranges = [(span.start_char + c.cause.start, span.start_char + c.cause.end)
                    for c in causes if c.cause.mode in ("clause", "phrase")]
    roles: dict[str, set[str]] = {"action": set(), "cause": set(), "outcome": set()}
    cause_classes: set[str] = set()
    outcome_classes: set[str] = set()
    for token in span:
        lower = token.lower_
        in_cause = any(s <= token.idx < e for s, e in cause_ranges)
        signals = word_roles(lower) or word_roles(token.lemma_.lower())
        negated = _negated(token) and lower not in _NEGATORS
        for feature in signals:
            role, cls = feature.split(":", 1)
            if role == "outcome" and negated:
                if cls == "failure":
                    roles["outcome"].add("averted")
                    outcome_classes.add("averted")
                continue
            if role == "cause" and cls == "omission" and negated:
                roles["cause"].add("diligence")
                cause_classes.add("diligence")
                continue
            if role == "cause" and lower == "no" and not in_cause:
                continue  # "no data was lost" is not an omission
            roles[role].add(cls)
            if role == "cause" and (in_cause or not cause_ranges):
                cause_classes.add(cls)
            if role == "outcome" and not in_cause:
                outcome_classes.add(cls)
        if in_cause and lower in _DILIGENCE and not negated:
            roles["cause"].add("diligence")
            cause_classes.add("diligence")
    features = {f"{role}:{cls}" for role, classes in roles.items() for cls in classes}
    root = span.root
    verbs = [root, *[c for c in root.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX")]]
    for verb in verbs:
        if verb.pos_ in ("VERB", "AUX") and verb.lemma_ not in ("be", "have"):
            features.add(f"verb:{verb.lemma_.lower()}")
        actor = _type_of(_subject(verb), span)
        if actor:
            features.add(f"actor:{actor}")
        obj = _type_of(_object(verb), span)
        if obj:
            features.add(f"object:{obj}")
    outcomes = roles["outcome"]
    polarity = "negative" if outcomes & _NEGATIVE_OUTCOMES else ("positive" if outcomes & {"success", "averted"}
                                                                   else None)
    if polarity:
        features.add(f"polarity:{polarity}")
    if causes:
        features.add("relation:causal")
        for c in cause_classes or roles["cause"]:
            for o in outcome_classes or outcomes:
                features.add(f"chain:{c}>{o}")
    return {
        "actions": sorted(roles["action"]),
        "causes": sorted(roles["cause"]),
        "outcomes": sorted(roles["outcome"]),
        "causal": bool(causes),
        "polarity": polarity,
        "extractor": "spacy",
        "features": sorted(features),
    }


class SpacyStructureExtractor:
    """Structures from the spaCy parse; the same features `hebbs index` stores with each proposition.

    spaCy is loaded on the first call, so an engine that never extracts pays nothing.
    """

    name = "spacy"

    def __init__(self, batch_size: int = config.SPACY_BATCH_SIZE) -> None:
        self.batch_size = batch_size

    def extract(self, texts: Sequence[str]) -> list[dict[str, Any]]:
        from engine.ingest.nlp import load

        nlp = load()
        out = []
        for doc in nlp.pipe(list(texts), batch_size=self.batch_size):
            sents = list(doc.sents)
            if not sents:
                out.append({"features": [], "extractor": "spacy"})
                continue
            parts = [span_structure(s) for s in sents]
            merged = parts[0] if len(parts) == 1 else _merge(parts)
            out.append(merged)
        return out


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {"extractor": "spacy"}
    for key in ("actions", "causes", "outcomes", "features"):
        merged[key] = sorted({v for p in parts for v in p.get(key, [])})
    merged["causal"] = any(p.get("causal") for p in parts)
    merged["polarity"] = next((p["polarity"] for p in parts if p.get("polarity")), None)
    return merged


def extractor_named(name: str | None) -> StructureExtractor:
    """The extractor a store was written with: `spacy` (documents indexed with `hebbs index`), else lexical."""
    if name == "spacy":
        return SpacyStructureExtractor()
    return LexicalStructureExtractor()
