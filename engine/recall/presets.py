"""Named recall presets: a strategy mix and fusion settings chosen once, so users get them by name.

`DEFAULT_PRESET` (`recommended`) is the recall that runs wherever none is named: `MemoryEngine.recall(cue)`,
REST and gRPC requests without strategies (the official SDK's default), `hebbs recall` and the workbench's
Recall lab. Its numbers were chosen on the LoCoMo
tuning half only (benchmarks/locomo_eval.py); the held-out figures are in docs/benchmarks.md. Presets are
module constants and never mutated; a request may override any of their fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from engine.models import Strategy

# Fused signals: each strategy's relevance, except similarity and lexical, which bring two each (the memory
# itself, its context window) and similarity a third, `similarity_unnamed` (the cue with the entity names in it
# removed, see engine/recall/unnamed.py); lexical also brings `entity_named` (the cue names the memory's entity).
SIGNALS = ("similarity", "similarity_window", "similarity_unnamed", "lexical", "lexical_window", "entity_named",
           "temporal", "causal", "analogical")
# Signals that count only where a preset or request gives them a weight; every other one weighs 1 by default.
OPT_IN_SIGNALS = frozenset({"similarity_window", "similarity_unnamed", "entity_named"})


@dataclass(frozen=True, slots=True)
class FusionSettings:
    """How a fused recall combines evidence (see engine/recall/fusion.py).

    weights: signal -> weight of its per-query z-score (missing signals weigh 1, opt-in ones 0).
    neighbour_weight: share of the best same-episode neighbour's fused score a memory borrows.
    episode_weight: share of its episode's best fused score a memory borrows.
    episode_decay: that share shrinks by this factor per rank of the memory within its episode (by its own
        fused score; the episode's best has rank 0): 1 lifts a whole episode alike, below 1 lifts its best
        few, so one strong episode does not fill the list when the answer is spread over several.
    exact_search: small stores are searched exactly rather than through HNSW.
    """

    weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    neighbour_weight: float = 0.0
    episode_weight: float = 0.0
    episode_decay: float = 1.0
    exact_search: bool = False

    def weight(self, signal: str) -> float:
        return float(self.weights.get(signal, 0.0 if signal in OPT_IN_SIGNALS else 1.0))

    @property
    def smooths(self) -> bool:
        return self.neighbour_weight > 0 or self.episode_weight > 0

    def to_dict(self) -> dict[str, object]:
        return {
            "weights": dict(self.weights),
            "neighbour_weight": self.neighbour_weight,
            "episode_weight": self.episode_weight,
            "episode_decay": self.episode_decay,
            "exact_search": self.exact_search,
        }


@dataclass(frozen=True, slots=True)
class RecallPreset:
    name: str
    description: str
    strategies: tuple[Strategy, ...]
    fusion: FusionSettings


PLAIN_FUSION = FusionSettings()

RECOMMENDED = RecallPreset(
    "recommended",
    "similarity (also of the cue without its entity names) + lexical (each of the memory and its context "
    "window), z-score fusion, decaying episode boost, "
    "exact search on small stores",
    (Strategy.SIMILARITY, Strategy.LEXICAL),
    # Tuned on the LoCoMo tuning half only (conv-26/30/41/42/43): the best point of the grid in
    # benchmarks/locomo_grid.py by mean R@5/10/25/50 (its table: benchmarks/results/locomo.json, fusion_grid).
    FusionSettings(
        weights=MappingProxyType(
            {"similarity": 0.5, "similarity_window": 0.25, "similarity_unnamed": 1.0, "lexical": 0.3,
             "lexical_window": 0.8, "entity_named": 1.5}
        ),
        neighbour_weight=0.2,
        episode_weight=0.6,
        episode_decay=0.95,
        exact_search=True,
    ),
)

# The one default recall: a request that names neither strategies nor a preset runs this.
DEFAULT_PRESET = RECOMMENDED

PRESETS: Mapping[str, RecallPreset] = MappingProxyType(
    {
        RECOMMENDED.name: RECOMMENDED,
        "similarity": RecallPreset("similarity", "embedding similarity alone (HNSW)", (Strategy.SIMILARITY,),
                                   PLAIN_FUSION),
        "lexical": RecallPreset("lexical", "BM25 full-text match alone", (Strategy.LEXICAL,), PLAIN_FUSION),
    }
)
