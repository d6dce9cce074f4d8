"""hebbs memory engine: remember, recall (similarity, temporal, causal, analogical), revise, forget."""

from engine.api.requests import RecallRequest, build_request
from engine.errors import HebbsError
from engine.facade import MemoryEngine
from engine.models import Edge, EdgeSpec, EdgeType, Memory, MemoryKind, NewMemory, RecallResult, Strategy
from engine.recall.scoring import PRESETS, ScoringWeights

__all__ = [
    "PRESETS",
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
