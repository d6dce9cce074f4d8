"""Which function runs each strategy (the facade's one lookup)."""

from __future__ import annotations

from collections.abc import Callable

from engine.models import Strategy
from engine.recall.lexical import lexical
from engine.recall.strategies import Hit, RecallInputs, analogical, causal, similarity, temporal

STRATEGIES: dict[Strategy, Callable[[RecallInputs], list[Hit]]] = {
    Strategy.SIMILARITY: similarity,
    Strategy.TEMPORAL: temporal,
    Strategy.CAUSAL: causal,
    Strategy.ANALOGICAL: analogical,
    Strategy.LEXICAL: lexical,
}
