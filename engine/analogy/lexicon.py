"""Abstract classes of actions, outcomes and participants, so that structure survives a change of words.

An event's *action class* is what the mapper compares ("skipped", "omitted", "neglected" are all `omit`);
its *valence* says whether it is good or bad for the participants (success, failure, gain, loss, harm).
A word missing here is looked up in `wordnet_classes.tsv`, generated offline from WordNet 3.0 by
scripts/build_wordnet_classes.py (a verb gets the class of a hand-classed verb its most frequent sense is,
or sits at most two hypernym steps below; nouns get participant types; event nouns the verb they name). A
word in neither still has a lemma, and events with the same lemma match. A state, noun or modifier (not a verb)
with no hand valence takes its sign from `valence_words.tsv` (generated offline from the VADER sentiment lexicon by
scripts/build_valence_table.py: "weak", "ruined" and "stuck" say things went badly).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

# Phrasal breakdowns ("the website went down", "the van broke down", "we ran out of water"), failures: only when
# the particle has no object of its own ("went down the stairs" is a movement).
BREAKDOWNS = ("go_down", "break_down", "run_out", "fall_apart", "fall_through", "give_out", "burn_out", "wear_out",
              "pass_out", "fall_behind", "seize_up", "blow_up")
INTRANSITIVE_PHRASALS = frozenset(BREAKDOWNS)

# action class -> lemmas. A lemma belongs to one class (the first listed wins).
ACTION_CLASSES: dict[str, tuple[str, ...]] = {
    "omit": ("skip", "omit", "neglect", "ignore", "overlook", "bypass", "forget", "drop", "cut", "put_off", "cancel",
             "shorten",
             "abandon", "shortcut", "disregard", "dismiss", "waive", "postpone", "defer", "delay", "procrastinate"),
    "prepare": ("test", "check", "verify", "rehearse", "practise", "practice", "train", "prepare", "plan",
                "inspect", "review", "study", "audit", "validate", "tune", "maintain", "calibrate", "measure",
                "taste", "proofread", "double-check", "research", "drill", "exercise", "warm", "stretch",
                "back", "insure", "save", "budget", "scout", "survey", "investigate", "monitor"),
    "rush": ("rush", "hurry", "race", "speed", "accelerate", "cram", "hasten", "scramble"),
    "start": ("launch", "open", "release", "ship", "start", "begin", "debut", "introduce", "unveil", "found",
              "deploy", "roll", "publish", "premiere", "kick", "embark", "attempt", "try", "enter", "set"),
    "fail": ("fail", "collapse", "crash", "break", "flop", "sink", "burn", "lose", "miss", "falter",
             "stall", "crumble", "fall", "leak", "spoil", "die", "wilt", "burst", "explode", "malfunction",
             "misfire", "tank", "founder", "backfire", "ruin", "wreck", "derail", "lag", "struggle",
             "rot", "choke", "stumble", "trip", "overheat", "freeze", "drown", "starve", "miss",
             # mishaps: slips, breakages and lapses ("slipped on the scree", "the screen cracked", "misread")
             "slip", "tumble", "topple", "spill", "jam", "crack", "snap", "shatter", "smash", "rust", "expire",
             "stain", "bounce", "oversleep", "overcook", "flunk",
             *BREAKDOWNS),
    "succeed": ("succeed", "win", "thrive", "triumph", "excel", "flourish", "prosper", "pass", "achieve",
                "accomplish", "complete", "finish", "earn", "score", "impress", "delight", "sell", "grow",
                "bloom", "recover", "survive", "rescue", "solve", "fix", "repair", "heal", "master"),
    "harm": ("hurt", "injure", "damage", "harm", "attack", "bite", "sting", "wound", "kill", "destroy",
             "burn", "poison", "sabotage", "betray", "cheat", "steal", "rob", "trick", "deceive", "exploit",
             "bully", "insult", "threaten", "punish", "fire", "sue", "blame", "scold", "chase", "hunt", "accuse",
             "suspend", "expel", "cut_off", "twist", "sprain", "scald", "bruise", "scratch", "dent"),
    "help": ("help", "aid", "assist", "support", "save", "protect", "rescue", "defend", "shelter", "feed", "look_after",
             "care_for",
             "teach", "mentor", "guide", "nurse", "encourage", "reward", "forgive", "thank", "praise",
             "comfort", "share", "donate", "lend", "volunteer", "free", "release"),
    "give": ("give", "offer", "send", "deliver", "hand", "grant", "award", "pay", "lend", "provide",
             "supply", "present", "donate", "sell", "return", "feed", "gift"),
    "take": ("take", "grab", "seize", "steal", "buy", "acquire", "receive", "collect", "borrow", "win",
             "capture", "catch", "claim", "gather", "get", "obtain", "adopt", "hire"),
    "refuse": ("refuse", "reject", "decline", "deny", "forbid", "ban", "veto", "resist", "oppose", "quit",
               "resign", "leave", "abandon", "desert", "boycott"),
    "warn": ("warn", "alert", "caution", "advise", "tell", "inform", "notify", "report", "flag", "predict",
             "signal", "remind", "recommend", "urge", "suggest"),
    "ignore_advice": ("ignore", "dismiss", "disregard", "overrule", "defy", "disobey"),
    "prevent": ("prevent", "avoid", "stop", "block", "avert", "halt", "prohibit", "escape", "dodge",
                "deter", "hinder", "obstruct", "spare", "guard", "shield"),
    "enable": ("enable", "allow", "let", "permit", "empower", "help", "make"),
    "cause": ("cause", "lead", "result", "trigger", "provoke", "produce", "create", "spark", "bring"),
    "increase": ("increase", "raise", "expand", "grow", "double", "boost", "gain", "rise", "climb", "soar",
                 "scale", "add", "extend", "inflate", "hoard", "overspend", "overeat", "overload", "overfill",
                 "overbook", "overstretch", "overwork", "overuse", "overcommit", "overextend"),
    "decrease": ("decrease", "reduce", "shrink", "drop", "fall", "decline", "cut", "lower", "trim", "shed",
                 "slash", "lose", "sink", "plunge", "dwindle"),
    "move": ("move", "go", "travel", "walk", "run", "fly", "drive", "sail", "arrive", "leave", "return",
             "migrate", "flee", "climb", "cross", "swim", "wander", "come"),
    "communicate": ("say", "ask", "answer", "reply", "announce", "explain", "promise", "agree", "negotiate",
                    "argue", "complain", "apologise", "apologize", "call", "write", "email", "text", "talk",
                    "speak", "discuss", "persuade", "convince", "beg", "demand", "request",
                    # calling someone up (WordNet puts these under "telecommunicate", which passes on no class)
                    "phone", "telephone", "ring_up", "message"),
    "decide": ("decide", "choose", "opt", "elect", "resolve", "vote", "pick", "select", "commit"),
    "want": ("want", "wish", "hope", "desire", "need", "crave", "plan", "intend", "aim", "seek", "long"),
    "build": ("build", "make", "create", "design", "write", "develop", "construct", "compose", "invent",
              "cook", "bake", "plant", "craft", "assemble", "draft", "code", "paint", "sew", "brew"),
    "change": ("change", "switch", "replace", "update", "migrate", "convert", "swap", "modify", "upgrade",
               "reorganise", "reorganize", "restructure", "rename", "redesign", "adapt", "adjust"),
    "compete": ("compete", "race", "fight", "challenge", "battle", "rival", "contest", "play", "bet"),
    "trust": ("trust", "believe", "rely", "depend", "count"),
    "doubt": ("doubt", "suspect", "question", "mistrust", "distrust"),
    "notice": ("notice", "see", "discover", "find", "detect", "spot", "realise", "realize", "learn",
               "hear", "observe", "recognise", "recognize", "understand"),
}

# Lemmas that say how things went, whatever their action class. +1 good, -1 bad for those involved.
VALENCE_WORDS: dict[str, tuple[str, int]] = {}
for _kind, _sign, _words in (
    ("success", 1, ("succeed", "success", "successful", "win", "won", "thrive", "triumph", "excel", "flourish",
                    "prosper", "pass", "achieve", "accomplish", "impress", "delight", "praise", "smooth", "smoothly",
                    "recover", "survive", "solve", "fix", "repair", "heal", "master", "celebrate", "victory",
                    "perfect", "flawless", "flawlessly", "good", "great", "well", "safe", "safely", "happy",
                    "proud", "glad", "popular", "applaud", "reward", "bloom", "complete", "finish", "record",
                    "triumphant", "profit", "profitable", "acclaim", "promote", "promotion", "stable")),
    ("failure", -1, ("fail", "failure", "collapse", "crash", "break", "broken", "flop", "sink", "burn",
                     "falter", "stall", "crumble", "spoil", "die", "wilt", "burst", "explode", "malfunction",
                     "misfire", "tank", "backfire", "ruin", "wreck", "derail", "struggle", "rot", "choke",
                     "stumble", "disaster", "chaos", "mess", "outage", "bug", "defect", "error", "mistake",
                     "problem", "trouble", "hitch", "glitch", "late", "behind", "delay", "cancel", "abandon", "reject",
                     "fiasco", "bad",
                     "poorly", "poor", "unhappy", "sad", "angry", "embarrass", "embarrassed", "humiliate",
                     "complaint", "complain", "refund", "recall", "overheat", "freeze", "lag", "sick", "ill",
                     "bankrupt", "bankruptcy", "fired", "lose", "lost", "miss", "overrun", "stuck", "dead",
                     "disqualify", "flood", "drown", "starve", "rain", "leak", "bust", "burnout", "exhaust",
                     "exhausted", "tired", "worse", "loss", "shortage", "scandal", "fine", "penalty", "jealous",
                     "furious", "upset", "annoyed", "worried", "afraid", "scared", "ashamed", "disappointed",
                     "regret", "worn")),
    ("gain", 1, ("gain", "earn", "profit", "increase", "grow", "boost", "rise", "bonus", "raise", "win", "save",
                 "rich", "richer", "reward")),
    ("loss", -1, ("lose", "loss", "waste", "debt", "cost", "spend", "drop", "decline", "plunge", "shrink",
                  "poor", "poorer", "broke", "owe")),
    ("harm", -1, ("hurt", "injure", "injury", "damage", "harm", "attack", "bite", "sting", "wound", "kill",
                  "destroy", "poison", "sabotage", "betray", "cheat", "steal", "rob", "trick", "deceive", "bully",
                  "insult", "punish", "sue", "blame", "scold", "pain", "ache", "sprain", "tear", "bruise")),
):
    for _w in _words:
        VALENCE_WORDS.setdefault(_w, (_kind, _sign))

# A negated word of one class reads as another: "did not test" omits, "did not skip" prepares; "did not replace the
# tyres" omits (structure version 13; before, a negated change, which no telling of an omission maps onto).
NEGATED_CLASS = {"prepare": "omit", "omit": "prepare", "fail": "succeed", "succeed": "fail",
                 "help": "refuse", "warn": "omit", "rush": "prepare", "trust": "doubt", "doubt": "trust",
                 "change": "omit"}
# Verbs whose clausal complement did not happen: "forgot to lock", "failed to check", "refused to pay".
NEGATING_VERBS = frozenset({"forget", "fail", "neglect", "refuse", "decline", "skip", "omit", "avoid",
                            "stop", "quit", "cease", "prevent", "postpone", "delay", "put_off"})
# Verbs that invert the valence of what they act on: "avoided the problems" is good news.
INVERTING_VERBS = frozenset({"avoid", "prevent", "avert", "escape", "dodge", "stop", "block", "spare",
                             "survive", "overcome", "fix", "solve", "repair", "resolve"})
# Light verbs whose object carries the event: "had problems", "suffered losses", "made a mistake".
LIGHT_VERBS = frozenset({"have", "suffer", "experience", "face", "make", "get", "take", "do", "see", "meet",
                         "receive", "encounter", "endure", "hit", "run", "give"})

# Coarse participant types.
NOUN_TYPES: dict[str, str] = {}
for _type, _nouns in (
    ("person", ("person", "man", "woman", "boy", "girl", "child", "kid", "baby", "friend", "manager", "engineer",
                "chef", "cook", "doctor", "nurse", "officer", "lead", "director", "founder", "owner", "executive",
                "analyst", "developer", "ceo", "student", "teacher", "farmer", "king", "queen", "prince",
                "princess", "soldier", "captain", "sailor", "pilot", "driver", "runner", "athlete", "player",
                "coach", "climber", "hiker", "baker", "writer", "author", "artist", "singer", "musician", "actor",
                "lawyer", "judge", "mother", "father", "son", "daughter", "brother", "sister", "wife", "husband",
                "neighbour", "neighbor", "customer", "client", "patient", "user", "buyer", "seller", "merchant",
                "shopkeeper", "gardener", "scientist", "researcher", "professor", "mayor", "guard", "thief",
                "traveller", "traveler", "novice", "apprentice", "intern", "candidate", "investor", "surgeon",
                "mechanic", "carpenter", "fisherman", "hunter", "shepherd", "knight", "explorer", "volunteer",
                "boss", "employee", "colleague", "worker", "programmer", "designer", "editor", "reporter",
                "host", "guest", "landlord", "tenant", "pharmacist", "architect", "student", "rookie")),
    ("group", ("team", "crew", "staff", "family", "class", "band", "army", "crowd", "committee", "board",
               "council", "village", "villagers", "tribe", "audience", "fans", "people", "players", "students",
               "workers", "employees", "citizens", "members", "volunteers", "squad", "orchestra", "choir",
               "club", "community", "colleagues", "friends", "parents", "children", "customers", "users")),
    ("organisation", ("company", "firm", "startup", "agency", "bank", "business", "organisation",
                      "organization", "restaurant", "bakery", "cafe", "clinic", "hospital", "school", "university",
                      "store", "shop", "vendor", "supplier", "government", "ministry", "city", "council", "lab",
                      "studio", "publisher", "airline", "brand", "retailer", "manufacturer", "factory", "charity",
                      "league", "department", "newspaper", "hotel", "museum", "library", "church")),
    ("animal", ("dog", "cat", "fox", "wolf", "bear", "bird", "crow", "lion", "mouse", "rabbit", "horse", "cow",
                "sheep", "goat", "pig", "ant", "bee", "squirrel", "tortoise", "hare", "fish", "owl", "eagle",
                "snake", "frog", "deer", "monkey", "elephant", "tiger", "duck", "hen", "chicken", "puppy",
                "kitten", "beaver", "spider", "shark", "whale", "dolphin", "parrot", "raven")),
    ("artefact", ("app", "application", "product", "device", "software", "feature", "platform", "service",
                  "website", "site", "tool", "model", "version", "phone", "car", "system", "machine", "engine",
                  "bridge", "building", "house", "boat", "ship", "plane", "robot", "computer", "server",
                  "database", "code", "release", "cake", "bread", "dish", "meal", "soup", "souffle", "soufflé",
                  "roof", "wall", "dam", "tower", "road", "tent", "bike", "bicycle", "rocket", "satellite",
                  "camera", "battery", "sensor", "pump", "engine", "book", "novel", "paper", "report", "song",
                  "album", "film", "play", "painting", "garden", "crop", "plant", "tree", "network", "update",
                  "patch", "contract", "plan", "recipe", "menu", "bottle", "rope", "ladder", "key", "lock")),
    ("place", ("town", "country", "region", "island", "mountain", "river", "lake", "sea", "forest", "field",
               "farm", "office", "warehouse", "kitchen", "market", "street", "park", "camp", "harbour", "harbor",
               "valley", "desert", "coast", "stadium", "arena", "stage", "venue")),
):
    for _n in _nouns:
        NOUN_TYPES.setdefault(_n, _type)

ENTITY_LABEL_TYPES = {"PERSON": "person", "NORP": "group", "ORG": "organisation", "GPE": "place",
                      "LOC": "place", "FAC": "place", "PRODUCT": "artefact", "WORK_OF_ART": "artefact",
                      "EVENT": "event"}
# Words before a name that say it is a person's ("Dr. Okafor", "Mrs Lee", "Nurse Okafor", "Aunt Clara"): the small
# model types such names as places or organisations; with a title the name is a person's, whatever its label.
PERSON_TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "doctor", "prof", "professor", "nurse", "coach",
                           "aunt", "auntie", "uncle", "grandma", "grandpa", "granny", "grandad", "grandmother",
                           "grandfather", "chef", "captain", "capt", "sir", "dame", "lady", "lord", "judge", "officer",
                           "sergeant", "father", "mother", "sister", "brother", "mrs.", "inspector", "detective",
                           "pastor", "reverend", "rev", "madam", "madame", "mister", "señor", "senor", "herr", "frau"})
# English nouns and titles that say a person's gender ("her son", "Mrs Ivanova", "the old woman"): a pronoun of the
# other gender never points to them. Closed-class words of the language, not names: a name's gender is learned only
# from the pronouns that point to it.
MALE_WORDS = frozenset({"man", "boy", "son", "father", "dad", "daddy", "husband", "brother", "uncle", "nephew",
                        "grandfather", "grandpa", "grandad", "grandson", "king", "prince", "gentleman", "boyfriend",
                        "stepfather", "stepson", "mr", "mister", "sir", "lord", "herr", "señor", "senor", "monk",
                        "policeman", "businessman"})
FEMALE_WORDS = frozenset({"woman", "girl", "daughter", "mother", "mum", "mom", "mummy", "wife", "sister", "aunt",
                          "auntie", "niece", "grandmother", "grandma", "granny", "granddaughter", "queen", "princess",
                          "lady", "girlfriend", "stepmother", "stepdaughter", "mrs", "ms", "miss", "madam", "madame",
                          "dame", "frau", "nun", "policewoman", "businesswoman", "landlady", "waitress", "actress",
                          "bride"})
# Manner words that make an act a rush ("painted the fence in a hurry", "wrote it in a panic", "hastily") or an
# act against advice ("laughs and plays it anyway"), when the verb's own class says less (a generic class).
HASTE_NOUNS = frozenset({"hurry", "rush", "panic", "haste"})
HASTE_ADVERBS = frozenset({"hastily", "hurriedly", "carelessly", "recklessly", "sloppily", "rashly", "frantically"})
DEFIANCE_ADVERBS = frozenset({"anyway", "anyhow", "regardless", "nevertheless", "nonetheless"})
DEFERRAL_ADVERBS = frozenset({"later", "tomorrow", "someday", "afterwards"})
GENERIC_CLASSES = frozenset({"other", "move", "take", "give", "communicate", "change", "build", "notice", "decide",
                             "start", "compete"})
PRONOUN_TYPES = {"i": "person", "he": "person", "she": "person", "him": "person", "her": "person",
                 "me": "person", "we": "group", "us": "group", "they": "group", "them": "group",
                 "you": "person", "it": "thing", "someone": "person", "everyone": "group", "nobody": "person"}

_CLASS_OF: dict[str, str] = {}
for _cls, _lemmas in ACTION_CLASSES.items():
    for _lemma in _lemmas:
        _CLASS_OF.setdefault(_lemma, _cls)


# What an event of a class says about how things went, for words with no valence of their own.
_CLASS_VALENCE = {"fail": ("failure", -1), "succeed": ("success", 1), "harm": ("harm", -1)}


@cache
def _wordnet() -> dict[str, dict[str, str]]:
    """The generated WordNet tables: kind (verb, noun, nominal) -> lemma -> value. Read once, on first use."""
    tables: dict[str, dict[str, str]] = {"verb": {}, "noun": {}, "nominal": {}}
    for line in (Path(__file__).with_name("wordnet_classes.tsv")).read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            kind, lemma, value = line.split("\t")
            tables[kind][lemma] = value
    return tables


def action_class(lemma: str) -> str:
    """The abstract class of a verb or event noun's lemma, or `other`: the hand lexicon first, then WordNet
    (for a noun, the class of the verb it names: "neglect" and "failure" as much as "fail")."""
    lemma = lemma.lower()
    found = _CLASS_OF.get(lemma) or _wordnet()["verb"].get(lemma)
    if found is None and (verb := _wordnet()["nominal"].get(lemma)) is not None:
        found = _CLASS_OF.get(verb) or _wordnet()["verb"].get(verb)
    if found is None and _misdone(lemma):
        found = "fail"
    return found or "other"


def _misdone(lemma: str) -> bool:
    """An act done wrongly: "mis" before a verb ("misread", "misjudge", "mislabel"), a lapse whatever the verb."""
    return lemma.startswith("mis") and len(lemma) > 5 and is_verb(lemma[3:])


@cache
def _rated() -> dict[str, tuple[str, int]]:
    """The generated valence table: word -> (success, +1) or (failure, -1). Read once, on first use."""
    out: dict[str, tuple[str, int]] = {}
    for line in (Path(__file__).with_name("valence_words.tsv")).read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, sign = line.split("\t")
            out[word] = ("success", 1) if sign == "1" else ("failure", -1)
    return out


def valence(lemma: str, rated: bool = True) -> tuple[str, int] | None:
    """(kind, sign) of a word that says how things went, e.g. ("failure", -1) for "collapse": the hand
    lexicon first, then (`rated`) the generated table ("weak", "ruined"). Verbs do not read the table
    (`verb_valence`): a sentiment rating says how a verb feels ("love", "worry"), not how things went (with
    verbs rated, the tune half's new sets fell from MRR 0.34 to 0.27)."""
    lemma = lemma.lower()
    return VALENCE_WORDS.get(lemma) or (_rated().get(lemma) if rated else None)


def verb_valence(lemma: str) -> tuple[str, int] | None:
    """A verb's valence: its own, else its class's ("flunk" fails, "fire" harms)."""
    lemma = lemma.lower()
    return VALENCE_WORDS.get(lemma) or _CLASS_VALENCE.get(_CLASS_OF.get(lemma) or _wordnet()["verb"].get(lemma, "")
                                                          or ("fail" if _misdone(lemma) else ""))


def is_verb(lemma: str) -> bool:
    """Whether the hand lexicon or WordNet's table knows `lemma` as a verb."""
    return lemma in _CLASS_OF or lemma in _wordnet()["verb"]


def noun_type(lemma: str) -> str | None:
    """A noun's coarse participant type: the hand list first, then WordNet's hypernyms."""
    return NOUN_TYPES.get(lemma) or _wordnet()["noun"].get(lemma)


def verb_of(noun: str) -> str | None:
    """The verb an event noun names ("failure" -> "fail"), from WordNet's derivational links."""
    return _wordnet()["nominal"].get(noun)
