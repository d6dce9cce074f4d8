"""One base error, with a specific subclass per kind of problem.

Every message names the offending value so a CLI or HTTP handler can show it as is.
"""

from __future__ import annotations


class HebbsError(Exception):
    """Base class of every error the engine raises on purpose."""


class ValidationError(HebbsError, ValueError):
    """An input was rejected before anything was written."""


class InvalidContentError(ValidationError):
    """Content is empty, not text, or larger than the limit."""


class InvalidImportanceError(ValidationError):
    """Importance is not a number in [0, 1]."""


class InvalidContextError(ValidationError):
    """Context is not a JSON object, or is larger than the limit."""


class InvalidEdgeError(ValidationError):
    """An edge has an unknown type, a bad confidence or an unknown target."""


class InvalidWeightsError(ValidationError):
    """Scoring weights are not four non-negative finite numbers."""


class InvalidTimeRangeError(ValidationError):
    """A time range could not be parsed, or its start is after its end."""


class InvalidRecallError(ValidationError):
    """A recall request is malformed (unknown strategy, missing entity, bad depth, ...)."""


class MemoryNotFoundError(HebbsError, KeyError):
    """No memory has this id (it never existed or was forgotten)."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else "memory not found"


class StoreError(HebbsError):
    """The data directory cannot be opened or is inconsistent beyond repair."""


class DataDirLockedError(StoreError):
    """Another process owns the data directory (a server, the workbench, a CLI command); the message names it."""


class EmbeddingModelMismatchError(StoreError):
    """The store's vectors were written by another embedding model (or width) than the one it is opened with."""


class ModelLoadError(HebbsError):
    """The embedding or language model could not be loaded offline."""


class AmbiguousEntityError(ValidationError):
    """An entity name or prefix matches several known entities; the message lists them."""


class AmbiguousMemoryIdError(ValidationError):
    """A short memory id (the start or end of an id) matches several memories; the message lists them."""


class IngestError(HebbsError):
    """Documents could not be indexed (no readable input, or the extractor failed)."""


class ExtractorError(IngestError):
    """The LLM extractor is misconfigured or its endpoint returned something unusable."""


class InvalidPolicyError(ValidationError):
    """A tenant policy value is out of range (snapshots, auto-forget threshold, decay half-life)."""


class InvalidTenantError(ValidationError):
    """A tenant name that is not one (engine/tenancy.py says what a tenant name may hold)."""
