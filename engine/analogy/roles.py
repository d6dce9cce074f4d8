"""Episode graphs from spaCy's dependency parse and discourse cues.

Events are verbs (and copular states, and nouns named as causes: "because of the storm"); negation is
read from `neg` children, "never", "no", "without", and negating verbs ("forgot to lock" is an unlocked
lock). Participants come from subjects (passive subjects are patients, `by` phrases agents), objects and
recipients, typed from entities, pronouns and a noun lexicon, and shared across events by head word or
pronoun so one actor stays one node. Relations come from subordinators (because, since, so, so that, to,
in order to, after, before, when), coordinations (and, so, but, then), sentence openers (as a result,
therefore, then, later), cause phrases (because of, due to) and cause verbs (caused, led to, prevented).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from engine.analogy import lexicon
from engine.analogy.episode_graph import Episode, Event, Participant

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

log = logging.getLogger(__name__)

CAUSE_VERBS = {"cause", "lead", "result", "trigger", "provoke", "produce", "spark", "bring", "mean"}
PREVENT_VERBS = {"prevent", "stop", "avert", "block", "spare"}
ENABLE_VERBS = {"enable", "allow", "let", "permit", "help", "empower"}
# Verbs that only frame the event in their complement: "decided to skip", "tried to fix".
_CAUSE_WORDS = {"because", "due", "thanks", "owing"}
FRAME_VERBS = {"decide", "try", "attempt", "manage", "choose", "seem", "continue", "keep", "begin", "start", "get",
               "happen", "opt", "go", "plan", "intend", "agree", "promise", "offer", "need", "have", "want",
               "hope", "wish", "aim", "tend", "use", "rush", "hurry", "bother", "dare"}
# Verbs that have someone do something: "made them rehearse", "had him redo it" (not "let": that enables).
_CAUSATIVE_VERBS = {"make", "have"}
# Verbs whose complement is something the subject aimed at: "wanted to win", "hoped the team would win".
GOAL_VERBS = {"want", "hope", "wish", "aim", "plan", "intend", "dream", "long", "try", "attempt", "promise", "vow",
              "pledge", "resolve"}
_SKIP_DEPS = {"aux", "auxpass", "amod", "compound", "prt"}
# Words that open a sentence and say how it relates to the one before: a contrast, or a result.
_CONTRAST_OPENERS = {"but", "however", "yet", "still", "nevertheless", "nonetheless", "anyway", "instead",
                     "unfortunately", "sadly"}
# A noun that names an earlier bad event ("the mistake", "this failure"): the most recent bad event.
_BAD_EVENT_NOUNS = {"mistake", "error", "failure", "problem", "accident", "crash", "trouble", "disaster", "loss",
                    "damage", "injury", "fall", "delay"}


class _Builder:
    """Collects one text's episode while walking its sentences in order."""

    def __init__(self) -> None:
        self.ep = Episode()
        self.by_token: dict[int, Event] = {}
        self.parts: dict[str, Participant] = {}
        self.recent: list[Participant] = []
        self.plural: set[str] = set()  # participants named by a plural noun: "they", not "he"
        self.gender: dict[str, str] = {}  # participant id -> "m" / "f", from a gendered noun, title or pronoun
        self.of_token: dict[int, Participant] = {}  # a word read once stays who it was read as
        self.speakers: set[str] = set()  # the teller and the told ("I", "we", "you"): no third-person pronoun's
        self.last_main: Event | None = None
        self.segments: list[tuple[str, int, int]] = []
        self.sent_no = 0  # the sentence being read
        self.goal_tokens: set[int] = set()  # complements of goal verbs: their events are goals
        self.attributive: set[str] = set()  # events that describe a noun ("no honey [to sell]"): never outcomes

    # --- events ----------------------------------------------------------------------------------------
    def event(self, lemma: str, token: Token, negated: bool, text: str, valence_from: Iterable[Token] = (),
              action: str | None = None) -> Event:
        lemma = lemma.lower()
        action = action or lexicon.action_class(lemma)
        # a success put off, skipped or forgotten is an omission (the lapse), not a failure: "put off fixing it",
        # "forgot to repair the fence" as "forgot to lock" or "did not test"; only "failed to fix" failed
        lapse = negated and action == "succeed" and _negating_complement(token) and \
            _lemma(token.head) not in ("fail", "stop", "cease")
        if negated and action == "enable" and lemma in ("let", "allow", "permit"):
            # "would not let her teacher listen", "never let her son cycle": a refusal (not "never made a profit")
            action, negated, folded = "refuse", False, True
        elif negated and action in lexicon.NEGATED_CLASS and not lapse:
            action, negated, folded = lexicon.NEGATED_CLASS[action], False, True
        elif negated and _negating_complement(token):  # "forgot to lock", "stopped taking": an omission
            action, negated, folded = "omit", False, True
        else:
            folded = False
        kind, sign = None, 0
        found = lexicon.verb_valence(lemma) if token.pos_ == "VERB" or _verb_tagged_noun(token) else \
            lexicon.valence(lemma)
        if found is None and token.lower_ != lemma:  # "was stuck" (lemma "stick")
            found = lexicon.valence(token.lower_, rated=token.pos_ != "VERB")
        for t in valence_from:
            if found is None:
                found = lexicon.valence(t.lemma_) or lexicon.valence(t.lower_)
            if found is None and any(c.lower_ == "too" for c in t.children):  # "too small", "too fast": excess
                found = ("failure", -1)
        if found is not None and not lapse:  # a lapse is no outcome of its own: what it leads to is
            kind, sign = found
        if (negated or folded) and sign:
            kind, sign = ("success" if sign < 0 else "failure"), -sign
        elif negated and not sign and _unable_or_lacking(token):  # "could not order", "there was no honey"
            kind, sign = "failure", -1
        ev = Event(f"e{len(self.ep.events)}", lemma, action, negated, len(self.ep.events), kind, sign,
                   f"not {text}" if folded and not text.startswith("not ") else text, self.sent_no,
                   "goal" if token.i in self.goal_tokens else "")
        if token.dep_ in ("relcl", "acl"):
            self.attributive.add(ev.id)
        self.ep.events.append(ev)
        self.by_token[token.i] = ev
        return ev

    def relate(self, kind: str, a: Event | None, b: Event | None) -> None:
        """Add a relation; an explicit one (causes, enables, ...) replaces a mere `precedes` between the pair."""
        if a is None or b is None or a is b:
            return
        if kind != "precedes":
            pair = {a.id, b.id}
            self.ep.relations = [r for r in self.ep.relations if not (r[0] == "precedes" and {r[1], r[2]} == pair)]
        if not any(r[1:] == (a.id, b.id) or r[1:] == (b.id, a.id) for r in self.ep.relations):
            self.ep.relations.append((kind, a.id, b.id))

    # --- participants ----------------------------------------------------------------------------------
    def participant(self, token: Token, bound: frozenset[str] = frozenset()) -> Participant | None:
        """The participant a word names; a pronoun the most recent compatible one not in `bound` (those the same
        event already holds: in "he told the director", "he" is not the director)."""
        lower = token.lower_
        if lower in ("which", "that", "this", "what", "who", "whom", "there", "here"):
            return None
        if (known := self.of_token.get(token.i)) is not None and known.id not in bound:
            # the subject of "She shrugs and says ..." is read again for "says": the same one, whatever was named
            self._touch(known)
            return known
        found = self._participant(token, bound)
        if found is not None:
            self.of_token[token.i] = found
        return found

    def _participant(self, token: Token, bound: frozenset[str]) -> Participant | None:
        lower = token.lower_
        if token.pos_ == "PRON":
            kind = lexicon.PRONOUN_TYPES.get(lower)
            if kind is None:
                return None
            gender = _PRONOUN_GENDER.get(lower)
            if lower in _SPEAKERS:  # "I", "we", "you": the teller and the told, never someone named before
                lower = _SPEAKERS[lower]
            else:
                found = self._antecedent(lower, kind, bound, gender)
                if found is None and kind == "person":  # "Nadia (GPE) said she ...": the name is a person
                    found = next((p for k, p in reversed(self.parts.items()) if k.startswith("ent:") and
                                  p.type in ("place", "organisation", "thing") and " " not in p.text), None)
                    if found is not None:
                        found.type = "person"
                if found is not None:
                    self._touch(found)
                    self._gendered(found, gender)
                    return found
            key, ptype, text = f"pron:{lower}", kind, lower
        elif token.pos_ == "NOUN" and token.text[:1].isupper() and f"ent:{lower}" in self.parts:
            # a name the tagger read as a common noun this once ("Ravi lent Sam his bike")
            key, ptype, text = f"ent:{lower}", "person", token.text
        else:
            # (`doc.ents` builds every entity span of the document on each read: look only when the token is in one)
            ent = next((e for e in token.doc.ents if e.start <= token.i < e.end), None) if token.ent_type else None
            if ent is not None:
                if ent.label_ in ("DATE", "TIME", "CARDINAL", "ORDINAL", "MONEY", "PERSON") or not _titled(ent):
                    key, text = f"ent:{ent.text.lower()}", ent.text
                    ptype = lexicon.ENTITY_LABEL_TYPES.get(ent.label_, "thing")
                else:  # "Nurse Okafor" (GPE), "Mr Novak" (ORG): a person, one participant with or without the title
                    key, text, ptype = f"ent:{_untitled(ent)}", ent.text, "person"
                if ent.label_ in ("DATE", "TIME", "CARDINAL", "ORDINAL", "MONEY", "PERCENT", "QUANTITY"):
                    return None
                if ptype == "person":
                    key = f"ent:{_untitled(ent)}"
            elif token.pos_ == "PROPN":  # a name the entity recogniser missed ("Priya wanted ...")
                key, text, ptype = f"ent:{_untitled(token.doc[token.i: token.i + 1])}", token.text, "person"
            else:
                lemma = token.lemma_.lower()
                ptype = lexicon.noun_type(lemma) or lexicon.noun_type(lower) or (
                    "activity" if token.tag_ == "VBG" or lower.endswith("ing") else "thing")
                key, text = f"noun:{lemma}", " ".join(t.text for t in token.subtree if t.dep_ in
                                                    ("compound", "amod", "poss") or t is token)[:40]
        found = self.parts.get(key)
        if found is None:
            found = self.parts[key] = Participant(f"p{len(self.ep.participants)}", ptype, text)
            self.ep.participants.append(found)
            if token.tag_ in ("NNS", "NNPS") or lower in ("we", "us"):
                self.plural.add(found.id)
            if key.startswith("pron:") and lower in _SPEAKERS.values():
                self.speakers.add(found.id)
        self._touch(found)
        if token.pos_ == "PRON":
            self._gendered(found, _PRONOUN_GENDER.get(token.lower_))
        elif found.type == "person":  # "her son", "the old woman", "Mrs Ivanova"
            self._gendered(found, _word_gender([t.lower_ for t in token.subtree if t.dep_ in ("compound", "amod")
                                                or t is token] + [token.lemma_.lower()] +
                                               ([token.doc[token.i - 1].lower_] if token.i > 0 and
                                                token.pos_ == "PROPN" else [])))
        for c in token.children:  # "Abdul, the office manager": "the manager" is Abdul from here on
            if c.dep_ == "appos" and c.pos_ == "NOUN":
                self.parts.setdefault(f"noun:{c.lemma_.lower()}", found)
                self._gendered(found, _word_gender([c.lemma_.lower()]))
        return found

    def _gendered(self, p: Participant, gender: str | None) -> None:
        """Learn a participant's gender (the first evidence stands): from then on a pronoun of the other gender
        looks past it ("Maria accused her son ... he" is the son, "she" Maria)."""
        if gender is not None and p.type == "person" and p.id not in self.plural:
            self.gender.setdefault(p.id, gender)

    def owners(self, ev: Event, tokens: Iterable[Token]) -> None:
        """Read the owners the event's participants' possessive pronouns name, after the event's subject is known,
        for the gender they give, without roles: "Maria accused her son": "her" is the subject's (not the son's), so
        Maria is a woman."""
        agent_id = next((p for e, r, p in self.ep.roles if e == ev.id and r == "agent"), None)
        agent = next((p for p in self.ep.participants if p.id == agent_id), None)
        for token in tokens:
            for c in token.children:
                if c.dep_ != "poss" or (gender := _PRONOUN_GENDER.get(c.lower_)) is None:
                    continue
                held = self.parts.get(f"noun:{token.lemma_.lower()}")
                fits = [p for p in reversed(self.recent) if p.type == "person" and p.id not in self.plural and
                        p is not held and self.gender.get(p.id, gender) == gender]
                # the clause's doer, else the only one it can be ("The plumber tells Mrs Ivanova that her pipe is
                # cracked" says nothing of the plumber)
                owner = agent if agent in fits else fits[0] if len(fits) == 1 else None
                if owner is not None:
                    self._gendered(owner, gender)

    def _antecedent(self, pronoun: str, kind: str, bound: frozenset[str], gender: str | None = None
                    ) -> Participant | None:
        """The most recent participant a third-person pronoun can point to: "he" / "she" / "it" not to a plural
        noun ("he hired pickers. ... he wanted" is not the pickers); "they" to a plural one first ("the apples
        ... they"), then a group or organisation ("the choir ... its new conductor ... they won"), a person last;
        "he" / "she" never to someone known to be of the other gender."""
        singular = pronoun in _SINGULAR_PRONOUNS
        recent = [p for p in reversed(self.recent) if p.id not in bound and p.id not in self.speakers and
                  (gender is None or self.gender.get(p.id, gender) == gender)]  # ("she" is never the teller)
        known = [p for p in recent if gender is not None and self.gender.get(p.id) == gender and
                 _compatible(kind, p.type) and p.text.lower() not in _PRONOUN_GENDER]  # not an unresolved "him"
        recent = known or recent  # "The plumber tells Mrs Ivanova ... She shrugs": the one known to be a she
        if not singular and kind == "group":  # "they": a plural first, then a group, a single person last
            found = next((p for p in recent if p.id in self.plural and p.type != "activity"), None) or next(
                (p for p in recent if p.type in ("group", "organisation")), None)
            if found is not None:
                return found
        return next((p for p in recent if _compatible(kind, p.type) and not (singular and p.id in self.plural)), None)

    def _touch(self, p: Participant) -> None:
        if p in self.recent:
            self.recent.remove(p)
        self.recent.append(p)

    def role(self, ev: Event, role: str, token: Token | None, doer: Participant | None = None) -> None:
        """Give `ev` a participant in `role`; `doer`, the clause's subject read ahead, is one an object pronoun
        cannot be."""
        if token is None:
            return
        bound = frozenset(r[2] for r in self.ep.roles if r[0] == ev.id)
        if doer is not None and token.pos_ == "PRON" and token.lower_ not in _REFLEXIVES:
            bound |= {doer.id}
        p = self.participant(token, bound)
        if p is not None and p.id not in bound:
            self.ep.roles.append((ev.id, role, p.id))
        for conj in token.children:  # "the chef and the waiter" -> both
            if conj.dep_ == "conj" and conj.pos_ in ("NOUN", "PROPN", "PRON"):
                self.role(ev, role, conj, doer)


