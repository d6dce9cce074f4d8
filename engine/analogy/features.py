"""The cheap abstract-structure vector for the first (MAC) stage of analogical retrieval.

An episode becomes a set of abstract features: action classes and valences of its events, relation kinds,
and relation *chains* (`chain:omit>causes>fail`, `vchain:0>causes>-`) that say which kind of event led to
which. No names or words beyond the lexicon's classes appear, so distant domains share features. The
weighted overlap of two feature sets ranks candidates before the (dearer) structure mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engine.analogy.episode_graph import Episode, Event

FEATURE_WEIGHTS = {"chain": 3.0, "vchain": 2.0, "rel": 1.5, "act": 1.5, "val": 1.5, "role": 0.5}
_SIGN = {1: "+", -1: "-", 0: "0"}


def _label(e: Event) -> str:
    return e.action if e.action != "other" else (e.valence or "other")


def features_of(ep: Episode) -> list[str]:
    events = {e.id: e for e in ep.events}
    found: set[str] = set()
    for e in ep.events:
        if e.action != "other":
            found.add(f"act:{e.action}{'~' if e.negated else ''}")
        if e.valence:
            found.add(f"val:{e.valence}")
    for kind, a, b in ep.relations:
        ea, eb = events[a], events[b]
        found.add(f"rel:{kind}")
        found.add(f"chain:{_label(ea)}>{kind}>{_label(eb)}")
        found.add(f"vchain:{_SIGN[ea.sign]}>{kind}>{_SIGN[eb.sign]}")
    types = {p.id: p.type for p in ep.participants}
    for _, role, p in ep.roles:
        found.add(f"role:{role}:{types[p]}")
    return sorted(found)


def feature_weight(feature: str) -> float:
    return FEATURE_WEIGHTS.get(feature.split(":", 1)[0], 1.0)


def weighted_jaccard(a: Iterable[str], b: Iterable[str], weight: Callable[[str], float]) -> float:
    """Shared weight over the union's weight: 1 for the same feature set, 0 for nothing in common."""
    sa, sb = set(a), set(b)
    union = sa | sb
    if not union:
        return 0.0
    return sum(weight(f) for f in sa & sb) / sum(weight(f) for f in union)


def structural_similarity(a: Iterable[str], b: Iterable[str]) -> float:
    """Weighted Jaccard of two abstract feature sets (this module's weights)."""
    return weighted_jaccard(a, b, feature_weight)
