"""Edges derived from the text, recomputed over every ingested memory after each run.

- `proposition_of`: each proposition -> its document.
- `caused_by`: from the causal cues of each proposition. A side that is this sentence, the previous one
  or a split-out clause is linked directly; a phrase ("the DPA violation", "CloudVault's unannounced
  subprocessor change") is resolved to the proposition that tells that event: most of its keywords
  shared (rare words count more), its head word among the candidate's main words, not later than the
  statement, same document preferred, explanations ("... because ...") passed over for the event itself.
  When a sentence restates the one before it with a reason ("The risk was escalated ... because of X"
  after "Meridian escalated the risk ..."), the earlier sentence gets the cause too.
  Confidence = the cue's confidence times how well the phrase matched.
- `followed_by`: consecutive events (past-tense actions) of the same entity, earlier -> later.
- `entity_relation`: a proposition whose parse relates its entity to another (subject - verb - object)
  -> the nearest proposition about that other entity; the verb is kept on the edge.

Derived edges carry `origin: ingest` and are replaced as a whole, so a rerun yields the same graph and
edges added by users are never touched.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.ingest.drafts import CausalCue, Side
from engine.models import Edge, EdgeType
from engine.store.interface import Storage
from engine.store.ledger import DOCUMENT, MESSAGE, Ledger, LinkRow
from engine.store.rows import AlsoWrite
from engine.writer import Writer

ORIGIN = "ingest"
_DAY_US = 24 * 3600 * 1_000_000
MIN_COVERAGE = 0.5
MIN_SCORE = 0.6
STRICT_COVERAGE = 0.75
_Adder = Callable[..., None]  # add(source, target, type, confidence, **attrs)


@dataclass
class _Prop:
    row: LinkRow
    keywords: frozenset[str]
    core: frozenset[str]
    causes: list[CausalCue]

    @property
    def id(self) -> str:
        return self.row.memory_id


class ReferentIndex:
    """Finds the proposition a phrase refers to, by rare shared keywords (an inverted index, no model)."""

    def __init__(self, props: Sequence[_Prop]) -> None:
        self.props = props
        self.postings: dict[str, list[int]] = defaultdict(list)
        for i, p in enumerate(props):
            for k in p.keywords:
                self.postings[k].append(i)
        n = max(1, len(props))
        self.idf = {k: math.log(1 + n / len(v)) for k, v in self.postings.items()}

    def resolve(self, side: Side, origin: _Prop, exclude: set[str], effect: bool = False
                ) -> tuple[_Prop, float] | None:
        """The proposition telling the event `side` names, with how well it matched (0-1). A phrase that
        introduces something new ("one loss") is an effect told only here; as a cause it must match closely."""
        words = [k for k in dict.fromkeys(side.keywords) if k in self.idf]
        if not words or (effect and not side.definite):
            return None
        strict = not side.definite
        total = sum(self.idf[k] for k in words)
        rare = sorted(words, key=lambda k: -self.idf[k])[:3]
        pool = {i for k in rare for i in self.postings[k]}
        best: tuple[float, int, _Prop, float] | None = None
        for i in pool:
            cand = self.props[i]
            if cand.id in exclude or cand.row.created_at > origin.row.created_at + _DAY_US:
                continue
            if cand.row.analysis.get("plan"):
                continue  # what should or will happen caused nothing yet
            shared = [k for k in words if k in cand.keywords]
            if len(shared) < (2 if strict else min(2, len(words))):
                continue
            coverage = sum(self.idf[k] for k in shared) / total
            if coverage < (STRICT_COVERAGE if strict else MIN_COVERAGE):
                continue
            score = coverage
            if side.head and side.head in cand.core:
                score += 0.25
            if cand.row.source == origin.row.source:
                score += 0.1 + (0.05 if abs(cand.row.position - origin.row.position) <= 3 else 0.0)
            if cand.causes:
                score -= 0.2  # an explanation of the event, not the event
            if cand.row.analysis.get("derived_from") is not None:
                score -= 0.05
            if score < MIN_SCORE:
                continue
            key = (score, -cand.row.created_at)
            if best is None or key > (best[0], best[1]):
                best = (score, -cand.row.created_at, cand, coverage)
        if best is None:
            return None
        return best[2], min(1.0, best[3])


def derive_edges(rows: Sequence[LinkRow]) -> list[Edge]:
    """Every derived edge of the ingested corpus (deterministic for the same rows)."""
    documents = {r.source: r.memory_id for r in rows if r.role == DOCUMENT}
    props = [
        _Prop(r, frozenset(r.analysis.get("kw", ())), frozenset(r.analysis.get("core", ())),
              [CausalCue.from_dict(c) for c in r.analysis.get("causes", ())])
        for r in rows if r.role not in (DOCUMENT, MESSAGE)  # messages are linked when they are written
    ]
    by_source: dict[str, dict[int, _Prop]] = defaultdict(dict)
    for p in props:
        by_source[p.row.source][p.row.position] = p
    edges: dict[tuple[str, str, EdgeType], Edge] = {}

    def add(source: str, target: str, type_: EdgeType, confidence: float, **attrs: object) -> None:
        if source == target:
            return
        key = (source, target, type_)
        confidence = round(max(0.01, min(1.0, confidence)), 3)
        if key not in edges or edges[key].confidence < confidence:
            edges[key] = Edge(source, target, type_, confidence, {"origin": ORIGIN, **attrs})

    for p in props:
        doc_id = documents.get(p.row.source)
        if doc_id is not None:
            add(p.id, doc_id, EdgeType.PROPOSITION_OF, 1.0)
    _causal_edges(props, by_source, add)
    _followed_by(props, add)
    _entity_relations(props, by_source, add)
    return list(edges.values())


def _previous(p: _Prop, by_source: dict[str, dict[int, _Prop]]) -> _Prop | None:
    """The sentence before `p` in its document, under the same heading (split-out clauses skipped)."""
    siblings = by_source[p.row.source]
    heading = p.row.analysis.get("heading")
    for position in range(p.row.position - 1, -1, -1):
        q = siblings.get(position)
        if q is None or q.row.analysis.get("derived_from") is not None:
            continue
        return q if q.row.analysis.get("heading") == heading else None
    return None


def _restates(p: _Prop, prev: _Prop | None) -> bool:
    """Does `p` retell the event of `prev` (same main verb, and something else in common)?"""
    if prev is None or prev.causes or p.row.analysis.get("reporting"):
        return False  # a sentence that already has its reason, or reported speech, is not retold here
    root = p.row.analysis.get("root")
    if not root or (root != prev.row.analysis.get("root") and root not in prev.core):
        return False
    return len(p.core & prev.core) >= 2


def _causal_edges(props: Sequence[_Prop], by_source: dict[str, dict[int, _Prop]], add: _Adder) -> None:
    index = ReferentIndex(props)
    clauses: dict[tuple[str, int], set[str]] = defaultdict(set)  # a sentence's split-out clauses, found once
    for q in props:                                               # (per cue it was quadratic in a long document)
        parent = q.row.analysis.get("derived_from")
        if parent is not None:
            clauses[(q.row.source, parent)].add(q.id)
    for p in props:
        for cue in p.causes:
            mine = {p.id} | clauses.get((p.row.source, p.row.position), set())
            cause, cause_quality = _node(cue.cause, p, by_source, index, mine)
            if cause is None:
                continue
            effects: list[tuple[_Prop, float]] = []
            if cue.effect.mode == "self":
                effects.append((p, 1.0))
                prev = _previous(p, by_source)
                if _restates(p, prev) and prev is not None:
                    effects.append((prev, 0.9))
            else:
                node, quality = _node(cue.effect, p, by_source, index, mine | {cause.id}, effect=True)
                if node is not None:
                    effects.append((node, quality))
                if cue.cause.mode != "self":
                    effects.append((p, 1.0))
            for effect, quality in effects:
                if effect.id != cause.id:
                    add(effect.id, cause.id, EdgeType.CAUSED_BY, cue.confidence * cause_quality * quality,
                        cue=cue.cue, rule=f"{cue.effect.mode}<-{cue.cause.mode}")


def _node(side: Side, p: _Prop, by_source: dict[str, dict[int, _Prop]], index: ReferentIndex,
          exclude: set[str], effect: bool = False) -> tuple[_Prop | None, float]:
    if side.mode == "self":
        return p, 1.0
    if side.mode == "previous":
        return _previous(p, by_source), 0.9
    if side.mode == "clause" and side.derived is not None:
        node = by_source[p.row.source].get(side.derived)
        if node is not None:
            return node, 1.0
    found = index.resolve(side, p, exclude, effect)
    return (found[0], found[1]) if found else (None, 0.0)


def _followed_by(props: Sequence[_Prop], add: _Adder) -> None:
    timelines: dict[str, list[_Prop]] = defaultdict(list)
    for p in props:
        a = p.row.analysis
        if p.row.entity_id and a.get("event") and a.get("derived_from") is None:
            timelines[p.row.entity_id].append(p)
    for events in timelines.values():
        events.sort(key=lambda q: (q.row.created_at, q.row.source, q.row.position))
        for before, after in zip(events, events[1:], strict=False):
            explicit = sum(bool(q.row.analysis.get("explicit_time")) for q in (before, after))
            add(before.id, after.id, EdgeType.FOLLOWED_BY, (0.5, 0.7, 0.9)[explicit])


def _entity_relations(props: Sequence[_Prop], by_source: dict[str, dict[int, _Prop]], add: _Adder) -> None:
    by_entity: dict[str, list[tuple[int, str, int, _Prop]]] = defaultdict(list)
    for p in props:
        if p.row.entity_id:
            by_entity[p.row.entity_id].append((p.row.created_at, p.row.source, p.row.position, p))
    for items in by_entity.values():
        items.sort(key=lambda t: (t[0], t[1], t[2]))
    for p in props:
        for rel in p.row.analysis.get("relations", ()):
            for other in (rel.get("subject"), rel.get("object")):
                if not other or other == p.row.entity_id:
                    continue
                target = _nearest(p, by_entity.get(other, []), by_source)
                if target is not None:
                    add(p.id, target.id, EdgeType.ENTITY_RELATION, float(rel.get("confidence", 0.7)),
                        verb=rel.get("verb"), preposition=rel.get("preposition"),
                        subject=rel.get("subject"), object=rel.get("object"))


def _nearest(p: _Prop, items: list[tuple[int, str, int, _Prop]], by_source: dict[str, dict[int, _Prop]]
             ) -> _Prop | None:
    """The proposition about the other entity closest to `p`: in the same document if any, else in time."""
    if not items:
        return None
    same = [t for t in items if t[1] == p.row.source]
    if same:
        return min(same, key=lambda t: abs(t[2] - p.row.position))[3]
    times = [t[0] for t in items]
    i = bisect.bisect_left(times, p.row.created_at)
    around = [items[j] for j in (i - 1, i) if 0 <= j < len(items)]
    return min(around, key=lambda t: (abs(t[0] - p.row.created_at), t[0]))[3]


def relink(writer: Writer) -> dict[str, int]:
    """Replace every derived edge with a fresh derivation, refresh entity mention counts; edge counts by type."""
    rows = Ledger(writer.store).link_rows()
    edges = derive_edges(rows)
    mentions: Counter[str] = Counter()
    for r in rows:
        mentions.update(set(r.analysis.get("entities", ())))
    writer.replace_derived_edges(ORIGIN, edges, also=AlsoWrite(mentions=mentions))
    return count_edges(writer.store)


def count_edges(store: Storage) -> dict[str, int]:
    return store.count_edges_by_type(ORIGIN)