_REFLEXIVES = {"himself", "herself", "themselves", "itself", "myself", "yourself", "ourselves", "yourselves"}
_OBJECT_PRONOUNS = {"him", "her", "them", "me", "us", "you"}
# verbs whose "for" says what was sought or awaited, not for whom it was done ("waited for her", "asked for help")
_NOT_BENEFACTIVE = {"wait", "look", "search", "hope", "pray", "ask", "call", "apply", "vote", "head", "leave",
                    "care", "fall", "stand", "run", "go", "come", "blame", "punish", "thank", "praise", "pay",
                    "work", "play", "compete", "fight", "send", "sell", "deliver", "return", "charge", "owe",
                    "bill", "fine"}


def _object_pronoun(verb: Token) -> bool:
    """Whether an object of `verb` (direct, dative, or "to" / "for" someone) is a personal pronoun."""
    for c in verb.children:
        if c.dep_ in ("dobj", "dative") and c.lower_ in _OBJECT_PRONOUNS:
            return True
        if c.dep_ == "prep" and c.lower_ in ("to", "for") and any(
                g.dep_ == "pobj" and g.lower_ in _OBJECT_PRONOUNS for g in c.children):
            return True
    return False


def _bad_noun(noun: Token) -> bool:
    """A noun that says something went wrong ("mistake", "problems", "a hitch"), as the object of "without"."""
    found = lexicon.valence(noun.lemma_.lower()) or lexicon.valence(noun.lower_)
    return found is not None and found[1] < 0 and lexicon.action_class(noun.lemma_.lower()) != "omit"


