"""The shared spaCy pipeline is loaded once and kept out of the cyclic collector's full passes."""

from __future__ import annotations

import gc

from engine.ingest import nlp


def test_the_loaded_pipeline_is_frozen_out_of_full_collections() -> None:
    pipeline = nlp.load()
    assert nlp.load() is pipeline
    assert gc.get_freeze_count() > 0
    tracked = gc.get_objects()  # what a full collection walks: the frozen generation is not in it
    assert not any(obj is pipeline or obj is pipeline.vocab for obj in tracked)
    assert [t.text for t in pipeline("Paid on 2026-03-02 in full")][2] == "2026-03-02"
