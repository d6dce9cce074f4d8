"""Structure mapping between two episodes, in the spirit of the structure-mapping engine (SME).

Local match hypotheses pair cue events with candidate events whose negation agrees and whose valence does
not conflict (the same lemma, the same action class, or the same outcome sign match well; anything else
weakly). Relations match only with relations of a compatible kind whose argument events match, and a
relation's worth is scaled by how well its arguments match, so structure carries the score, not shared
words. Kernels (a matched relation with its two event pairs, or a lone event pair) are merged greedily,
best first, into one mapping that stays one-to-one; participants are then mapped through the role edges
of mapped events, one-to-one, role-consistent, typed. Connected mapped relations (sharing an event) earn
a systematicity bonus. The score is normalised by the larger of the two episodes' self-matches, so it lies
in 0..1 and is high only when most of both structures map (a one-event memory cannot look like a story).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.analogy.episode_graph import Episode, Event

RELATION_WEIGHT = {"causes": 3.0, "prevents": 3.0, "enables": 2.4, "motivates": 2.4, "precedes": 1.0}
_CAUSAL = {"causes", "enables", "motivates"}
EVENT_WEIGHT = 1.0
ROLE_WEIGHT = 0.3
CONNECTED_BONUS = 0.5
WEAK_EVENT_MATCH = 0.15


@dataclass(slots=True)
class Mapping:
    """The best mapping found: pairs of ids, the relations that carried it, and its normalised score."""

    score: float = 0.0
    raw: float = 0.0
    events: list[tuple[str, str, float]] = field(default_factory=list)  # cue event, candidate event, match
    participants: list[tuple[str, str, str]] = field(default_factory=list)  # cue, candidate, role that tied them
    relations: list[tuple[str, str, str, str, str]] = field(default_factory=list)  # kind, cue a, b, cand a, b


def event_match(a: Event, b: Event) -> float:
    """How well two events match on their own, 0 when they may not be mapped (negation or valence clash)."""
    if a.negated != b.negated or (a.sign and b.sign and a.sign != b.sign):
        return 0.0
    if a.lemma == b.lemma and a.action == b.action:
        s = 1.0
    elif a.action == b.action and a.action != "other":
        s = 0.8
    elif a.sign and a.sign == b.sign:
        s = 0.6
    else:
        s = WEAK_EVENT_MATCH
    if a.valence and a.valence == b.valence:
        s += 0.2
    return min(s, 1.0)


def relation_match(k1: str, k2: str) -> float:
    if k1 == k2:
        return RELATION_WEIGHT[k1]
    if k1 in _CAUSAL and k2 in _CAUSAL:
        return 0.6 * min(RELATION_WEIGHT[k1], RELATION_WEIGHT[k2])
    if "precedes" in (k1, k2) and "prevents" not in (k1, k2):
        return 0.3 * RELATION_WEIGHT["precedes"]
    return 0.0


def map_episodes(cue: Episode, cand: Episode, cue_self: float | None = None, cand_self: float | None = None) -> Mapping:
    """The best one-to-one mapping of `cue` onto `cand` and its normalised systematicity."""
    best = _map(cue, cand)
    if best.raw <= 0:
        return best
    s1 = cue_self if cue_self is not None else self_score(cue)
    s2 = cand_self if cand_self is not None else self_score(cand)
    best.score = min(1.0, best.raw / max(s1, s2)) if s1 > 0 and s2 > 0 else 0.0
    return best


def self_score(ep: Episode) -> float:
    """The raw score of an episode mapped onto itself: the normaliser.

    That best mapping is the identity (each event onto itself has the highest local match and keeps every
    relation and role), so it is scored directly, in time linear in the episode: `_map(ep, ep)` compares
    every pair of events and of relations, and took 11 s for a 400-sentence document (a 1.9 MB one never
    finished). tests/analogy/test_self_score.py checks both give the same score."""
    forward: dict[str, str] = {}
    raw = 0.0
    for e in ep.events:
        s = event_match(e, e)
        if s > 0:
            forward[e.id] = e.id
            raw += EVENT_WEIGHT * s
    kinds = {(a, b): k for k, a, b in ep.relations}
    degree: dict[str, int] = {}
    parallel: dict[frozenset[str], int] = {}
    for k, a, b in ep.relations:
        w = relation_match(k, kinds[(a, b)]) if a in forward and b in forward else 0.0
        if not w:
            continue
        raw += w
        for v in {a, b}:
            degree[v] = degree.get(v, 0) + 1
        if a != b:
            parallel[frozenset((a, b))] = parallel.get(frozenset((a, b)), 0) + 1
    # pairs of mapped relations sharing an event: per event, minus pairs counted at both their shared events
    connected = sum(d * (d - 1) // 2 for d in degree.values()) - sum(m * (m - 1) // 2 for m in parallel.values())
    raw += CONNECTED_BONUS * connected
    return raw + _map_participants(ep, ep, forward, Mapping())


def _map(cue: Episode, cand: Episode) -> Mapping:
    ev1 = {e.id: e for e in cue.events}
    ev2 = {e.id: e for e in cand.events}
    local = {(a, b): s for a in ev1 for b in ev2 if (s := event_match(ev1[a], ev2[b])) > 0}
    kernels: list[tuple[float, list[tuple[str, str]], tuple[str, str, str, str, str] | None]] = []
    for k1, a1, b1 in cue.relations:
        for k2, a2, b2 in cand.relations:
            w = relation_match(k1, k2)
            s_a, s_b = local.get((a1, a2), 0.0), local.get((b1, b2), 0.0)
            if w and s_a and s_b:
                kernels.append((w * min(s_a, s_b) + s_a + s_b, [(a1, a2), (b1, b2)], (k1, a1, b1, a2, b2)))
    for pair, s in local.items():
        kernels.append((s, [pair], None))
    kernels.sort(key=lambda k: -k[0])
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for _, pairs, _rel in kernels:
        if all(forward.get(a, b) == b and backward.get(b, a) == a for a, b in pairs):
            for a, b in pairs:
                forward[a], backward[b] = b, a
    out = Mapping()
    raw = 0.0
    for a, b in forward.items():
        s = local[(a, b)]
        out.events.append((a, b, round(s, 3)))
        raw += EVENT_WEIGHT * s
    # every relation whose arguments are mapped onto a related pair counts, not only the kernels' seeds
    mapped_rel: list[tuple[str, str, str, str, str]] = []
    rel2 = {(a, b): k for k, a, b in cand.relations}
    for k1, a1, b1 in cue.relations:
        if a1 not in forward or b1 not in forward:
            continue
        a2, b2 = forward[a1], forward[b1]
        kind2 = rel2.get((a2, b2))
        w = relation_match(k1, kind2) if kind2 is not None else 0.0
        if w:
            raw += w * min(local[(a1, a2)], local[(b1, b2)])
            mapped_rel.append((k1, a1, b1, a2, b2))
    for i, r in enumerate(mapped_rel):
        for other in mapped_rel[i + 1:]:
            if {r[1], r[2]} & {other[1], other[2]}:
                raw += CONNECTED_BONUS
    out.relations = mapped_rel
    raw += _map_participants(cue, cand, forward, out)
    out.raw = raw
    return out


def _map_participants(cue: Episode, cand: Episode, forward: dict[str, str], out: Mapping) -> float:
    types1 = {p.id: p.type for p in cue.participants}
    types2 = {p.id: p.type for p in cand.participants}
    roles2: dict[tuple[str, str], list[str]] = {}
    for e, role, p in cand.roles:
        roles2.setdefault((e, role), []).append(p)
    votes: dict[tuple[str, str, str], int] = {}
    for e, role, p in cue.roles:
        target = forward.get(e)
        for q in roles2.get((target, role), []) if target else []:
            votes[(p, q, role)] = votes.get((p, q, role), 0) + 1
    used1: set[str] = set()
    used2: set[str] = set()
    score = 0.0
    for (p, q, role), n in sorted(votes.items(), key=lambda v: (-v[1], types1[v[0][0]] != types2[v[0][1]], v[0])):
        if p in used1 or q in used2:
            continue
        used1.add(p)
        used2.add(q)
        same = types1[p] == types2[q]
        score += n * ROLE_WEIGHT * (1.0 if same else 0.5)
        out.participants.append((p, q, role))
    return score
