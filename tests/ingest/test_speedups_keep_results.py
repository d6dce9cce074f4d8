"""Speed changes that must not change what is stored: each is compared with the slower way it replaced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.analogy import roles
from engine.analogy.text import EpisodeExtractor
from engine.ingest.documents import SourceDocument, discover, read_document

REPO = Path(__file__).resolve().parents[2]


def _sample_sentences(limit: int = 150) -> list[str]:
    files, _, _ = discover([REPO / "sample_data"])
    docs = [d for d in (read_document(p, name) for p, name in files) if isinstance(d, SourceDocument)]
    return [b.text for d in docs for b in d.blocks][:limit]


class _EveryCue(dict[str, list[tuple[tuple[str, ...], str]]]):
    """The old clause-cue search: every cue compared at every token, whatever its first word."""

    def get(self, key: str, default: Any = None) -> list[tuple[tuple[str, ...], str]]:  # noqa: ARG002
        return list(roles._CLAUSE_CUES)


def test_clause_cues_indexed_by_first_word_give_the_same_structures(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _sample_sentences()
    extractor = EpisodeExtractor()
    fast = extractor.extract(texts)
    monkeypatch.setattr(roles, "_CUES_BY_FIRST", _EveryCue())
    slow = extractor.extract(texts)
    assert fast == slow
    # the corpus exercises the cues: some structures relate clauses through them
    assert sum(len(s["graph"].get("relations", [])) for s in fast) > 5
