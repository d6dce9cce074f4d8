"""Episode graphs: what happened, to whom, and why, abstracted from the words that said it.

An episode has *events* (an action class, the lemma, negation, order, valence, the sentence that told it,
and a mode: a goal someone had, a condition, or what happened), *participants* (coarse types such as
person, group, organisation, artefact, animal, not names), *role* edges from events to participants
(agent, patient, recipient) and *relations* between events: first-order ones told by the text (causes,
enables, prevents, precedes, motivates, condition, contrast) and higher-order ones that say how a goal or
a condition came out (`achieves` / `thwarts`: the story's outcome against a goal or the event a condition
was for). A cause of a failed goal is then a `causes` chain ending in a `thwarts` edge: connected structure
the mapper rewards. It is stored as JSON with the memory and read back as dataclasses; `to_networkx` gives
the typed graph for views and notebooks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: networkx costs a cold command a few tenths of a second
    import networkx as nx

RELATION_KINDS = ("causes", "enables", "prevents", "precedes", "motivates", "condition", "contrast", "achieves",
                  "thwarts")
HIGHER_ORDER = frozenset({"achieves", "thwarts"})  # how a goal or a condition's aim came out
ROLE_KINDS = ("agent", "patient", "recipient")
# what happened; what someone wanted; what something depended on; what an action was for ("to save time")
MODES = ("", "goal", "condition", "purpose")
GRAPH_VERSION = 16  # bump when extraction changes; stored structures of another version are re-extracted


@dataclass(slots=True)
class Event:
    id: str
    lemma: str
    action: str  # abstract class from the lexicon, after negation is folded in ("did not test" -> omit)
    negated: bool  # negation left after folding ("did not arrive")
    order: int  # position in the telling
    valence: str | None = None  # success, failure, gain, loss, harm
    sign: int = 0  # +1 good, -1 bad, 0 neutral
    text: str = ""  # the words it came from, for display only
    sentence: int = 0  # which sentence of the text told it (for showing which sentence maps to which)
    mode: str = ""  # one of MODES


@dataclass(slots=True)
class Participant:
    id: str
    type: str  # person, group, organisation, animal, artefact, place, activity, thing, event
    text: str = ""  # for display only; never compared


@dataclass(slots=True)
class Episode:
    events: list[Event] = field(default_factory=list)
    participants: list[Participant] = field(default_factory=list)
    roles: list[tuple[str, str, str]] = field(default_factory=list)  # (event id, role, participant id)
    relations: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, from event, to event)
    sentences: list[list[int]] = field(default_factory=list)  # [start, end) characters of each sentence told

    def to_json(self) -> dict[str, Any]:
        return {
            "events": [[e.id, e.lemma, e.action, e.negated, e.order, e.valence, e.sign, e.text, e.sentence, e.mode]
                       for e in self.events],
            "participants": [[p.id, p.type, p.text] for p in self.participants],
            "roles": [list(r) for r in self.roles],
            "relations": [list(r) for r in self.relations],
            "sentences": self.sentences,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Episode:
        if not data:
            return cls()
        return cls(
            events=[Event(str(x[0]), str(x[1]), str(x[2]), bool(x[3]), int(x[4]), x[5], int(x[6]), str(x[7]),
                          int(x[8]) if len(x) > 8 else 0, str(x[9]) if len(x) > 9 else "")
                    for x in data.get("events", [])],
            participants=[Participant(str(a), str(b), str(c)) for a, b, c in data.get("participants", [])],
            roles=[(str(a), str(b), str(c)) for a, b, c in data.get("roles", [])],
            relations=[(str(a), str(b), str(c)) for a, b, c in data.get("relations", [])],
            sentences=[[int(a), int(b)] for a, b in data.get("sentences", [])],
        )

    def to_networkx(self) -> nx.MultiDiGraph:
        """The typed graph: event and participant nodes; role and relation edges (attribute `kind`)."""
        import networkx as nx

        g = nx.MultiDiGraph()
        for e in self.events:
            g.add_node(e.id, node="event", lemma=e.lemma, action=e.action, negated=e.negated, order=e.order,
                       valence=e.valence, sign=e.sign, text=e.text, sentence=e.sentence, mode=e.mode)
        for p in self.participants:
            g.add_node(p.id, node="participant", type=p.type, text=p.text)
        for event, role, participant in self.roles:
            g.add_edge(event, participant, kind=role)
        for kind, a, b in self.relations:
            g.add_edge(a, b, kind=kind)
        return g

    def describe_event(self, event_id: str) -> str:
        """A short readable label: `skip[omit]`, `not arrive[move]`, `collapse[fail,-]`."""
        e = next((x for x in self.events if x.id == event_id), None)
        if e is None:
            return event_id
        tags = [e.action] + ([{1: "+", -1: "-"}[e.sign]] if e.sign else []) + ([e.mode] if e.mode else [])
        said = e.lemma if not e.text.startswith("not ") or e.negated else f"not {e.lemma}"
        return f"{'not ' if e.negated else ''}{said}[{','.join(tags)}]"


def merge(episodes: list[Episode]) -> Episode:
    """Episodes told one after another (a document's propositions) as one episode, in order."""
    out = Episode()
    for n, ep in enumerate(episodes):
        rename = {e.id: f"{n}.{e.id}" for e in ep.events} | {p.id: f"{n}.{p.id}" for p in ep.participants}
        base = len(out.events)
        sentences = 1 + max((e.sentence for e in out.events), default=-1)
        first = None
        for e in ep.events:
            out.events.append(Event(rename[e.id], e.lemma, e.action, e.negated, base + e.order, e.valence, e.sign,
                                    e.text, sentences + e.sentence, e.mode))
            first = first or rename[e.id]
        out.participants += [Participant(rename[p.id], p.type, p.text) for p in ep.participants]
        out.roles += [(rename[a], r, rename[b]) for a, r, b in ep.roles]
        out.relations += [(k, rename[a], rename[b]) for k, a, b in ep.relations]
        if first and base:
            out.relations.append(("precedes", out.events[base - 1].id, first))
    return out
