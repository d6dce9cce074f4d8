"""hebbs memory engine: remember, recall (similarity, temporal, causal, analogical), revise, forget."""

from engine.api.requests import RecallRequest, build_request
from engine.errors import HebbsError
from engine.facade import MemoryEngine
from engine.models import Edge, EdgeSpec, EdgeType, Memory, MemoryKind, NewMemory, RecallResult, Strategy
from engine.recall.scoring import WEIGHT_PRESETS, ScoringWeights

__all__ = [
    "WEIGHT_PRESETS",
    "Edge",
    "EdgeSpec",
    "EdgeType",
    "HebbsError",
    "Memory",
    "MemoryEngine",
    "MemoryKind",
    "NewMemory",
    "RecallRequest",
    "RecallResult",
    "ScoringWeights",
    "Strategy",
    "build_request",
]
