"""Content keywords: crude stems that let a phrase ("the DPA violation") find the proposition it refers to
("Meridian discovered a violation of its Data Processing Agreement") without a model.

Stems, not lemmas, so "violation"/"violated" and "change"/"changed" meet; capitalised multi-word names
also contribute their initials, so "Data Processing Agreement" meets "DPA".
"""

from __future__ import annotations

import re
from functools import lru_cache

from engine.names import TEXT_FUNCTION_CACHE, word_set

STOPWORDS = word_set(
    """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having he
    her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor
    not now of off on once only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves one two
    three four five six seven eight nine ten first second new old last next every per via yesterday today
    tomorrow week weeks day days month months year years morning afternoon evening night said says say told
    asked result resulting due led lead leads caused cause causes because instead however therefore thus hence
    also already still again never ever yet
    """
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_CAPITALISED_RUN = re.compile(r"\b(?:[A-Z][a-z]+\s+){1,5}[A-Z][a-z]+\b")
_SUFFIXES = ("ions", "ion", "ments", "ment", "ings", "ing", "ness", "edly", "ed", "ers", "er", "es", "ly", "s")



@lru_cache(maxsize=TEXT_FUNCTION_CACHE)
def stem(word: str) -> str:
    """Lower case, possessive and a common suffix removed, final `e` dropped: violation/violated -> violat."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.strip("'-")
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            w = w[: -len(suffix)]
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    if len(w) > 4 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # stopped/stop, planned/plan
    return w


def keywords(text: str) -> list[str]:
    """Distinct content stems of `text` (plus initials of capitalised names), in order of appearance."""
    out: dict[str, None] = {}
    for word in _WORD.findall(text):
        if word.lower() in STOPWORDS or len(word) < 2:
            continue
        s = stem(word)
        if s and s not in STOPWORDS:
            out[s] = None
    for run in _CAPITALISED_RUN.findall(text):
        words = [w for w in run.split() if w.lower() not in STOPWORDS]
        if len(words) >= 2:
            out["".join(w[0] for w in words).lower()] = None
    return list(out)
