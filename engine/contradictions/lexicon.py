"""Word lists the contradiction checks read: opposites, revision cues, and values named by words.

Opposites come two ways: the listed pairs below (everyday predicates and states), and morphology for the
rest (`married`/`unmarried`, `like`/`dislike`, `possible`/`impossible`), so an unlisted word with a
negating prefix is still recognised. Both are lemmas, lower case.
"""

from __future__ import annotations

from collections.abc import Iterable

_PAIRS = """
accept reject; allow ban; allow forbid; allow prohibit; approve reject; approve deny; approve decline;
win lose; pass fail; succeed fail; success failure; successful unsuccessful; successful failed;
success fail; open close; open closed;
on off; enable disable; enabled disabled; start stop; start finish; begin end; arrive depart; arrive leave;
buy sell; lend borrow; give take; add remove; increase decrease; rise fall; raise lower; gain lose;
profit loss; include exclude; love hate; like hate; like dislike; agree disagree; remember forget;
positive negative; high low; higher lower; long short; longer shorter; tall short; taller shorter;
old young; older younger; old new; new used; big small; large small; bigger smaller; larger smaller;
heavy light; hot cold; warm cold; fast slow; faster slower; early late; earlier later; cheap expensive;
rich poor; full empty; quiet noisy; quiet loud; clean dirty; safe dangerous; easy hard; easy difficult;
simple complex; strong weak; healthy sick; healthy ill; alive dead; present absent; public private;
internal external; mandatory optional; required optional; compulsory optional; legal illegal; true false;
correct incorrect; right wrong; valid invalid; senior junior; north south; east west; above below;
inside outside; before after; up down; in out; top bottom; front back; left right; first last;
always never; everyone nobody; everything nothing; all none; many few; more less; more fewer; most least;
married single; married divorced; employed unemployed; awake asleep; asleep awake; wet dry;
on-time delayed; punctual late; sweet sour; salty bland; spicy mild; thick thin; wide narrow; deep shallow;
bright dark; light dark; soft hard; smooth rough; sharp dull; happy sad; calm angry; vegetarian carnivore;
active inactive; online offline; available unavailable; busy free; paid unpaid; paid free; win draw;
lose draw; accepted rejected; approved denied; approved rejected; approved declined; confirmed cancelled;
confirm cancel; attend miss; catch miss; hit miss; found lost; find lose; join leave; hire fire;
promote demote; include omit; permit forbid; permit ban; possible impossible; likely unlikely;
friendly hostile; generous stingy; same different; similar different; visible hidden; known unknown;
""".strip()

_NEGATING_PREFIXES = ("un", "dis", "in", "im", "il", "ir", "non", "non-", "mis")

ANTONYMS: frozenset[frozenset[str]] = frozenset(
    frozenset(pair.split()) for pair in _PAIRS.replace("\n", " ").split(";") if len(pair.split()) == 2
)

NEGATIONS = frozenset({"not", "n't", "never", "no", "none", "nobody", "nothing", "neither", "nor", "without"})

# Words that say a statement replaces an earlier one. Single lemmas count when they head the clause or
# modify its verb; phrases are matched on the lower-cased text.
REVISION_VERBS = frozenset({
    "change", "switch", "move", "relocate", "reschedule", "postpone", "delay", "extend", "replace", "upgrade",
    "downgrade", "migrate", "transfer", "quit", "stop", "become", "renew", "raise", "cut", "increase",
    "decrease", "reduce", "update", "repaint", "rename", "refinance", "convert", "promote", "demote", "retire",
    "resign", "leave", "divorce", "marry", "sell", "close", "shut", "cancel", "drop", "rotate",
})
REVISION_ADVERBS = frozenset({"now", "anymore", "instead", "currently", "nowadays", "longer"})
REVISION_PHRASES = (
    "no longer", "not anymore", "any more", "anymore", "changed to", "changed from", "switched to",
    "switched from", "moved to", "moved from", "from now on", "used to", "instead of", "has become",
    "have become", "took over", "was replaced", "were replaced", "is now", "are now", "got married",
    "from next", "as of", "went up", "went down", "has been moved", "was moved",
)

WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"})
MONTHS = frozenset({
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december",
})
NUMBER_WORDS = frozenset({
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty",
    "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "million", "billion",
    "single", "double", "once", "twice", "half", "dozen",
})


def opposite(x: str, y: str) -> bool:
    """True when two lemmas are opposites: a listed pair, or one is the other with a negating prefix."""
    if x == y:
        return False
    if frozenset((x, y)) in ANTONYMS:
        return True
    return _prefixed(x, y) or _prefixed(y, x)


def _prefixed(word: str, base: str) -> bool:
    return len(base) >= 4 and any(word == prefix + base for prefix in _NEGATING_PREFIXES)


def opposite_pair(left: Iterable[str], right: Iterable[str]) -> tuple[str, str] | None:
    """The first pair (one word from each side) that are opposites, or None."""
    right = list(right)
    for x in left:
        for y in right:
            if opposite(x, y):
                return x, y
    return None
