"""The per-file time budget of an indexing run: a file whose analysis takes longer is skipped, not waited for.

The extractor charges each document the time spent on it between blocks (spaCy parses a block of at most
20,000 characters in one call, so a file is stopped at most one parse batch past its budget); a document
over budget gets no more work, and the pipeline skips it with the reason, writing nothing of it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from engine import config
from engine.errors import ValidationError


@dataclass
class TimeBudget:
    """Seconds of analysis each document of one `analyse` call may take (None or 0: no limit)."""

    seconds: float | None = None
    spent: dict[int, float] = field(default_factory=dict)
    over: set[int] = field(default_factory=set)

    def charge(self, document: int, seconds: float) -> bool:
        """Add `seconds` to a document's account; True once it is over budget."""
        self.spent[document] = self.spent.get(document, 0.0) + seconds
        if self.seconds and self.spent[document] > self.seconds:
            self.over.add(document)
        return document in self.over

    def reason(self) -> str:
        return (f"analysis took over the per-file time budget of {self.seconds:g} s (stopped; nothing of it "
                f"was stored; raise it with --file-seconds or {config.INGEST_FILE_SECONDS_ENV})")


def file_seconds(value: float | None = None) -> float | None:
    """The budget in force: `value` if given, else `HEBBS_INDEX_FILE_SECONDS`, else the config default;
    0 means no limit."""
    if value is None:
        raw = os.environ.get(config.INGEST_FILE_SECONDS_ENV, "").strip()
        if not raw:
            return config.INGEST_FILE_SECONDS
        try:
            value = float(raw)
        except ValueError:
            env = config.INGEST_FILE_SECONDS_ENV
            raise ValidationError(f"{env} must be a number of seconds, got {raw!r}") from None
    if not value >= 0 or value == float("inf"):
        raise ValidationError(f"the per-file time budget must be a finite number of seconds >= 0, got {value!r}")
    return value or None