def _benefactive(verb: Token, ev: Event) -> Token | None:
    """The one an act was done for ("repaired the roof for her", "cooked dinner for the neighbours"): a person,
    not the doer; only acts whose own class says less than a favour (making, fixing, giving, ...)."""
    if ev.negated or ev.mode or ev.action not in _FAVOUR_CLASSES or _lemma(verb) in _NOT_BENEFACTIVE:
        return None
    for c in verb.children:
        if c.dep_ == "prep" and c.lower_ == "for" and c.i > verb.i:
            pobj = next((g for g in c.children if g.dep_ == "pobj"), None)
            if pobj is None or pobj.lower_ in _REFLEXIVES:
                continue
            if pobj.pos_ == "PRON":
                person = lexicon.PRONOUN_TYPES.get(pobj.lower_) in ("person", "group") and pobj.lower_ not in (
                    "i", "we", "it", "nobody")
            else:
                # a name is someone unless the tagger says it names something else: "for Saturday", "for
                # Christmas", "for Oslo" are a day, a feast and a place (structure version 15)
                person = (pobj.ent_type_ == "PERSON" or (pobj.pos_ == "PROPN" and not pobj.ent_type_) or
                          lexicon.noun_type(pobj.lemma_.lower()) in ("person", "group"))
            if person:
                return pobj
    return None


_FAVOUR_CLASSES = frozenset({"other", "build", "change", "succeed", "give", "take", "prepare"})


def _titled(ent: Span) -> bool:
    """A name with a person's title in it or just before it: "Dr. Okafor", "Nurse Okafor", "Mr Novak"."""
    first = ent[0]
    before = ent.doc[first.i - 1] if first.i > 0 else None
    return any(t.lower_.rstrip(".") in lexicon.PERSON_TITLES for t in (*ent[:-1], *([before] if before is not None
                                                                                   else [])))


def _untitled(ent: Span) -> str:
    """A person's name without its title, lower case: "Mr. Brennan" and "Brennan" are one participant."""
    words = [t.lower_ for t in ent if t.lower_.rstrip(".") not in lexicon.PERSON_TITLES and t.lower_ not in (".", "'s")]
    return " ".join(words) or ent.text.lower()


def _manner_class(verb: Token) -> str | None:
    """The class an act's manner gives it: "in a hurry" / "hastily" a rush, "anyway" an act against advice, an
    act someone decided or meant to do "later" a postponement."""
    for c in verb.children:
        if c.dep_ == "advmod" and c.lower_ in lexicon.HASTE_ADVERBS:
            return "rush"
        if c.dep_ == "advmod" and c.lower_ in lexicon.DEFIANCE_ADVERBS and c.i > verb.i:
            return "ignore_advice"
        if c.dep_ in ("advmod", "npadvmod") and c.lower_ in lexicon.DEFERRAL_ADVERBS and c.i > verb.i and (
                verb.dep_ == "xcomp" or any(a.dep_ == "aux" and a.lower_ in ("will", "would", "'ll", "'d", "shall")
                                            for a in verb.children)):
            return "omit"  # "decided to deal with it later", "would sort it out tomorrow": put off
        if c.dep_ == "prep" and c.lower_ == "in" and any(g.dep_ == "pobj" and g.lemma_.lower() in lexicon.HASTE_NOUNS
                                                          for g in c.children):
            return "rush"
    return None


def _acts_for(verb: Token) -> bool:
    """ "turned off the limiter [to go faster]", "sold the car [to pay the rent]": an act on an object whose
    "to" complement is what it was for (not "asked her to help", "told him to wait", "wanted it to work")."""
    lemma = verb.lemma_.lower()
    return any(c.dep_ == "dobj" for c in verb.children) and lemma not in FRAME_VERBS | GOAL_VERBS | ENABLE_VERBS \
        and lexicon.action_class(lemma) not in ("communicate", "warn", "enable", "want", "decide", "cause")


def _evidential(verb: Token) -> bool:
    """ "was found to be too small", "turned out to be a disaster", "proved to be wrong": the verb only says how
    the state came to be known; its complement is the event."""
    lemma = verb.lemma_.lower()
    turned_out = lemma == "turn" and any(c.dep_ == "prt" and c.lower_ == "out" for c in verb.children)
    reported = lemma in ("find", "show", "believe", "say", "know") and _passive(verb)
    return lemma in ("seem", "appear", "prove") or turned_out or reported


def _light_verb_class(lemma: str, objs: list[Token]) -> str | None:
    """The class of a light verb's event from its object, when the verb's own says nothing: "had problems",
    "made a mistake", "did her training runs" (the object's modifiers first: "training"), "did nothing" (an
    omission once negated). None: the verb's own class."""
    if lemma not in lexicon.LIGHT_VERBS or (lemma != "do" and lexicon.action_class(lemma) != "other"):
        return None
    for obj in objs[:1]:
        for t in [*(c for c in obj.children if c.dep_ == "compound" and c.pos_ in ("NOUN", "VERB")), obj]:
            if (found := lexicon.action_class(t.lemma_)) != "other":
                return found
    return "prepare" if lemma == "do" else None  # doing (something) is acting; not doing it, an omission


_COSTS = {"cost", "costs", "spending", "expense", "expenses", "bill", "bills", "price", "prices", "overhead",
          "overheads", "outgoings", "fee", "fees", "rent"}


def _someone(token: Token) -> bool:
    """A word for a person, a group or an animal (not a thing): "him", "the children", "Ola", "his goalkeeper"."""
    if token.pos_ == "PRON":
        return lexicon.PRONOUN_TYPES.get(token.lower_) in ("person", "group")
    return token.pos_ == "PROPN" or lexicon.noun_type(token.lemma_.lower()) in ("person", "group", "animal")


def _thing_subject(verb: Token) -> bool:
    """The verb's active subject is a thing or an event, not someone: "the rock fall", "the storm", "the machine" (not
    "she", "the team", a name, a place that stands for the people in it, "it", which may be a firm)."""
    subj, role = _subject(verb)
    if subj is None or role != "agent" or subj.ent_type_ or subj.pos_ != "NOUN":
        return False
    lemma = subj.lemma_.lower()
    kind = lexicon.noun_type(lemma)
    # a noun WordNet does not type that names a doer ("the builder", "the organiser") is taken for someone
    return kind in ("thing", "artefact") or (kind is None and not lemma.endswith(("er", "or", "ist", "ian")))


_LESS = {"less", "fewer", "half", "lower"}


def _diminished(verb: Token) -> bool:
    """An act told as less of it than before: "earned less than ever", "sold fewer cakes", "was selling half as
    much as before" (the amount is its object or a modifier of the verb)."""
    for c in verb.children:
        if c.dep_ == "dobj" and (c.lower_ in _LESS or any(g.dep_ == "amod" and g.lower_ in _LESS for g in c.children)):
            return True
        if c.dep_ == "advmod" and c.lower_ in ("much", "many", "less") and (
                c.lower_ == "less" or any(g.lower_ in _LESS for g in c.children)):
            return True
    return False


def _full_of(state: Token) -> list[Token]:
    """What a state is full of carries its valence: "was full of mistakes", "is full of holes"."""
    if state.lower_ != "full":
        return []
    return [g for c in state.children if c.dep_ == "prep" and c.lower_ == "of" for g in c.children
            if g.dep_ == "pobj"]


