"""Structure mapping between two episodes, in the spirit of the structure-mapping engine (SME, Gentner).

Systematicity decides: a mapping scores mostly through the relations it carries, and most through
connected relations (chains of causes into a goal's outcome), not through events that look alike.
- Local match hypotheses pair events whose negation agrees and whose valence does not conflict (the same
  lemma, the same action class, or the same outcome sign match well; anything else weakly).
- Two stories of comparable length told in several sentences are aligned sentence by sentence first (an
  order-keeping alignment of their sentences by the likeness of their events): a pair of events told in
  sentences the alignment does not pair counts half its match, so a chance likeness across the stories (a
  failure early in one onto the failure that ends the other) weighs less than the step told where the cue told it.
- Relations match relations of a compatible kind whose argument events match; a matched relation is worth
  its kind's weight times its weaker argument match. Higher-order relations (`achieves` / `thwarts`: how a
  goal came out) weigh most.
- Kernels (a matched relation with its two event pairs) are ordered by their support: their own worth plus
  that of the other relation matches that share one of their event pairs, so matches inside a larger
  consistent structure are taken first (SME's trickle-down, cheaply); they are merged greedily into one
  one-to-one mapping. Lone event pairs come last.
- The score: each mapped relation's worth; a bonus per pair of mapped relations that share an event (the
  connected structure); events little (`EVENT_IN_RELATION` when a mapped relation holds them or the cue
  relates them to nothing, `EVENT_ALONE` when the cue relates them but none of those relations mapped);
  participants, mapped through the role edges of mapped events, least. The sum shrinks with the share of
  the mapped event pairs that the mapping puts in the opposite order of their telling.
The score is normalised by the two episodes' self-matches (the larger to the power 0.75 times the smaller to
0.25, `LARGER_SELF`), so it lies in 0..1 (clamped) and is high only when most
of both structures map (a one-event memory cannot look like a story, and the same events joined
by other relations map poorly).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from engine.analogy.episode_graph import HIGHER_ORDER, Episode, Event

RELATION_WEIGHT = {"causes": 3.0, "prevents": 3.0, "enables": 2.4, "motivates": 2.4, "condition": 2.4,
                   "contrast": 1.5, "precedes": 0.25, "achieves": 4.0, "thwarts": 4.0}
_CAUSAL = {"causes", "enables", "motivates", "condition"}
EVENT_IN_RELATION = 0.3
EVENT_ALONE = 0.1
ROLE_WEIGHT = 0.1
CONNECTED = 0.5  # times the lighter of two connected relations' weights
ORDER_PENALTY = 0.5  # the score shrinks by this times the share of mapped event pairs told in reverse order
WEAK_EVENT_MATCH = 0.15
# Two tellings of comparable length are aligned sentence by sentence (an order-keeping alignment of their sentences,
# `aligned_sentences`); an event pair told in two sentences the alignment does not pair counts this share of its
# match (session 18: on the tune half, alpha 0, top-1 42% -> 47%, MRR 0.497 -> 0.561).
UNALIGNED_SENTENCES = 0.5
# The normaliser: the larger of the two self-matches to this power times the smaller to the rest. 1 (the larger
# alone, sessions 10-17) charged a story in full for every part of its structure the cue's telling did not yield,
# so a well-told analog lost to a thinly told story; with the sentence alignment in place, 0.75 (tune half, alpha
# 0: top-1 47% -> 53%, MRR 0.561 -> 0.598; alpha 0.5: 42% -> 44%).
LARGER_SELF = 0.75
# Action classes that one story tells with one verb and its retelling with another ("lent him the notes" /
# "gave him the notes"; "ignored the warning" / "skipped the check" / "refused the map"): kin match below
# the same class.
CLASS_FAMILY = {"help": "benefit", "give": "benefit", "omit": "neglect", "ignore_advice": "neglect",
                "refuse": "neglect", "warn": "tell", "communicate": "tell"}


@dataclass(slots=True)
class Mapping:
    """The best mapping found: pairs of ids, the relations that carried it, and its normalised score."""

    score: float = 0.0
    raw: float = 0.0
    events: list[tuple[str, str, float]] = field(default_factory=list)  # cue event, candidate event, match
    participants: list[tuple[str, str, str]] = field(default_factory=list)  # cue, candidate, role that tied them
    relations: list[tuple[str, str, str, str, str]] = field(default_factory=list)  # kind, cue a, b, cand a, b


def event_match(a: Event, b: Event) -> float:
    """How well two events match on their own, 0 when they may not be mapped (a valence or mode clash: a
    goal maps a goal, not something that happened; negation, for events that do not carry a sign)."""
    if (a.sign and b.sign and a.sign != b.sign) or (a.mode == "goal") != (b.mode == "goal"):
        return 0.0
    # a signed event's negation is already in its sign ("could not turn the heel" is a failure, as "was stuck"
    # is): only unsigned events must agree on it (on the tune half, top-1 at alpha 0 went from 28% to 33%)
    if a.negated != b.negated and not (a.sign and b.sign):
        return 0.0
    if a is not b and a.mode == "goal" and a.action == b.action == "want":
        # two goals told by their frame verbs alone ("wanted honey", "wanting more bowls"): what was wanted is
        # not in the event, so the shared "want" is no evidence that the goals correspond; they match as any two
        # events with nothing in common do (on the tune half a `thwarts` edge into want / want gave another set's
        # story 4 x 1.0 where the true analog's "wanted the route running" gave 4 x 0.15). An episode onto
        # itself keeps the identity's full match (the self-score is unchanged).
        s = WEAK_EVENT_MATCH
    elif a.lemma == b.lemma and a.action == b.action:
        s = 1.0
    elif a.action == b.action and a.action != "other":
        s = 0.8
    elif a.sign and a.sign == b.sign or _kin(a.action, b.action):
        s = 0.6
    else:
        s = WEAK_EVENT_MATCH
    if a.valence and a.valence == b.valence:
        s += 0.2
    return min(s, 1.0)


def _kin(c1: str, c2: str) -> bool:
    return c1 in CLASS_FAMILY and CLASS_FAMILY[c1] == CLASS_FAMILY.get(c2)


def relation_match(k1: str, k2: str) -> float:
    if k1 == k2:
        return RELATION_WEIGHT[k1]
    if k1 in _CAUSAL and k2 in _CAUSAL:
        return 0.6 * min(RELATION_WEIGHT[k1], RELATION_WEIGHT[k2])
    if "precedes" in (k1, k2) and not {"prevents", "contrast"} & {k1, k2} and not HIGHER_ORDER & {k1, k2}:
        return 0.3 * RELATION_WEIGHT["precedes"]
    return 0.0


def map_episodes(cue: Episode, cand: Episode, cue_self: float | None = None, cand_self: float | None = None) -> Mapping:
    """The best one-to-one mapping of `cue` onto `cand` and its normalised systematicity."""
    best = _map(cue, cand)
    if best.raw <= 0:
        return best
    s1 = cue_self if cue_self is not None else self_score(cue)
    s2 = cand_self if cand_self is not None else self_score(cand)
    if s1 <= 0 or s2 <= 0:
        best.score = 0.0
        return best
    # the larger self-match weighs LARGER_SELF of the normaliser, the smaller the rest (a weighted geometric mean):
    # a structure the cue lacks still costs, but less than all of it (session 18)
    norm = max(s1, s2) ** LARGER_SELF * min(s1, s2) ** (1 - LARGER_SELF)
    best.score = max(0.0, min(1.0, best.raw / norm))
    return best


def self_score(ep: Episode) -> float:
    """The raw score of an episode mapped onto itself (the identity: each event onto itself has the highest
    local match and keeps every relation and role): the normaliser. Scored directly, in time linear in the
    episode, so a long document costs no pairwise search (tests/analogy/test_self_score.py checks it
    against `_map(ep, ep)`)."""
    local = {(e.id, e.id): s for e in ep.events if (s := event_match(e, e)) > 0}
    return _score(ep, ep, {a: b for a, b in local}, local, Mapping())


def _map(cue: Episode, cand: Episode) -> Mapping:
    ev1 = {e.id: e for e in cue.events}
    ev2 = {e.id: e for e in cand.events}
    local = {(a, b): s for a in ev1 for b in ev2 if (s := event_match(ev1[a], ev2[b])) > 0}
    aligned = aligned_sentences(cue, cand, local)
    if aligned is not None:
        local = {(a, b): s if (ev1[a].sentence, ev2[b].sentence) in aligned else UNALIGNED_SENTENCES * s
                 for (a, b), s in local.items()}
    kernels: list[tuple[float, tuple[tuple[str, str], ...], float]] = []
    by_pair: dict[tuple[str, str], list[int]] = {}
    for k1, a1, b1 in cue.relations:
        for k2, a2, b2 in cand.relations:
            w = relation_match(k1, k2)
            s_a, s_b = local.get((a1, a2), 0.0), local.get((b1, b2), 0.0)
            if w and s_a and s_b:
                for pair in ((a1, a2), (b1, b2)):
                    by_pair.setdefault(pair, []).append(len(kernels))
                kernels.append((w * min(s_a, s_b), ((a1, a2), (b1, b2)), s_a + s_b))
    # a kernel's priority: its worth, that of the relation matches sharing one of its event pairs (support),
    # and its events' own matches; a lone event pair's priority is its match
    def consistent(pairs: tuple[tuple[str, str], ...], other: tuple[tuple[str, str], ...]) -> bool:
        return all((a == c) == (b == d) for a, b in pairs for c, d in other)

    ranked = [(worth + sum(kernels[j][0] for pair in pairs for j in by_pair[pair]
                           if j != i and consistent(pairs, kernels[j][1])) + events, pairs)
              for i, (worth, pairs, events) in enumerate(kernels)]
    ranked += [(s, (pair,)) for pair, s in local.items()]
    # ties go to the pairs told at the nearest positions (an episode onto itself: the identity)
    ranked.sort(key=lambda k: (-round(k[0], 9), sum(abs(ev1[a].order - ev2[b].order) for a, b in k[1])))
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for _, pairs in ranked:
        if all(forward.get(a, b) == b and backward.get(b, a) == a for a, b in pairs):
            for a, b in pairs:
                forward[a], backward[b] = b, a
    out = Mapping()
    out.raw = _score(cue, cand, forward, local, out)
    return out


def aligned_sentences(cue: Episode, cand: Episode, local: dict[tuple[str, str], float]
                      ) -> set[tuple[int, int]] | None:
    """The pairs of sentences (cue sentence, candidate sentence) that correspond when two stories are told in
    parallel: the order-keeping alignment of their sentences (each sentence paired with at most one, pairs in the
    order of both tellings, sentences may be left out) whose pairs hold the most event likeness (for each cue
    event, its best match among the candidate sentence's events; Needleman-Wunsch with free gaps). A story is told
    in order, and an analog tells the corresponding step where the story told it: an event matched across two
    sentences that do not correspond is likely a chance likeness (a failure early in one story onto the failure
    that ends another). None (no alignment: every pair counts fully) when either side tells a single sentence or
    one tells more than twice as many sentences as the other: a one-line cue or a summary is not a parallel
    telling of a long story."""
    ev1 = {e.id: e.sentence for e in cue.events}
    ev2 = {e.id: e.sentence for e in cand.events}
    s1, s2 = sorted(set(ev1.values())), sorted(set(ev2.values()))
    n, m = len(s1), len(s2)
    if min(n, m) < 2 or max(n, m) > 2 * min(n, m):
        return None
    at1 = {v: i for i, v in enumerate(s1)}
    at2 = {v: j for j, v in enumerate(s2)}
    best: dict[tuple[str, int], float] = {}  # (cue event, candidate sentence) -> its best match there
    for (a, b), s in local.items():
        key = (a, at2[ev2[b]])
        if s > best.get(key, 0.0):
            best[key] = s
    gain = [[0.0] * m for _ in range(n)]
    for (a, j), s in best.items():
        gain[at1[ev1[a]]][j] += s
    total = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            total[i][j] = max(total[i - 1][j], total[i][j - 1], total[i - 1][j - 1] + gain[i - 1][j - 1])
    pairs: set[tuple[int, int]] = set()
    i, j = n, m
    while i > 0 and j > 0:
        if gain[i - 1][j - 1] > 0 and total[i][j] == total[i - 1][j - 1] + gain[i - 1][j - 1]:
            pairs.add((s1[i - 1], s2[j - 1]))
            i, j = i - 1, j - 1
        elif total[i][j] == total[i - 1][j]:
            i -= 1
        else:
            j -= 1
    return pairs


def _score(cue: Episode, cand: Episode, forward: dict[str, str], local: dict[tuple[str, str], float],
           out: Mapping) -> float:
    """The raw score of a one-to-one event mapping; fills `out`'s events, relations and participants."""
    raw = 0.0
    rel2 = {(a, b): k for k, a, b in cand.relations}
    mapped: list[tuple[str, str, str, str, str]] = []
    weights: list[float] = []
    for k1, a1, b1 in cue.relations:
        if a1 not in forward or b1 not in forward:
            continue
        a2, b2 = forward[a1], forward[b1]
        kind2 = rel2.get((a2, b2))
        w = relation_match(k1, kind2) if kind2 is not None else 0.0
        if w:
            raw += w * min(local[(a1, a2)], local[(b1, b2)])
            mapped.append((k1, a1, b1, a2, b2))
            weights.append(w)
    held: dict[str, list[int]] = {}
    for n, r in enumerate(mapped):
        for v in {r[1], r[2]}:
            held.setdefault(v, []).append(n)
    connected: set[tuple[int, int]] = set()
    for rels in held.values():
        connected.update((i, j) for x, i in enumerate(rels) for j in rels[x + 1:])
    raw += CONNECTED * sum(min(weights[i], weights[j]) for i, j in connected)
    related = {v for _, a, b in cue.relations for v in (a, b)}  # events in the cue's own relational structure
    order1 = {e.id: e.order for e in cue.events}
    order2 = {e.id: e.order for e in cand.events}
    pairs = sorted(forward.items(), key=lambda p: order1[p[0]])
    for a, b in pairs:
        s = local[(a, b)]
        out.events.append((a, b, round(s, 3)))
        raw += (EVENT_IN_RELATION if a in held or a not in related else EVENT_ALONE) * s
    raw += _map_participants(cue, cand, forward, out)
    if cue is not cand:  # the identity reverses nothing
        # every mapped pair's order, lone events too: a story is told in order, and a mapping that scrambles
        # its events is less of an analogy (tune half, alpha 0: top-1 31% -> 36%, MRR 0.43 -> 0.47, against the
        # pairs in mapped relations alone)
        later = [order2[b] for _, b in pairs]
        n = len(later) * (len(later) - 1) // 2
        raw *= 1 - ORDER_PENALTY * _inversions(later) / max(1, n)
    out.relations = mapped
    return raw


def _inversions(values: list[int]) -> int:
    """How many pairs of `values` are out of order (bisect into the sorted prefix: a document's hundreds of events
    cost no quadratic Python loop)."""
    seen: list[int] = []
    count = 0
    for v in values:
        at = bisect_right(seen, v)
        count += len(seen) - at
        seen.insert(at, v)
    return count


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
