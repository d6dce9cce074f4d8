"""From a cue to a full-text query: the words that carry meaning, each optional (OR), quoted for FTS5.

Question words and function words ("what", "did", "the") are dropped: they match nearly every memory and
only add noise to BM25. Quoting each term keeps FTS5 syntax (AND, NEAR, `-`, `*`) out of users' cues.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)

_STOPWORD_TEXT = """
    a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
    few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
    herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more
    most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which
    while who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself
    yourselves
    also ever likely might may much many kind sort thing things get got
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def terms(cue: str) -> list[str]:
    """The cue's content words, lower-cased, in order, without repeats."""
    words = [w.lower() for w in _WORD.findall(cue)]
    kept = [w.split("'")[0] if "'" in w else w for w in words if w not in STOPWORDS]
    return list(dict.fromkeys(w for w in kept if w and w not in STOPWORDS))


def match_expression(cue: str) -> str | None:
    """An FTS5 MATCH expression: any of the cue's content words; None when it has none."""
    words = terms(cue)
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words)