def _unable_or_lacking(token: Token) -> bool:
    """A negated "can" ("could not order", "cannot walk") or existence ("there was no honey"): something
    someone needed did not happen, whatever the verb."""
    kids = list(token.children)
    if any(c.dep_ == "expl" for c in kids):
        return True
    # a `neg`: "nobody could compete" says who did not, not that something failed
    return any(c.dep_ == "neg" for c in kids) and any(c.dep_ == "aux" and c.lower_ in ("can", "could", "ca")
                                                       for c in kids)


# First and second person: one participant each, whoever was named before ("our drummer kept telling me").
_SPEAKERS = {"i": "i", "me": "i", "myself": "i", "we": "we", "us": "we", "ourselves": "we", "you": "you",
             "yourself": "you"}
_SINGULAR_PRONOUNS = {"he", "him", "she", "her", "it", "himself", "herself", "itself"}
_PRONOUN_GENDER = {"he": "m", "him": "m", "himself": "m", "his": "m", "she": "f", "her": "f", "herself": "f",
                   "hers": "f"}


def _word_gender(words: Iterable[str]) -> str | None:
    """The gender a person's noun or title says ("son", "aunt", "Mrs"), if any."""
    for w in words:
        w = w.rstrip(".")
        if w in lexicon.MALE_WORDS:
            return "m"
        if w in lexicon.FEMALE_WORDS:
            return "f"
    return None


def _compatible(pronoun_type: str, participant_type: str) -> bool:
    if pronoun_type == "person":
        return participant_type == "person"
    if pronoun_type == "group":
        return participant_type in ("group", "organisation", "person")
    return participant_type not in ("person", "group", "activity")


def _negated(token: Token) -> bool:
    for c in token.children:
        if c.dep_ == "neg" or c.lower_ in ("never",):
            return True
        if c.dep_ in ("nsubj", "nsubjpass", "dobj", "attr") and (
            c.lower_ in ("nobody", "nothing", "none", "no one") or any(d.lower_ == "no" for d in c.children)
        ):
            return True
        if c.dep_ in ("nsubj", "nsubjpass") and any(d.dep_ == "neg" and c in (d.head, d.head.head)
                                                    for d in c.subtree):
            return True  # "not one customer complained", "not a single plant died"
    head = token.head
    # "without checking", "instead of testing"
    if token.dep_ == "pcomp" and head.lower_ in ("without", "instead"):
        return True
    if head.dep_ == "prep" and head.lower_ == "of" and head.head.lower_ == "instead":
        return True
    # "forgot to lock", "failed to check", "refused to pay", "put off fixing" (not "was skipped to hit the date")
    # "stopped checking the oil" did not check it any more; "stopped to check" did check
    return _negating_complement(token) and _lemma(head) not in ("prevent", "avoid") and not _passive(head) and not (
        _lemma(head) == "stop" and token.tag_ != "VBG")


def _negating_complement(token: Token) -> bool:
    """The complement of a verb that says it did not happen: "forgot [to lock]", "put off [fixing] it" (the small
    model hangs a phrasal verb's gerund as an adverbial clause)."""
    head = token.head
    if head.i == token.i or head.pos_ != "VERB":
        return False
    lemma = _lemma(head)
    return lemma in lexicon.NEGATING_VERBS and (token.dep_ == "xcomp" or (
        token.dep_ == "advcl" and token.tag_ == "VBG" and "_" in lemma and token.i > head.i))


def _passive(verb: Token) -> bool:
    return any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children)


def _subject(verb: Token) -> tuple[Token | None, str]:
    for c in verb.children:
        if c.dep_ in ("nsubj", "csubj"):
            return c, "agent"
        if c.dep_ == "nsubjpass":
            return c, "patient"
    if verb.dep_ in ("conj", "xcomp", "advcl") and verb.head.i != verb.i:
        if verb.dep_ == "advcl" and not any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children):
            return None, "agent"
        return _subject(verb.head)
    return None, "agent"


def _marks(token: Token) -> set[str]:
    found = set()
    for c in token.children:
        if c.dep_ in ("mark", "advmod", "cc", "prep", "aux") and c.i < token.i:
            found.add(c.lower_)
            # "so that", "in order to", "as soon as"
            nxt = [t.lower_ for t in token.doc[c.i: min(c.i + 3, token.i)]]
            found.add(" ".join(nxt[:2]))
            found.add(" ".join(nxt[:3]))
    return found


def _is_event_head(t: Token) -> bool:
    if t.dep_ in _SKIP_DEPS:
        return False
    if t.pos_ == "VERB" or _verb_tagged_noun(t):
        return True
    # copular states: "the launch was a disaster", "the soup was cold", "the shift is behind"
    return t.pos_ == "AUX" and t.dep_ in ("ROOT", "conj", "advcl", "ccomp", "xcomp") and _state_of(t) is not None


def _state_of(t: Token) -> Token | None:
    """What a copula says its subject is: "was [cold]", "was [a disaster]", "is [behind] on the orders"."""
    return next((c for c in t.children if c.dep_ in ("acomp", "attr") or
                 (c.dep_ == "advmod" and c.lower_ in _STATE_ADVERBS)), None)


_STATE_ADVERBS = {"behind", "ahead", "late", "early", "away", "over", "down", "out", "back"}
# Verbs of becoming: "went soft", "turned sour", "grew weak", "got worse", "fell ill" tell the state reached,
# not a movement or a growth.
_BECOME_VERBS = {"become", "go", "turn", "grow", "get", "fall", "come", "wear", "run"}
_BECOME_ADVERBS = {"ill", "sick", "apart", "wrong", "bad", "flat", "short", "dry", "silent", "quiet", "behind"}
# Where a competitor ended: "finished last" is a failure, "came first" a success.
_PLACED = {"finish", "come", "end", "place"}
_PLACES = {"last": ("failure", -1), "first": ("success", 1), "top": ("success", 1), "bottom": ("failure", -1)}


def _became(t: Token, lemma: str) -> Token | None:
    """The state a verb of becoming says its subject reached ("went [dark]", "fell [ill]"); None otherwise."""
    if lemma not in _BECOME_VERBS:
        return None
    return next((c for c in t.children if (c.dep_ == "acomp" and c.pos_ == "ADJ") or
                 (c.dep_ in ("advmod", "acomp", "oprd") and c.lower_ in _BECOME_ADVERBS)), None)


def _placed(t: Token, lemma: str) -> tuple[str, int] | None:
    """ "finished last", "came first": the place a competitor ended in, as a valence."""
    if lemma not in _PLACED:
        return None
    return next((_PLACES[c.lower_] for c in t.children if c.dep_ in ("advmod", "npadvmod", "acomp", "oprd")
                 and c.lower_ in _PLACES), None)


def _verb_tagged_noun(t: Token) -> bool:
    """A verb the small model tagged as a noun in a coordination ("he takes a corner, and a pallet [falls]"):
    a conjunct of a verb, inflected as a verb, whose lemma the lexicon knows as a verb."""
    if t.pos_ != "NOUN" or t.tag_ != "NNS" or not lexicon.is_verb(t.lemma_.lower()):
        return False
    if t.dep_ == "conj" and t.head.pos_ == "VERB":
        return True
    # a present-tense sentence read as one noun phrase ("the pipe bursts in the night": "pipe" a compound of
    # "bursts"): the root of a sentence with no verb, after a singular noun that can be its subject
    return t.dep_ == "ROOT" and _run_on_subject(t) is not None and \
        any(c.dep_ in ("prep", "advmod", "npadvmod", "prt") for c in t.children) and \
        not any(w.pos_ in ("VERB", "AUX") for w in t.sent)  # "the team meetings." is a heading, not an event


def _run_on_subject(t: Token) -> Token | None:
    """The subject of a verb misread as the head noun of its own subject: "the pipe [bursts]" -> "pipe"."""
    return next((c for c in t.children if c.dep_ == "compound" and c.i == t.i - 1 and c.tag_ in ("NN", "NNP")),
                None)


