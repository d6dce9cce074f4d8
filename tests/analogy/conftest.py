from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def extract():  # type: ignore[no-untyped-def]
    """Text -> episode with the real spaCy model (loaded once per session)."""
    from engine.analogy.text import EpisodeExtractor, episode

    extractor = EpisodeExtractor()

    def run(text: str) -> Any:
        return episode(extractor.extract([text])[0])

    return run
