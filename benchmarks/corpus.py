"""A synthetic corpus for the speed benchmark: deterministic in (n, seed), realistic in shape.

N memories over many entities (about one per hundred memories), timestamps spread over a year, varied
importance and access counts, and a typed edge graph with realistic fan-out: each entity's memories form a
`followed_by` chain, about a third of memories were `caused_by` one to three earlier ones (some causes are
hubs: preferential attachment), and a few are `related_to` another entity's memory. Text is drawn from
templates over several domains (incidents, sales, launches, legal, support, hiring, personal notes), with
the cause/outcome words the analogical strategy keys on, so every strategy has real work to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

YEAR_START = datetime(2025, 1, 1, tzinfo=UTC)
YEAR_SECONDS = 365 * 24 * 3600

_PREFIX = [
    "acme",
    "globex",
    "initech",
    "umbrella",
    "stark",
    "wayne",
    "hooli",
    "vandelay",
    "wonka",
    "tyrell",
    "cyberdyne",
    "soylent",
    "aperture",
    "massive",
    "oceanic",
    "pied",
    "nakatomi",
    "gringotts",
    "monarch",
    "dunder",
    "sirius",
    "zenith",
    "blue",
    "red",
    "north",
    "east",
    "silver",
    "iron",
    "quantum",
    "delta",
]
_SUFFIX = [
    "logistics",
    "labs",
    "retail",
    "bank",
    "health",
    "media",
    "energy",
    "foods",
    "travel",
    "robotics",
    "insurance",
    "telecom",
    "motors",
    "pharma",
    "studios",
    "security",
    "cloud",
    "analytics",
    "farms",
    "airlines",
    "hotels",
    "games",
    "textiles",
    "mining",
    "shipping",
]
_KINDS = ["customer", "service", "team", "project", "person"]
_PEOPLE = [
    "Alice",
    "Bob",
    "Chen",
    "Dana",
    "Emeka",
    "Farah",
    "Gus",
    "Hana",
    "Ivan",
    "Jun",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Viktor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zoe",
]
_PRODUCTS = [
    "checkout service",
    "mobile app",
    "billing API",
    "search index",
    "recommendation engine",
    "data warehouse",
    "payment gateway",
    "login page",
    "analytics dashboard",
    "inventory system",
    "shipping tracker",
    "chat widget",
    "pricing page",
    "onboarding flow",
    "reporting pipeline",
    "notification service",
    "partner portal",
    "loyalty program",
    "fraud model",
    "support bot",
]
_CAUSES = [
    "skipped load testing",
    "rushed the release ahead of the deadline",
    "a misconfigured DNS record",
    "an expired TLS certificate",
    "a traffic spike from a marketing campaign",
    "untested database migration",
    "a typo in the feature flag",
    "insufficient capacity in the eu region",
    "an unapproved schema change",
    "a stale cache entry",
    "missed code review",
    "a breach of the rate limit agreement",
    "compressed QA timeline",
    "wrong timezone handling",
    "an unannounced API change by a vendor",
]
_OUTCOMES = [
    "the outage lasted two hours",
    "customers churned",
    "refunds were issued",
    "the launch was delayed",
    "the release succeeded smoothly",
    "revenue grew by 12 percent",
    "complaints doubled",
    "the rollout was paused",
    "the team won the renewal",
    "the project stalled",
    "a penalty clause was triggered",
    "the deal was lost",
    "sign-ups exceeded the forecast",
    "the service crashed twice",
    "the board praised the result",
]
_TOPICS = [
    "pricing",
    "roadmap",
    "security review",
    "quarterly targets",
    "hiring plan",
    "vendor contract",
    "data retention",
    "on-call rotation",
    "budget",
    "travel policy",
    "office move",
    "training",
    "performance review",
    "customer feedback",
    "accessibility audit",
]
_FEELINGS = ["worried", "optimistic", "frustrated", "relieved", "excited", "skeptical", "confident", "tired"]
_ACTIONS = [
    "launched",
    "migrated",
    "signed",
    "renewed",
    "escalated",
    "replaced",
    "released",
    "negotiated",
    "postponed",
    "reviewed",
    "updated",
    "audited",
]

_TEMPLATES = [
    "{entity}: the {product} failed because the team {cause}; {outcome}.",
    "Incident at {entity}: {product} went down after {cause}. {person} paged the on-call; {outcome}.",
    "Postmortem for {entity}: root cause was {cause}, and as a result {outcome}.",
    "{person} from {entity} reported that the {product} is slow again since {cause}.",
    "{entity} {action} the {product} on schedule and {outcome}.",
    "Sales call with {entity}: {person} asked for a discount on the {product}; they seem {feeling}.",
    "{entity} signed a {months}-month contract for the {product} worth {amount} thousand dollars.",
    "{entity} objected to the pricing of the {product}; {person} offered a {percent} percent discount.",
    "Legal flagged a {topic} risk in the {entity} agreement: {cause}.",
    "{person} notified {entity} of a breach of the {topic} clause; a penalty may apply.",
    "Launch retro for the {product} at {entity}: we {action} it early, {outcome}.",
    "Support ticket from {entity}: the {product} shows wrong totals after {cause}.",
    "{person} escalated a {topic} issue at {entity} to the leadership team.",
    "Meeting notes ({entity}): discussed {topic} and {topic2}; {person} will follow up next week.",
    "{person} is {feeling} about the {topic} at {entity} after the last sprint.",
    "Reminder: renew the {product} licence for {entity} before the end of the quarter.",
    "{entity} migrated the {product} to a new region; {outcome}.",
    "Customer {entity} praised the {product} in the quarterly business review with {person}.",
    "{person} shipped a fix for the {product} at {entity}; the bug came from {cause}.",
    "Hiring: {entity} needs two engineers for the {product}; {person} is leading interviews.",
    "{entity} postponed the {product} rollout because of {cause}.",
    "Budget review at {entity}: {topic} spend is {percent} percent over plan, {person} is {feeling}.",
    "{person} and {person2} paired on the {product} for {entity} and {action} it in {days} days.",
    "Quote sent to {entity}: {amount} thousand dollars for the {product}, valid for {days} days.",
    "Security review of the {product} at {entity} found {cause}; {outcome}.",
    "{entity} replaced their old vendor with our {product}; onboarding took {days} days.",
    "Churn risk: {entity} has not logged into the {product} for {days} days.",
    "{person} wrote the runbook for the {product} after {cause} at {entity}.",
    "Personal note: {person} prefers short status updates about the {topic} at {entity}.",
    "Forecast update for {entity}: {outcome} after we {action} the {product}.",
]

_CUE_TEMPLATES = [
    "why did the {product} fail at {entity}?",
    "what happened after {cause}?",
    "which customers were unhappy with the {product}?",
    "contract renewals and pricing discussions with {entity}",
    "incidents caused by {cause}",
    "what did {person} say about the {topic}?",
    "launches that were rushed and what followed",
    "{entity} {product} outage root cause",
    "security findings in the {product}",
    "budget overruns on {topic}",
]


@dataclass(frozen=True, slots=True)
class SynthMemory:
    content: str
    entity_id: str
    created_at: datetime
    importance: float
    context: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Cue:
    """A recall cue, with the entity whose timeline the temporal strategy reads."""

    text: str
    entity_id: str


@dataclass
class Corpus:
    n: int
    seed: int
    memories: list[SynthMemory]
    # (source index, target index, edge type, confidence); `caused_by`: the source was caused by the target.
    edges: list[tuple[int, int, str, float]]
    access_counts: np.ndarray
    entities: list[str]
    stats: dict[str, Any] = field(default_factory=dict)

    def texts(self) -> list[str]:
        return [m.content for m in self.memories]


def _entities(rng: np.random.Generator, count: int) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < count:
        name = f"{rng.choice(_KINDS)}:{rng.choice(_PREFIX)}-{rng.choice(_SUFFIX)}"
        if name in seen:
            name = f"{name}-{len(names)}"
        seen.add(name)
        names.append(name)
    return names


def _fill(rng: np.random.Generator, template: str, entity: str) -> str:
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731 - tiny local helper
    return template.format(
        entity=entity.split(":", 1)[1],
        product=pick(_PRODUCTS),
        cause=pick(_CAUSES),
        outcome=pick(_OUTCOMES),
        person=pick(_PEOPLE),
        person2=pick(_PEOPLE),
        topic=pick(_TOPICS),
        topic2=pick(_TOPICS),
        feeling=pick(_FEELINGS),
        action=pick(_ACTIONS),
        months=int(rng.choice([6, 12, 18, 24, 36])),
        amount=int(rng.integers(5, 900)),
        percent=int(rng.integers(3, 40)),
        days=int(rng.integers(2, 90)),
    )


def generate(n: int, seed: int = 7) -> Corpus:
    """`n` memories in chronological (insertion) order, their edges and access counts."""
    rng = np.random.default_rng(seed)
    n_entities = max(5, n // 100)
    entities = _entities(rng, n_entities)
    # Entity activity is skewed (a few busy customers, many quiet ones).
    weights = rng.pareto(1.2, n_entities) + 1.0
    weights /= weights.sum()
    owner = rng.choice(n_entities, size=n, p=weights)
    offsets = np.sort(rng.uniform(0, YEAR_SECONDS, size=n))
    importance = np.clip(rng.beta(2.0, 3.0, size=n), 0.0, 1.0)
    template_ids = rng.integers(len(_TEMPLATES), size=n)

    memories = []
    for i in range(n):
        entity = entities[owner[i]]
        memories.append(
            SynthMemory(
                content=_fill(rng, _TEMPLATES[template_ids[i]], entity),
                entity_id=entity,
                created_at=YEAR_START + timedelta(seconds=float(offsets[i])),
                importance=round(float(importance[i]), 3),
                context={"source": "synthetic", "template": int(template_ids[i]), "seq": i},
            )
        )

    edges: list[tuple[int, int, str, float]] = []
    last_of: dict[int, int] = {}
    recent_of: dict[int, list[int]] = {}
    hub_pool: list[int] = []  # every chosen cause is appended: popular causes get picked more (hubs)
    for i in range(n):
        e = int(owner[i])
        if e in last_of:
            edges.append((last_of[e], i, "followed_by", 1.0))
        last_of[e] = i
        history = recent_of.setdefault(e, [])
        if i > 0 and rng.random() < 0.33:
            fan = int(rng.choice([1, 2, 3], p=[0.7, 0.2, 0.1]))
            causes: set[int] = set()
            for _ in range(fan):
                r = rng.random()
                if history and r < 0.55:
                    c = history[-1 - int(rng.integers(min(len(history), 10)))]
                elif hub_pool and r < 0.8:
                    c = hub_pool[int(rng.integers(len(hub_pool)))]
                else:
                    c = int(rng.integers(max(0, i - 2000), i))
                causes.add(c)
            for c in causes:
                edges.append((i, c, "caused_by", round(float(rng.uniform(0.5, 1.0)), 2)))
                hub_pool.append(c)
        if i > 0 and rng.random() < 0.05:
            edges.append((i, int(rng.integers(0, i)), "related_to", round(float(rng.uniform(0.3, 0.9)), 2)))
        history.append(i)
        if len(history) > 10:
            del history[0]

    # Access counts: most memories were never recalled, a few very often (Zipf).
    access = np.where(rng.random(n) < 0.3, np.minimum(rng.zipf(1.8, n), 200), 0).astype(np.int64)
    indeg: dict[int, int] = {}
    for _, t, kind, _c in edges:
        if kind == "caused_by":
            indeg[t] = indeg.get(t, 0) + 1
    stats = {
        "entities": n_entities,
        "edges": len(edges),
        "edges_by_type": {k: sum(1 for x in edges if x[2] == k) for k in ("followed_by", "caused_by", "related_to")},
        "max_cause_in_degree": max(indeg.values(), default=0),
        "memories_with_accesses": int((access > 0).sum()),
    }
    return Corpus(n, seed, memories, edges, access, entities, stats)


def cues(corpus: Corpus, count: int, seed: int = 11) -> list[Cue]:
    """Cues phrased unlike the memories (questions, topics), each paired with an entity that has a timeline."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        memory = corpus.memories[int(rng.integers(corpus.n))]
        template = _CUE_TEMPLATES[int(rng.integers(len(_CUE_TEMPLATES)))]
        out.append(Cue(_fill(rng, template, memory.entity_id), memory.entity_id))
    return out


def fresh_texts(count: int, seed: int, entities: list[str]) -> list[tuple[str, str]]:
    """(text, entity) pairs for timed writes: new text, so the write path really runs the model."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        entity = entities[int(rng.integers(len(entities)))]
        text = _fill(rng, _TEMPLATES[int(rng.integers(len(_TEMPLATES)))], entity)
        out.append((f"{text} (note {seed}-{i})", entity))
    return out