def _nominal(b: _Builder, noun: Token) -> Event:
    """An event named by a noun ("the storm", "a delay"), with the noun's modifiers for valence."""
    if noun.i in b.by_token:
        return b.by_token[noun.i]
    earlier = _earlier_event(b, noun)
    if earlier is not None:  # "the crash", "that mistake": an event told before, not a new one
        b.by_token[noun.i] = earlier
        return earlier
    negated = any(c.lower_ == "no" or c.dep_ == "neg" for c in noun.children)
    ev = b.event(noun.lemma_, noun, negated, noun.text, [c for c in noun.children if c.dep_ in ("amod", "compound")])
    for c in noun.children:  # "the failure of the launch" / "the team's mistake"
        if c.dep_ == "poss":
            b.role(ev, "agent", c)
    return ev


def _earlier_event(b: _Builder, noun: Token) -> Event | None:
    """The earlier event a definite noun phrase names: the same lemma ("crashed" ... "the crash"), or for a
    noun such as "the mistake" the most recent bad event of an earlier sentence."""
    if not any(c.dep_ in ("det", "poss") and c.lower_ in ("the", "this", "that", "his", "her", "their", "its")
               for c in noun.children):
        return None
    lemma = noun.lemma_.lower()
    told = [e for e in b.ep.events if e.sentence < b.sent_no]
    same = [e for e in told if e.lemma == lemma or lexicon.verb_of(lemma) == e.lemma]
    if same:
        return same[-1]
    if lemma in _BAD_EVENT_NOUNS:
        bad = [e for e in told if e.sign < 0]
        return bad[-1] if bad else None
    return None


_DEADLINE_WORDS = {"due", "supposed", "meant", "expected"}


def _deadline(t: Token) -> Token | None:
    """The verb of "was due / supposed / meant / expected to [open]": what something or someone was to do."""
    state = t if t.lower_ in _DEADLINE_WORDS else next(
        (c for c in t.children if c.lower_ in _DEADLINE_WORDS and c.dep_ in ("acomp", "attr", "xcomp")), None)
    if state is None or (state is not t and t.lemma_ != "be"):
        return None
    return next((c for c in state.children if c.dep_ == "xcomp" and c.pos_ in ("VERB", "AUX")), None)


_TIME_NOUNS = {"time", "day", "week", "month", "year", "hour", "minute", "summer", "winter", "spring", "autumn",
               "weekend", "night", "evening", "morning", "afternoon", "season", "term", "semester", "fortnight"}


def _time_budget(t: Token) -> Token | None:
    """The verb of "had all summer / two days / three weeks [to paint]": a time given for something is a goal
    (what the time was for), like a deadline."""
    if t.lemma_ != "have":
        return None
    for obj in (c for c in t.children if c.dep_ == "dobj" and c.lemma_.lower() in _TIME_NOUNS):
        for c in [*obj.children, *t.children]:
            if c.dep_ in ("relcl", "acl", "xcomp") and c.pos_ == "VERB" and c.i > obj.i and \
                    any(a.dep_ == "aux" and a.lower_ == "to" for a in c.children):
                return c
    return None


# Adjectives that frame their complement as something the subject aims at: "was determined to finish".
GOAL_ADJECTIVES = {"eager", "keen", "determined", "desperate", "anxious", "impatient", "resolved", "set", "bent"}
# Verbs of necessity: "needed to finish", "had to deliver the cake by noon" (with a deadline), "was required to".
_NEED_VERBS = {"need", "require"}
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "noon", "midnight",
             "tonight", "tomorrow", "dawn", "christmas", "easter", "deadline"}


def _goal_adjective(t: Token) -> Token | None:
    """The complement of a copula with a goal adjective: "was determined [to win]", "were eager [to leave]"."""
    if t.lemma_ != "be":
        return None
    for a in t.children:
        if a.dep_ == "acomp" and a.lower_ in GOAL_ADJECTIVES:
            return next((c for c in a.children if c.dep_ == "xcomp" and c.pos_ in ("VERB", "AUX")), None)
    return None


def _by_deadline(t: Token) -> bool:
    """A time something was to be done by: "by Friday", "by the end of the month", "before the holiday weekend",
    "in time for the wedding", "before noon" (not "by the river", "before the storm hit")."""
    for c in t.children:
        if c.dep_ not in ("prep", "agent"):  # a passive's "by Friday" is parsed as its agent
            continue
        if c.lower_ == "in" and any(g.lower_ == "time" and any(h.lower_ == "for" for h in g.children)
                                    for g in c.children):
            return True
        if c.lower_ not in ("by", "before"):
            continue
        for g in c.children:
            if g.dep_ != "pobj":
                continue
            if g.ent_type_ in ("DATE", "TIME") or g.lower_ in _WEEKDAYS or g.lemma_.lower() in _TIME_NOUNS or (
                    g.lower_ == "end" and any(h.lower_ == "of" for h in g.children)):
                return True
    return False


def _necessity_goal(t: Token) -> Token | None:
    """What a necessity makes a goal: "needed [to finish] the report", "had [to deliver] the cake by noon" (a
    necessity with a deadline; "had to be dug up" alone is what happened next, no goal), "the dress was [needed]
    by Friday" and "needed the money by March" (the need itself, like "wanted honey")."""
    lemma = _base(t)
    comp = next((c for c in t.children if c.dep_ == "xcomp" and c.pos_ in ("VERB", "AUX") and c.i > t.i and
                 any(a.dep_ == "aux" and a.lower_ == "to" for a in c.children)), None)
    if lemma in _NEED_VERBS and not _passive(t) and comp is not None:
        return comp
    if lemma == "have" and comp is not None and (_by_deadline(comp) or _by_deadline(t)):
        return comp
    if lemma in _NEED_VERBS and comp is None and _by_deadline(t):
        return t
    return None


def _goal_complement(t: Token) -> Token | None:
    """The complement of a goal verb: "wanted [to win]", "wanted his team [to win]", "hoped [it would work]"."""
    if _base(t) not in GOAL_VERBS:
        return None
    for c in t.children:
        if c.dep_ in ("xcomp", "ccomp") and c.pos_ in ("VERB", "AUX") and c.i > t.i:
            return c
    return None


_VOWELS = set("aeiou")


def _base(t: Token) -> str:
    """A token's lemma, with the small model's clipped lemmas of verbs in a silent e mended: "hoped" is not
    "hop", "dined" not "din" (a one-syllable stem ending in one vowel and one consonant doubles it before
    -ed/-ing: "hopped", "hopping"; so an undoubled form is the stem with its e)."""
    lemma, lower = t.lemma_.lower(), t.lower_
    if t.pos_ == "VERB" and lower in (lemma + "ed", lemma + "ing") and len(lemma) >= 3 and lemma[-1] not in _VOWELS \
            and lemma[-1] not in "wxy" and lemma[-2] in _VOWELS and lemma[-3] not in _VOWELS \
            and sum(1 for n, c in enumerate(lemma) if c in _VOWELS and (n == 0 or lemma[n - 1] not in _VOWELS)) == 1:
        return lemma + "e"
    return lemma


def _lemma(t: Token) -> str:
    """A verb's lemma, as a phrasal verb when the lexicon knows one ("put off", "look after")."""
    lemma = _base(t)
    for c in t.children:
        if (c.dep_ == "prt" or (c.dep_ == "prep" and c.i == t.i + 1)) and \
                lexicon.action_class(phrasal := f"{lemma}_{c.lower_}") != "other" and not (
                    phrasal in lexicon.INTRANSITIVE_PHRASALS and any(g.dep_ == "pobj" for g in c.children)):
            return phrasal
    return lemma


