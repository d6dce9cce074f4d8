"""`self_score` scores an episode's identity mapping directly (linear time); it must equal what the full
pairwise search (`map_episodes` of an episode onto itself) finds, on real documents' merged episodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.analogy.episode_graph import Episode, merge
from engine.analogy.mapping import map_episodes, self_score
from engine.ingest.analysis import OfflineExtractor
from engine.ingest.documents import SourceDocument, discover, read_document

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


@pytest.fixture(scope="module")
def sentence_episodes() -> list[list[Episode]]:
    """Per sample document (a dozen of them), its sentences' episodes as document ingestion builds them."""
    files, _, _ = discover([SAMPLE])
    docs = [d for d in (read_document(p, name) for p, name in files[:12]) if isinstance(d, SourceDocument)]
    analysed = OfflineExtractor().analyse(docs)
    return [[Episode.from_json(d.structure.get("graph")) for d in drafts] for drafts in analysed]


def test_the_direct_self_score_equals_the_pairwise_search(sentence_episodes: list[list[Episode]]) -> None:
    checked = 0
    for episodes in sentence_episodes:
        for ep in [*episodes, merge(episodes)]:
            assert self_score(ep) == pytest.approx(map_episodes(ep, ep, 1.0, 1.0).raw)
            checked += 1
    whole = merge([ep for episodes in sentence_episodes for ep in episodes])  # a long document: every sentence
    assert self_score(whole) == pytest.approx(map_episodes(whole, whole, 1.0, 1.0).raw)
    assert checked > 100 and len(whole.events) > 100

