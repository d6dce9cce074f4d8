"""Score explanations shown in place: what each signal and weight means, how strategies merge, and why a
signal may be flat (every result older than the recency window). Pure functions and static text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from engine import RecallResult, ScoringWeights
from engine.recall import scoring
from engine.recall.scoring import RECENCY_MAX_AGE_SECONDS

RECENCY_DAYS = RECENCY_MAX_AGE_SECONDS / 86400

SIGNAL_HELP = {
    "relevance": "How well the memory matches the cue, 0-1, as the strategy that found it measures it "
    "(similarity: 1 - cosine distance; temporal: by position in time; causal: by graph distance; "
    "analogical: alpha x embedding + (1 - alpha) x structural similarity).",
    "recency": f"clamp(1 - age / {RECENCY_DAYS:g} days, 0, 1), age measured from the memory's creation to "
    "\"now\" (the as-of time). Anything older than the window scores 0.",
    "importance": "The importance stored with the memory, 0-1 (default 0.5).",
    "reinforcement": "log2(1 + times recalled) / log2(101), capped at 1: memories recalled often score higher.",
}

WEIGHT_HELP = {
    f"w_{name}": f"Weight of {name} in the composite score. {text}" for name, text in SIGNAL_HELP.items()
}

COMPOSITE = ("score = w_relevance x relevance + w_recency x recency + w_importance x importance "
             "+ w_reinforcement x reinforcement")

MERGE_NOTE = (
    "**How strategies merge.** Each strategy returns candidates with its own relevance. A memory found by "
    "several strategies appears once, with every strategy's details kept. Relevance values from different "
    "strategies are on different scales, so the engine normalises each strategy's values per query and "
    "adds them up: a memory several strategies agree on gets more relevance. The composite score then weighs "
    "it with "
    "recency, importance and reinforcement. Moving a slider only re-ranks these candidates: it runs no new "
    "recall and counts no access."
)


def normalised(weights: ScoringWeights) -> dict[str, float] | None:
    """The weights as shares of their sum (None when every weight is 0)."""
    values = weights.to_dict()
    total = sum(values.values())
    if total <= 0:
        return None
    return {name: value / total for name, value in values.items()}


def normalised_text(weights: ScoringWeights) -> str:
    shares = normalised(weights)
    if shares is None:
        return "All weights are 0: every score is 0 and the order is arbitrary. Raise at least one weight."
    return "Shares of the score: " + " · ".join(
        f"{name.removeprefix('w_')} {share:.0%}" for name, share in shares.items()
    )


def newest_age_days(results: Sequence[RecallResult], now: datetime) -> float | None:
    """How many days old the newest result is at `now` (None without results)."""
    if not results:
        return None
    newest = max(r.memory.created_at for r in results)
    return (now - newest).total_seconds() / 86400


def recency_banner(results: Sequence[RecallResult], now: datetime) -> str | None:
    """A sentence when recency is 0 for every result (all older than the window), else None."""
    age = newest_age_days(results, now)
    if age is None or age < RECENCY_DAYS:
        return None
    return (f"Recency is 0 for all results: the newest is {age:.0f} days old at the as-of time and the recency "
            f"window is {RECENCY_DAYS:g} days, so the recency weight changes nothing. Move the as-of time "
            "closer to the data to explore it.")


def rescore_at(results: Sequence[RecallResult], weights: ScoringWeights, now: datetime) -> list[RecallResult]:
    """Recompute recency as of `now` (the only signal that depends on it) and re-rank; pure, nothing counted."""
    rescored = []
    for r in results:
        signals = replace(r.signals, recency=scoring.recency(r.memory.created_at, now))
        rescored.append(replace(r, signals=signals, score=scoring.composite(signals, weights)))
    rescored.sort(key=lambda r: scoring.sort_key(r.score, r.signals.relevance, r.memory.created_at, r.memory.id))
    return rescored