def _build_sentence(b: _Builder, sent: Span) -> None:
    for t in sent:  # owners named in the sentence, before its pronouns are read: "Tom's coach warned him"
        if t.dep_ == "poss" and t.pos_ == "PROPN":
            b.participant(t)
    heads = [t for t in sent if _is_event_head(t)]
    goal_verbs: dict[Token, Token] = {}
    for t in heads:
        comp = _goal_complement(t)
        if comp is not None:
            b.goal_tokens.add(comp.i)
            goal_verbs[t] = comp
        elif (due := _deadline(t) or _time_budget(t) or _goal_adjective(t)) is not None:
            b.goal_tokens.add(due.i)  # "was due to reopen", "had a week to write", "was determined to finish"
            goal_verbs[t] = due
        elif t.dep_ == "xcomp" and t.head.pos_ == "ADJ" and t.head.lower_ in GOAL_ADJECTIVES and t.i > t.head.i:
            b.goal_tokens.add(t.i)  # "was determined to finish", parsed with the adjective as the root
        elif (need := _necessity_goal(t)) is not None:
            b.goal_tokens.add(need.i)
            if need is not t:  # "needed to finish": the complement is the goal; "was needed by Friday": the need
                goal_verbs[t] = need
        elif _base(t) in GOAL_VERBS and any(c.dep_ == "dobj" for c in t.children):
            b.goal_tokens.add(t.i)  # "I wanted honey from my hives": the wanting is the goal
    sent_events: list[Event] = []
    framed: list[tuple[Token, Token]] = [(t, c) for t, c in goal_verbs.items()]  # (frame verb, its complement)
    for t in heads:
        lemma = _lemma(t)
        if t in goal_verbs:  # the goal verb frames its complement, which becomes a goal event
            continue
        # frame verbs and cause/prevent/enable verbs with a complement are relations, not events
        comp = next((c for c in t.children if (c.dep_ == "xcomp" or _negating_complement(c)) and
                     c.pos_ in ("VERB", "AUX")), None)
        framing = lemma in FRAME_VERBS or lemma in lexicon.NEGATING_VERBS
        if comp is None and lemma in _CAUSATIVE_VERBS and not _passive(t):
            # "the conductor made them rehearse", "had them practise": the causative frames what was done (the
            # bare infinitive with its own subject; the small model hangs it as a clausal complement)
            comp = next((c for c in t.children if c.dep_ == "ccomp" and c.tag_ == "VB" and c.i > t.i and
                         any(g.dep_ == "nsubj" for g in c.children) and lexicon.noun_type(c.lemma_) != "person"),
                        None)  # ("made him captain": a role given, the noun read as a verb)
            framing = comp is not None
        if comp is not None and (framing and (lemma != "stop" or comp.tag_ == "VBG") and not _passive(t)
                                 or _evidential(t)):
            # ("testing was skipped [to hit the date]": a purpose, not what was skipped)
            framed.append((t, comp))
            continue
        if (lemma in CAUSE_VERBS or lemma in PREVENT_VERBS) and _cause_verb(b, t):
            continue
        state = _state_of(t) if lemma == "be" or t.pos_ == "AUX" else _became(t, lemma)
        if state is not None:
            ev = b.event(state.lemma_, t, _negated(t), f"{t.text} {state.text}",
                         [state, *(c for c in state.children if c.dep_ in ("advmod", "amod", "neg", "npadvmod")),
                          *_full_of(state)])
        else:
            objs = [c for c in t.children if c.dep_ in ("dobj", "attr", "oprd", "acomp") or
                    (c.dep_ == "nsubjpass" and lemma in lexicon.LIGHT_VERBS)]
            # (a light verb's passive subject is what was had or made: "no mistakes were made", "no harm was done")
            carriers: list[Token] = []
            if lemma in lexicon.LIGHT_VERBS:  # "had problems"; "got a poor mark" (the object's modifier)
                carriers += objs + [m for o in objs for m in o.children if m.dep_ == "amod"]
            carriers += [c for c in t.children if c.dep_ in ("advmod", "acomp", "oprd")]
            if lemma in lexicon.INVERTING_VERBS:
                carriers = []
            ev = b.event(lemma, t, _negated(t), t.text, carriers, _light_verb_class(lemma, objs))
            manner = _manner_class(t) if not ev.negated else None
            if manner == "omit" and ev.action not in lexicon.GENERIC_CLASSES:
                # an act of any class put off for later is not done now: "decided to fix it later" as "to deal
                # with it later"; no outcome of its own (a fix meant for later is no success yet)
                ev.action, ev.valence, ev.sign = "omit", None, 0
            elif ev.action in lexicon.GENERIC_CLASSES and manner is not None:
                ev.action = manner  # "painted the fence in a hurry": the hurry is what the story is about
            if lemma == "keep" and not ev.negated and any(
                    c.dep_ in ("prep", "advmod", "prt") and c.lower_ in ("out", "from", "away") for c in t.children) \
                    and (kept := next((c for c in t.children if c.dep_ == "dobj"), None)) is not None:
                # "kept his goalkeeper out of the matches", "kept the children away from the river": not letting
                # someone (a refusal, as "never let her son cycle"); keeping a thing out prevents it
                ev.action = "refuse" if _someone(kept) else "prevent"
            if (placed := _placed(t, lemma)) is not None:  # "finished last": the race was lost
                ev.valence, ev.sign = placed
                ev.action = "fail" if ev.sign < 0 else "succeed"
            if ev.action == "omit" and not ev.negated and not ev.text.startswith("not ") and manner is None and \
                    any(c.dep_ == "dobj" and c.lemma_.lower() in _COSTS for c in t.children):
                # "cut costs", "cut the heating bill": a saving, not an omission ("cut corners", "cut the checks")
                ev.action, ev.valence, ev.sign = "decrease", "gain", 1
            elif ev.action == "omit" and not ev.negated and not ev.text.startswith("not ") and manner is None and \
                    _thing_subject(t):
                # only someone omits: "a rock fall cut the line", "the storm delayed the ferry" damaged or set back,
                # "prices dropped" went down
                transitive = any(c.dep_ == "dobj" for c in t.children)
                ev.action = "harm" if transitive else "decrease"
                if transitive and not ev.sign:
                    ev.valence, ev.sign = "harm", -1
            if ev.sign > 0 and not ev.negated and _diminished(t):  # "earned less than ever": a gain that shrank
                ev.action, ev.valence, ev.sign = "decrease", "loss", -1
            if lemma in lexicon.INVERTING_VERBS and ev.sign == 0:
                bad = any((lexicon.valence(o.lemma_) or ("", 0))[1] < 0 for o in objs)
                if bad:
                    ev.valence, ev.sign = ("success", 1) if not ev.negated else ("failure", -1)
        subj, srole = _subject(t)  # read last, so a later pronoun prefers the subject (centering)
        if subj is None and t.dep_ == "ROOT" and _verb_tagged_noun(t):  # "the pipe bursts"
            subj, srole = _run_on_subject(t), "agent"
        if subj is None and t.i in b.goal_tokens:  # "Priya wanted to launch": Priya launches
            subj, srole = _subject(t.head)
        # an object pronoun is never its own clause's subject ("the woman taught her": not the woman): the subject
        # is known before such an object is read (a subject of the clause's own; one taken from the clause above may
        # be the object's: "asked a woman to show her")
        doer = b.participant(subj) if subj is not None and subj.head.i == t.i and _object_pronoun(t) else None
        if _benefactive(t, ev) is not None:  # "repaired the roof for her", "cooked dinner for them": a favour
            ev.action = "help"
        for c in t.children:
            if c.dep_ == "dobj":
                b.role(ev, "patient", c, doer)
            elif c.dep_ == "dative":
                b.role(ev, "recipient", c, doer)
            elif c.dep_ == "agent":
                b.role(ev, "agent", next((g for g in c.children if g.dep_ == "pobj"), None))
            elif c.dep_ == "prep" and c.lower_ in ("to", "for") and ev.action in ("give", "help", "communicate"):
                b.role(ev, "recipient", next((g for g in c.children if g.dep_ == "pobj"), None), doer)
        b.role(ev, srole, subj)
        b.owners(ev, [c for c in t.children if c.dep_ in ("dobj", "dative")] + ([subj] if subj is not None else []))
        sent_events.append(ev)
    for frame, comp in reversed(framed):  # "skipped [testing]": clauses hung on the frame verb reach the event
        if frame.i not in b.by_token and comp.i in b.by_token:
            b.by_token[frame.i] = b.by_token[comp.i]
    # relations inside the sentence: discourse cues split it into clauses, the cue says how they relate
    _relate_clauses(b, sent)
    for t in heads:
        found = b.by_token.get(t.i)
        if found is None:
            continue
        ev = found
        head_ev = _governing_event(b, t)
        if head_ev is not None:
            purpose = any(c.dep_ == "aux" and c.lower_ == "to" for c in t.children)
            if t.dep_ == "xcomp" and head_ev.lemma in ENABLE_VERBS:
                b.relate("enables", head_ev, ev)
            elif purpose and (t.dep_ == "advcl" or (t.dep_ == "acl" and t.head.lower_ == "order")
                              or (t.dep_ == "xcomp" and _passive(t.head) and not _evidential(t.head))
                              or (t.dep_ == "xcomp" and _acts_for(t.head))):
                ev.mode = ev.mode or "purpose"
                b.relate("motivates", ev, head_ev)
            elif t.dep_ in ("conj", "advcl", "xcomp") and t.i > t.head.i:
                b.relate("precedes", head_ev, ev)
        for c in t.children:  # "released without review": an omission
            if c.dep_ == "prep" and c.lower_ == "without":
                pobj = next((g for g in c.children if g.dep_ == "pobj"), None)
                if pobj is not None and pobj.i not in b.by_token and _bad_noun(pobj) and not ev.negated:
                    # "sang without a single mistake", "finished without any problems": the bad thing did not
                    # happen, so the act went well (no omission: nothing was left undone)
                    if not ev.sign:
                        ev.valence, ev.sign = "success", 1
                elif pobj is not None and pobj.i not in b.by_token:
                    omitted = _nominal(b, pobj)
                    omitted.action, omitted.text = "omit", f"without {pobj.text}"
        for c in t.children:  # "failed because of the storm", "was late due to traffic"
            before = c.doc[c.i - 1].lower_ if c.i > sent.start else ""
            cue = c.lower_ in _CAUSE_WORDS or (c.lower_ in ("of", "to") and before in _CAUSE_WORDS | {"result"})
            if c.dep_ in ("prep", "mark", "advmod") and cue:
                pobj = next((g for g in c.subtree if g.dep_ == "pobj"), None)
                if pobj is not None:
                    b.relate("causes", b.by_token.get(pobj.i) or _nominal(b, pobj), ev)
    _kinds_of_choice(b, heads)
    events = sorted({id(e): e for e in b.by_token.values() if sent.start <= _token_of(b, e) < sent.end}.values(),
                    key=lambda e: e.order)
    if not events:
        return
    segments = b.segments
    first_kind = segments[0][0] if segments else None
    first = _head_of(b, sent, segments[0][1], segments[0][2]) if segments else events[0]
    first = first or events[0]
    if b.last_main is not None:
        if first_kind == "main" and sent[0].lower_ in _CONTRAST_OPENERS:  # "However, ...", "Still, ..."
            first_kind = "contrast"
        if first_kind in ("result", "seq", "contrast"):
            kind = {"result": "causes", "seq": "precedes", "contrast": "contrast"}[first_kind]
            b.relate(kind, b.last_main, first)
        elif not _linked(b, b.last_main, first):
            b.relate("precedes", b.last_main, first)
    last = _head_of(b, sent, segments[-1][1], segments[-1][2]) if segments else None
    b.last_main = last or events[-1]


