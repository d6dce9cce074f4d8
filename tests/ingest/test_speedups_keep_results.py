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


@pytest.mark.slow
def test_clause_cues_indexed_by_first_word_give_the_same_structures(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _sample_sentences()
    extractor = EpisodeExtractor()
    fast = extractor.extract(texts)
    monkeypatch.setattr(roles, "_CUES_BY_FIRST", _EveryCue())
    slow = extractor.extract(texts)
    assert fast == slow
    # the corpus exercises the cues: some structures relate clauses through them
    assert sum(len(s["graph"].get("relations", [])) for s in fast) > 5


def test_a_token_has_an_entity_type_exactly_when_an_entity_covers_it() -> None:
    """`roles.participant` reads `doc.ents` only for tokens with an entity type: the two must agree, also after
    the gazetteer rewrote a document's entities."""
    from engine.ingest.analysis import Gazetteer
    from engine.ingest.nlp import load

    docs = list(load().pipe(_sample_sentences()))
    gazetteer = Gazetteer({"CloudVault": "organization", "Dana Whitfield": "person"})
    for doc in docs:
        gazetteer.learn(doc)
    for doc in docs:
        gazetteer.tag(doc)
    covered = 0
    for doc in docs:
        inside = {i for e in doc.ents for i in range(e.start, e.end)}
        assert {t.i for t in doc if t.ent_type} == inside
        covered += len(inside)
    assert covered > 100
    assert any("gazetteer" in doc.user_data for doc in docs)


def test_frontmatter_read_by_libyaml_equals_the_pure_python_loader() -> None:
    import yaml

    from engine.ingest.documents import split_frontmatter

    files = sorted(p for p in (REPO / "sample_data").rglob("*.md") if p.read_text().startswith("---"))
    assert len(files) > 10
    for path in files:
        text = path.read_text()
        meta, _ = split_frontmatter(text)
        lines = text.splitlines(keepends=True)
        end = next(i for i in range(1, len(lines)) if lines[i].strip() in ("---", "..."))
        assert meta == yaml.safe_load("".join(lines[1:end])), path.name
