"""Entity names in their id form, shared by ingestion (which creates entities) and the registry (which
resolves what a user typed). Pure text functions: no I/O."""

from __future__ import annotations

import re
from functools import lru_cache

# Results of the pure word functions ingestion calls for every token or mention (names.normalise / clean_name,
# keywords.stem, entities.mention_type), kept per distinct input: the same words recur all through a corpus.
TEXT_FUNCTION_CACHE = 65536


def word_set(text: str) -> frozenset[str]:
    """A word set written as one block of text (easier to read and extend than a list)."""
    return frozenset(text.split())


# Acronyms and role words the small model tags as organisations; they name no entity.
GENERIC_TERMS = word_set(
    """
    dpa qa api ceo cto cfo coo ciso dpo vp bi it crm soc aes gps utc hr sla kpi eea gdpr erp saas sdk ui ux pr
    ip id ai ml faq roi okr usd eur q1 q2 q3 q4 h1 h2 p99 cname dns ttl cdn pos tls ssl sso
    """
)


@lru_cache(maxsize=TEXT_FUNCTION_CACHE)
def clean_name(text: str) -> str:
    """A mention as people write it: no leading article, possessive or surrounding punctuation."""
    name = " ".join(text.replace("’", "'").split())
    name = re.sub(r"^(the|a|an)\s+", "", name, flags=re.I)
    name = re.sub(r"'s?$", "", name)
    return strip_terms(name.strip(" \"'.,;:()[]"))


@lru_cache(maxsize=TEXT_FUNCTION_CACHE)
def normalise(name: str) -> str:
    """The id form of a name: lower case, `&` -> `and`, hyphens and underscores as spaces."""
    text = clean_name(name).lower().replace("&", " and ")
    text = re.sub(r"[-_/]+", " ", text)
    text = re.sub(r"[^\w. ]+", "", text)
    return " ".join(text.split()).strip(". ")


def strip_terms(name: str) -> str:
    """A name without trailing generic terms: "CloudVault DPA" -> "CloudVault"."""
    words = name.split()
    while len(words) > 1 and words[-1].lower() in GENERIC_TERMS:
        words.pop()
    return " ".join(words)
