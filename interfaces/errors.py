"""One table from each engine error class to what every transport reports: the CLI's exit code, the HTTP
status and the gRPC status code (by name, so this module needs no grpc import).

Bad input is the caller's to fix (2 / 4xx / INVALID_ARGUMENT ...); a store or model that cannot be used
is the operator's (1 / 503 / UNAVAILABLE). An error not in the table is a bug: 1 / 500 / INTERNAL.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import (
    AmbiguousEntityError,
    AmbiguousMemoryIdError,
    EmbeddingModelMismatchError,
    ExtractorError,
    HebbsError,
    IngestError,
    MemoryNotFoundError,
    ModelLoadError,
    StoreError,
    ValidationError,
)
from interfaces.auth import AuthenticationError, ConflictError, ListenError, PermissionRefusedError, UnknownKeyError
from interfaces.subscriptions import TooManySubscriptionsError


@dataclass(frozen=True, slots=True)
class Outcome:
    exit_code: int
    http_status: int
    grpc_status: str  # a grpc.StatusCode member name


# Most specific first: the first class an error is an instance of decides.
ERROR_TABLE: tuple[tuple[type[HebbsError], Outcome], ...] = (
    (AuthenticationError, Outcome(2, 401, "UNAUTHENTICATED")),
    (UnknownKeyError, Outcome(2, 404, "NOT_FOUND")),
    (PermissionRefusedError, Outcome(2, 403, "PERMISSION_DENIED")),
    (ConflictError, Outcome(2, 409, "ABORTED")),
    (TooManySubscriptionsError, Outcome(2, 429, "RESOURCE_EXHAUSTED")),
    (ListenError, Outcome(1, 503, "UNAVAILABLE")),
    (AmbiguousEntityError, Outcome(2, 409, "FAILED_PRECONDITION")),
    (AmbiguousMemoryIdError, Outcome(2, 409, "FAILED_PRECONDITION")),
    (ValidationError, Outcome(2, 400, "INVALID_ARGUMENT")),
    (MemoryNotFoundError, Outcome(2, 404, "NOT_FOUND")),
    (ExtractorError, Outcome(1, 502, "UNAVAILABLE")),
    (IngestError, Outcome(2, 422, "INVALID_ARGUMENT")),
    # The caller chose the wrong model for this store: theirs to fix, like bad input.
    (EmbeddingModelMismatchError, Outcome(2, 409, "FAILED_PRECONDITION")),
    (StoreError, Outcome(1, 503, "UNAVAILABLE")),
    (ModelLoadError, Outcome(1, 503, "UNAVAILABLE")),
)
UNEXPECTED = Outcome(1, 500, "INTERNAL")


def outcome_of(error: BaseException) -> Outcome:
    """How a transport reports `error`."""
    for cls, outcome in ERROR_TABLE:
        if isinstance(error, cls):
            return outcome
    return UNEXPECTED
