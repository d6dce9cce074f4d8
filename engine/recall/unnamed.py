"""The cue without the names in it: what it asks about, for the `similarity_unnamed` fusion signal.

With a small embedding model a name dominates a short cue's vector: "What activities does Melanie do?" lies
closest to whatever Melanie said, whatever it was about, so the memories that answer it (a pottery class, a
camping trip, each said in another session) rank no higher than her small talk. The cue with the words that
name a known entity removed ("What activities does do?") is compared with each candidate's embedding as a
signal of its own; who the cue is about is still carried by `similarity` and `entity_named`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from engine.recall.lexical_query import terms

# Entities whose name words are kept: every recall asks for those of its candidates' entities (and the unnamed cue
# for all of the store's), so a store with more entities than this parses names again on every recall (4,096 on
# the 1M benchmark store of 10,000 entities: about 40 names a recall).
NAME_WORDS_KEPT = 1 << 16


@lru_cache(maxsize=NAME_WORDS_KEPT)
def name_words(entity: str) -> frozenset[str]:
    """The content words of an entity id ("melanie_smith" -> {"melanie", "smith"})."""
    return frozenset(terms(entity.replace("_", " ")))


@lru_cache(maxsize=2)
def _words_of_names(entities: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for e in entities for w in name_words(e))


_last: tuple[tuple[str, ...], frozenset[str]] | None = None  # the entities last asked for (that very tuple)


def _all_name_words(entities: tuple[str, ...]) -> frozenset[str]:
    """Every word of every entity's name: made once per set of entities (the timeline hands out the same tuple
    until an entity comes or goes), not per recall. The tuple handed out last is recognised as itself: looking
    it up in a cache hashed all of it (10,000 names: 40 us a recall)."""
    global _last
    last = _last
    if last is not None and last[0] is entities:
        return last[1]
    words = _words_of_names(entities)
    _last = (entities, words)
    return words


def unnamed(cue: str, entities: Iterable[str]) -> str | None:
    """`cue` without its words that name one of `entities` (a possessive goes with the name: "Melanie's");
    None when it names none of them, or when no content word would be left ("What did Melanie say?")."""
    asked = set(terms(cue))
    names = asked & _all_name_words(entities if isinstance(entities, tuple) else tuple(entities))
    if not names:
        return None
    kept = " ".join(word for word in cue.split() if not names.intersection(terms(word)))
    return kept if terms(kept) else None
