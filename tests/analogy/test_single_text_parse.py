"""A single text is parsed with `nlp(text)` instead of `nlp.pipe([text])` (a recall's cue): the same Doc,
so the same structure, as a batch would give."""

from __future__ import annotations

from engine.analogy.roles import episode_of
from engine.analogy.text import EpisodeExtractor, structure_of
from engine.ingest.nlp import load

TEXTS = [
    "The deploy failed because the webhook retry queue was full, so the team drained it by hand.",
    "who approved the launch date",
    "Maria forgot to lock the door and the bike was stolen on 2026-03-02.",
    "The ant stored food before winter; the grasshopper did not, and it went hungry.",
    "Legal had not approved the contract, which delayed the launch at Acme Corp by two weeks.",
]


def test_one_text_gives_the_batch_parse_and_structure() -> None:
    nlp = load()
    batch = list(nlp.pipe(TEXTS, batch_size=64))
    extractor = EpisodeExtractor()
    for text, doc in zip(TEXTS, batch, strict=True):
        assert nlp(text).to_bytes() == doc.to_bytes()
        assert extractor.extract([text]) == [structure_of(episode_of(doc))]
    assert extractor.extract(TEXTS) == [structure_of(episode_of(doc)) for doc in batch]