_CLAUSE_CUES: list[tuple[tuple[str, ...], str]] = sorted(
    [(tuple(c.split()), k) for k, cues in {
        "cause": ("because", "since", "as", "cause"),
        "result": ("so", "and so", "as a result", "and as a result", "as a consequence", "consequently", "therefore",
                   "thus", "hence", "which is why", "that is why", "this is why", "because of this",
                   "because of that", "for this reason", "in the end", "eventually", "and therefore"),
        "purpose": ("so that", "in order to", "in order that"),
        "earlier": ("after", "once", "when", "as soon as", "following", "whenever"),
        "later": ("before", "until", "till"),
        "seq": ("then", "and then", "later", "afterwards", "afterward", "next", "finally", "and", "so then", "soon"),
        "contrast": ("but", "yet", "but then", "however"),  # the clause it opens holds against the one before
        "concession": ("although", "though", "even though", "despite", "while", "whereas", "even if"),
        "condition": ("if", "only if", "as long as", "provided", "provided that"),
        "unless": ("unless",),
    }.items() for c in cues],
    key=lambda x: -len(x[0]),
)
# The same cues by first word, longest first: a token is compared only with the cues it could open.
_CUES_BY_FIRST: dict[str, list[tuple[tuple[str, ...], str]]] = {}
for _cue, _kind in _CLAUSE_CUES:
    _CUES_BY_FIRST.setdefault(_cue[0], []).append((_cue, _kind))
_AMBIGUOUS = {"as", "since", "so", "when", "after", "before", "then", "and", "but", "yet", "while", "once",
              "next", "later", "soon", "until", "till", "following", "finally", "eventually", "if"}


def _segments(b: _Builder, sent: Span) -> list[tuple[str, int, int]]:
    """(cue kind, start, end) clauses of a sentence; the first clause's kind is `main` unless a cue opens it."""
    words = [t.lower_ for t in sent]
    cuts: list[tuple[int, str]] = []
    i = 0
    while i < len(sent):
        found = None
        for cue, kind in _CUES_BY_FIRST.get(words[i], ()):
            if tuple(words[i:i + len(cue)]) == cue:
                found = (cue, kind)
                break
        if found is None:
            i += 1
            continue
        tok = sent[i]
        cue, kind = found
        nxt = sent[i + len(cue)] if i + len(cue) < len(sent) else None
        ok = nxt is not None and nxt.lower_ != "of" or cue[-1] == "this" or cue[-1] == "that"
        if ok and cue[0] in _AMBIGUOUS and len(cue) == 1:
            # a clause cue, not "as the chef", "so good", "the day after", "bread and butter"
            ok = tok.dep_ in ("mark", "advmod", "cc", "prep", "conj") and tok.pos_ in ("SCONJ", "CCONJ", "ADV", "ADP")
            if ok and cue[0] in ("and", "but", "yet"):
                ok = tok.head.pos_ in ("VERB", "AUX") and any(
                    t.pos_ in ("VERB", "AUX") and t.dep_ not in ("aux", "auxpass") for t in sent[i + 1:])
                ok = ok and (nxt is not None and nxt.pos_ not in ("VERB",) or nxt is None)
            if ok and cue[0] in ("after", "before", "until", "till", "following", "since", "as"):
                ok = any(c.pos_ in ("VERB", "AUX") or c.dep_ in ("pcomp",) for c in [tok.head, *tok.children]) and (
                    tok.dep_ == "mark" or tok.pos_ == "SCONJ" or any(c.dep_ == "pcomp" for c in tok.children))
        if ok:
            cuts.append((i, kind))
            i += len(cue)
        else:
            i += 1
    segs: list[tuple[str, int, int]] = []
    bounds = [(0, "main")] + [(c, k) for c, k in cuts if c > 0]
    if cuts and cuts[0][0] == 0:
        bounds[0] = (0, cuts[0][1])
        # a sentence-opening subordinate clause ends at its first comma: "Because X, Y"
        if cuts[0][1] in ("cause", "earlier", "later", "purpose", "concession", "condition", "unless"):
            comma = next((j for j in range(1, len(sent)) if words[j] == "," and
                          all(j < c for c, _ in cuts[1:])), None)
            if comma is not None:
                bounds.append((comma, "main"))
                bounds.sort()
    for n, (start, kind) in enumerate(bounds):
        end = bounds[n + 1][0] if n + 1 < len(bounds) else len(sent)
        segs.append((kind, sent.start + start, sent.start + end))
    for n in range(1, len(segs)):
        prev, cur = segs[n - 1], segs[n]
        a, c = _head_of(b, sent, prev[1], prev[2]), _head_of(b, sent, cur[1], cur[2])
        if a is None or c is None:
            continue
        kind = cur[0]
        if kind == "main":
            kind = prev[0] if prev[0] in ("cause", "earlier", "later", "purpose", "concession", "condition",
                                          "unless") else ""
            a, c = c, a  # the opening clause plays the role the cue gives it relative to the main clause
        if kind == "cause":
            b.relate("causes", c, a)
        elif kind == "result":
            b.relate("causes", a, c)
        elif kind == "purpose":
            c.mode = c.mode or "purpose"
            b.relate("motivates", c, a)
        elif kind == "earlier":
            b.relate("precedes", c, a)
        elif kind in ("later", "seq"):
            b.relate("precedes", a, c)
        elif kind == "contrast":  # "A, but B"
            b.relate("contrast", a, c)
        elif kind == "concession":  # "although A, B" / "B, although A"
            b.relate("contrast", c, a)
        elif kind == "condition":  # "if A, B" / "B only if A": A is what B depended on
            c.mode = "condition"
            if a.sign >= 0 and not a.mode:
                a.mode = "goal"
            b.relate("condition", c, a)
        elif kind == "unless":  # "B unless A": A would prevent B
            c.mode = "condition"
            b.relate("prevents", c, a)
    return segs


