"""Entities: names from spaCy's NER, merged into canonical ids, kept in a registry with types and aliases.

A canonical id is the entity's most used name, normalised (lower case, `&` -> `and`): "meridian
analytics". Short forms seen in the corpus ("Meridian", "Dana") join the longer name they start (or, for
people, end) when that is the only such name. The registry lives in the record store's SQLite file, so
`--entity-id meridian` (an alias) or `--entity-id merid` (a prefix) finds "meridian analytics", and an
ambiguous name is an error that lists the candidates.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from functools import lru_cache

from engine.names import GENERIC_TERMS, TEXT_FUNCTION_CACHE, clean_name, normalise, word_set
from engine.store.entities import EntityRecord

# spaCy NER label -> registry type. NORP ("Meridian" read as a nationality) and works of art only count
# when they resolve to an entity seen with a real type.
LABEL_TYPES = {
    "PERSON": "person",
    "ORG": "organization",
    "PRODUCT": "product",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "EVENT": "event",
    "NORP": "unknown",
    "WORK_OF_ART": "unknown",
}
# A last word that makes a name an organisation whatever the NER said ("Kestrel Labs" is not a person).
ORG_SUFFIXES = word_set(
    """
    inc corp corporation co ltd llc plc gmbh ag sa labs lab software analytics security health network beverages
    cells creative metrics retail logistics storage home bakery clinic systems group bank partners technologies
    technology media bistro capital ventures holdings foods studios solutions services consulting cloud airlines
    motors pharma university institute foundation
    """
)
# Words in a name that make it an organisation wherever they stand ("Bistro Lumen", "Northside Family Clinic").
ORG_WORDS = word_set(
    """
    bistro restaurant cafe bakery clinic hospital bank hotel agency studio school college university foundation
    institute network labs
    """
)
# A name made only of these words is a role, a document or a term, not an entity ("General Counsel",
# "Data Processing Agreement", "Annex 3", "SOC 2 Type II").
_TERM_WORDS = word_set(
    """
    data processing protection agreement officer general counsel head chief vice president director manager lead
    sales operations annex clause section type ii iii of the and for to team committee board risk legal
    engineering finance marketing security review report policy
    """
)
_STOP_ALIASES = word_set(
    """
    the a an and of new north south east west first global united general
    """
)


@lru_cache(maxsize=TEXT_FUNCTION_CACHE)
def mention_type(text: str, label: str) -> str | None:
    """Registry type of an NER mention, or None when it is not an entity we keep."""
    kind = LABEL_TYPES.get(label)
    if kind is None:
        return None
    name = normalise(text)
    if not name or not re.search(r"[a-z]", name) or name in GENERIC_TERMS:
        return None
    words = name.split()
    if all(w in _TERM_WORDS or w in GENERIC_TERMS or not re.search(r"[a-z]", w) for w in words):
        return None
    if (words[-1] in ORG_SUFFIXES or ORG_WORDS & set(words)) and kind in ("person", "place", "unknown", "product"):
        return "organization"
    return kind


def aliases_for(record: EntityRecord) -> set[str]:
    """The id, the names it was seen under, and its first (people: first and last) word."""
    out = {record.id, *record.aliases}
    words = record.id.split()
    if len(words) > 1:
        if len(words[0]) >= 3 and words[0] not in _STOP_ALIASES:
            out.add(words[0])
        if record.type == "person" and len(words[-1]) >= 3:
            out.add(words[-1])
    return {a for a in out if a}


class EntityResolver:
    """Merges the mentions of one run with the registry into canonical ids (pure: no I/O)."""

    def __init__(self, known: Iterable[EntityRecord] = ()) -> None:
        self.known = {r.id: r for r in known}
        self._alias_index: dict[str, set[str]] = defaultdict(set)
        self.counts: Counter[str] = Counter()
        self.votes: dict[str, Counter[str]] = defaultdict(Counter)
        self.surface: dict[str, Counter[str]] = defaultdict(Counter)
        self._canonical: dict[str, str] = {}
        self.records: dict[str, EntityRecord] = {}
        self._reset()

    def _reset(self) -> None:
        """Forget every decision (groups, ids, declared names): only the registry and the counts stay."""
        self._alias_index = defaultdict(set)
        for r in self.known.values():
            for a in aliases_for(r):
                self._alias_index[a].add(r.id)
        self._canonical = {}
        self.records = {}

    def observe(self, name: str, kind: str, weight: int = 1) -> None:
        key = normalise(name)
        if not key:
            return
        self.counts[key] += 1
        self.votes[key][kind] += weight
        self.surface[key][clean_name(name)] += 1

    def finalize(self) -> None:
        """Group names (a name joins the unique longer name it starts), pick ids, types and aliases. Can run
        again after more `observe` calls: it decides afresh from everything observed so far."""
        self._reset()
        names = set(self.counts) | set(self.known)
        parent = {n: n for n in names}

        def find(n: str) -> str:
            while parent[n] != n:
                parent[n] = parent[parent[n]]
                n = parent[n]
            return n

        def union(a: str, b: str) -> None:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[ra] = rb

        by_prefix: dict[str, set[str]] = defaultdict(set)
        by_last: dict[str, set[str]] = defaultdict(set)
        for n in names:
            words = n.split()
            for k in range(1, len(words)):
                by_prefix[" ".join(words[:k])].add(n)
            if len(words) > 1:
                by_last[words[-1]].add(n)
        for n in names:
            if n in self.known:
                continue
            owners = self._alias_index.get(n, set())
            if len(owners) == 1:
                union(n, next(iter(owners)))
                continue
            longer = sorted(by_prefix.get(n, set()), key=lambda m: -self._weight(m))
            if longer and (len(longer) == 1 or self._weight(longer[0]) >= 2 * sum(self._weight(m) for m in longer[1:])):
                union(n, longer[0])  # the one longer name it starts, or one that dominates the others
                continue
            people = {m for m in by_last.get(n, set()) if self._type(m) == "person"}
            if len(n.split()) == 1 and len(people) == 1:
                union(n, next(iter(people)))
        groups: dict[str, list[str]] = defaultdict(list)
        for n in names:
            groups[find(n)].append(n)
        for members in groups.values():
            known = [m for m in members if m in self.known]
            if known:
                canonical = max(known, key=lambda m: (self.known[m].mentions, len(m)))
            else:
                canonical = max(members, key=lambda m: (self.counts[m], len(m.split()), m))
            votes: Counter[str] = Counter()
            for m in members:
                votes.update(self._type_votes(m))
            real = [(k, c) for k, c in votes.most_common() if k != "unknown"]
            kind = self.known[canonical].type if canonical in self.known and self.known[canonical].type != "unknown" \
                else (real[0][0] if real else "unknown")
            if kind == "unknown" and not known:
                continue  # only ever seen as NORP and the like: not an entity
            surface: Counter[str] = Counter()
            for m in members:
                surface.update(self.surface.get(m, Counter()))
            display = self.known[canonical].name if canonical in self.known else (
                max((s for s in surface if normalise(s) == canonical), key=lambda s: surface[s], default=canonical))
            record = EntityRecord(canonical, display, kind, sum(self.counts[m] for m in members),
                                  set(members) | (self.known[canonical].aliases if canonical in self.known else set()))
            self.records[canonical] = record
            for m in members:
                self._canonical[m] = canonical
        for r in self.records.values():
            for a in aliases_for(r):
                self._alias_index[a].add(r.id)

    def _weight(self, name: str) -> int:
        return self.counts.get(name, 0) + (self.known[name].mentions if name in self.known else 0)

    def _type_votes(self, name: str) -> Counter[str]:
        votes = Counter(self.votes.get(name, Counter()))
        if name in self.known:
            votes[self.known[name].type] += 1
        return votes

    def _type(self, name: str) -> str:
        real = [(k, c) for k, c in self._type_votes(name).most_common() if k != "unknown"]
        return real[0][0] if real else "unknown"

    def canonical(self, name: str | None) -> str | None:
        """The canonical id of a mention (None if it is not an entity)."""
        if not name:
            return None
        key = normalise(name)
        found = self._canonical.get(key)
        if found:
            return found
        owners = self._alias_index.get(key, set())
        return next(iter(owners)) if len(owners) == 1 else None

    def declared(self, value: str, document_mentions: Iterable[str]) -> str:
        """The canonical id for a frontmatter `entity_id:`; it becomes an alias of that entity."""
        key = normalise(value)
        raw = " ".join(value.strip().lower().split())
        choice = self.canonical(key)
        if choice is None:
            words = key.split()
            local = Counter(m for m in document_mentions if m)

            def matches(cid: str) -> bool:
                cwords = cid.split()
                return cwords[: len(words)] == words or set(words) <= set(cwords)

            mine = [m for m, _ in local.most_common() if matches(m)]
            if mine:
                choice = mine[0]
            else:
                everywhere = [c for c in self.records if matches(c)]
                choice = everywhere[0] if len(everywhere) == 1 else key
        record = self.records.get(choice)
        if record is None:
            record = self.records[choice] = EntityRecord(choice, value.strip(), "topic", 0, set())
        record.aliases.update({key, raw})
        for a in (key, raw):
            self._alias_index[a].add(choice)
        self._canonical.setdefault(key, choice)
        return choice

    def type_of(self, entity_id: str | None) -> str | None:
        if entity_id is None:
            return None
        record = self.records.get(entity_id) or self.known.get(entity_id)
        return record.type if record else None


def resolution_rows(resolver: EntityResolver) -> list[tuple[EntityRecord, tuple[str, ...]]]:
    """The resolver's entities with their aliases, as the registry stores them (`AlsoWrite.entities`)."""
    return [(r, tuple(aliases_for(r))) for r in resolver.records.values()]