def _relate_clauses(b: _Builder, sent: Span) -> None:
    b.segments = _segments(b, sent)


def _linked(b: _Builder, x: Event, y: Event) -> bool:
    return any({r[1], r[2]} == {x.id, y.id} for r in b.ep.relations)


def _token_of(b: _Builder, ev: Event) -> int:
    return next(i for i, e in b.by_token.items() if e is ev)


def _head_of(b: _Builder, sent: Span, start: int, end: int) -> Event | None:
    """The event of a clause that sits highest in the parse (fewest steps to the sentence root)."""
    best: tuple[int, int, Event] | None = None
    for i, ev in b.by_token.items():
        if start <= i < end and sent.start <= i < sent.end:
            depth, t = 0, sent.doc[i]
            while t.head.i != t.i and depth < 50:
                t, depth = t.head, depth + 1
            if best is None or (depth, i) < best[:2]:
                best = (depth, i, ev)
    return best[2] if best else None


def _governing_event(b: _Builder, t: Token) -> Event | None:
    h = t.head
    while h.head.i != h.i and h.i not in b.by_token:
        h = h.head
    return b.by_token.get(h.i)


def _cause_verb(b: _Builder, verb: Token) -> bool:
    """`X caused / led to / resulted in / prevented Y`: a relation between two events, not an event.

    Only when X is a thing or an event ("the storm caused", "this led to", ", causing ..."); a person who
    prevents something did something, which stays an event. True if handled."""
    subj = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    obj = next((c for c in verb.children if c.dep_ == "dobj"), None)
    kind = "prevents" if verb.lemma_.lower() in PREVENT_VERBS else "causes"
    if subj is None and verb.dep_ in ("advcl", "conj", "xcomp") and obj is not None and kind == "causes":
        cause_ev = _governing_event(b, verb)  # "the pipe burst, causing a flood"
        if cause_ev is None and verb.head.pos_ == "NOUN":
            cause_ev = _nominal(b, verb.head)
        if cause_ev is not None:
            effect_ev = b.by_token.get(obj.i) or _nominal(b, obj)
            b.relate("causes", cause_ev, effect_ev)
            b.by_token[verb.i] = effect_ev
            return True
    if obj is None:
        prep = next((c for c in verb.children if c.dep_ == "prep" and c.lower_ in ("to", "in")), None)
        obj = next((g for g in prep.children if g.dep_ in ("pobj", "pcomp")), None) if prep is not None else None
    if subj is None or obj is None:
        return False
    if subj.lower_ in ("this", "that", "which", "it") and b.last_main is not None:
        cause: Event | None = b.last_main
        if subj.lower_ == "which" and verb.dep_ == "relcl":
            cause = _governing_event(b, verb) or b.last_main
    elif subj.pos_ == "NOUN" and lexicon.noun_type(subj.lemma_.lower()) not in ("person", "group", "animal"):
        cause = _nominal(b, subj)
    else:
        return False
    effect = b.by_token.get(obj.i) or _nominal(b, obj)
    b.relate(kind, cause, effect)
    b.by_token[verb.i] = effect
    return True


# What a saving saves: "to save time / two days / money", "to cut costs" (and `_TIME_NOUNS`, `_COSTS`).
_SAVED = {"money", "cash", "effort", "fuel", "trip", "journey"}


def _saving(t: Token) -> bool:
    """ "save time", "save two days", "save money", "cut costs": spending less, of time or of money."""
    return _lemma(t) in ("save", "cut", "reduce", "lower", "trim") and any(
        c.dep_ == "dobj" and c.lemma_.lower() in _TIME_NOUNS | _SAVED | _COSTS for c in t.children)


def _kinds_of_choice(b: _Builder, heads: list[Token]) -> None:
    """Kinds of choice told by what an act was for or what it stood in for, whatever its verb (structure version
    13): an act of a generic class done to save time or money is a shortcut, an omission as a step skipped is ("laid
    the asphalt in the rain to save two days", "bought the cheapest food to cut costs", "save money by renting the
    smallest van"; "skipped testing to save time" was one already); what was done "instead of" something leaves that
    undone, an omission ("spent the weekend gaming instead of revising", as "without measuring")."""
    for t in heads:
        ev = b.by_token.get(t.i)
        if ev is None or ev.lemma != _lemma(t):
            continue
        if t.head.lower_ == "of" and t.head.i > 0 and t.doc[t.head.i - 1].lower_ == "instead" and \
                t.dep_ in ("pcomp", "pobj") and not ev.negated:
            # "spent the weekend playing games instead of revising": the revising was not done, an omission (as
            # "without measuring"); a success not done is no outcome of its own
            ev.action, ev.text = "omit", f"instead of {ev.text}"
            if ev.sign > 0:
                ev.valence, ev.sign = None, 0
            continue
        if _saving(t):
            means = [b.by_token.get(g.i) for c in t.children if c.dep_ == "prep" and c.lower_ == "by"
                     for g in c.children if g.dep_ == "pcomp"]  # "save money by renting the smallest van"
            for m in means:
                if m is not None and m is not ev:
                    ev.mode = ev.mode or "purpose"
                    b.relate("motivates", ev, m)
            if any(c.dep_ == "aux" and c.lower_ == "to" for c in t.children) and (h := _governing_event(b, t)) \
                    is not None and h is not ev and t.i > t.head.i:
                ev.mode = ev.mode or "purpose"  # "bought the cheapest food to cut costs"
                b.relate("motivates", ev, h)
            served = {a for k, p, a in b.ep.relations if k == "motivates" and p == ev.id}
            for act in b.ep.events:
                if act.id in served and act.action in lexicon.GENERIC_CLASSES and not act.negated:
                    act.action = "omit"  # (an act of a kind of its own keeps it: "tested it once to save a day")


def _outcomes(b: _Builder) -> None:
    """Higher-order relations: how each goal came out. The story's outcome is its last event with a sign
    (told after the goal, not itself a goal or a condition); it `achieves` a goal when good, `thwarts` it when
    bad. With the causes leading to the outcome this is the cause of a met or failed goal. An event that only
    describes a noun ("there was no honey [to sell]", "the money [she had saved]") is not an outcome."""
    for goal in (e for e in b.ep.events if e.mode == "goal"):
        after = [e for e in b.ep.events if e.order > goal.order and e.sign and not e.mode and
                 e.id not in b.attributive]
        if after:
            b.relate("achieves" if after[-1].sign > 0 else "thwarts", after[-1], goal)


def episode_of(doc: Doc | Span) -> Episode:
    """The episode told by a parsed text (a Doc or a sentence Span)."""
    b = _Builder()
    sents = list(doc.sents) if hasattr(doc, "sents") else [doc]
    for n, sent in enumerate(sents):
        b.sent_no = n
        try:
            _build_sentence(b, sent)
        except (StopIteration, KeyError, IndexError, ValueError):  # an odd parse must never fail a write
            log.warning("episode extraction skipped a sentence it could not read: %.60r", sent.text)
    _outcomes(b)
    b.ep.sentences = [[s.start_char - sents[0].start_char, s.end_char - sents[0].start_char] for s in sents] \
        if sents else []
    return b.ep
