"""Plots (engine/analogy/plot.py): a story's sentences with its setting taken out, aligned in order.

Synthetic sentence vectors first (a setting shared by every sentence of a story plus the role each sentence plays),
then the real model and spaCy through the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import MemoryEngine, build_request
from engine.analogy.plot import (
    PLOT_MAX_SENTENCES,
    decode_plot,
    encode_plot,
    kept_sentences,
    plot_match,
    plot_of,
    plot_similarity,
    plots_meanwhile,
    plots_of_texts,
    sentences_of,
)
from engine.analogy.text import EpisodeExtractor, merged_structure, stored_episode
from engine.config import ANALOGICAL_PLOT_WEIGHT, ANALOGICAL_SURFACE_FREE
from engine.recall.strategies import structural_similarity

DIM = 64
STORIES = Path(__file__).resolve().parents[2] / "benchmarks" / "analogy" / "stories.json"


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _story(setting: np.ndarray, roles: np.ndarray, setting_weight: float = 3.0) -> np.ndarray:
    """Sentence vectors: mostly the story's setting, each one also the role its sentence plays."""
    return _unit(setting_weight * setting + roles)


@pytest.fixture
def parts() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    settings = _unit(rng.normal(size=(2, DIM)))
    roles = _unit(rng.normal(size=(4, DIM)))
    return settings[0], settings[1], roles


def test_one_sentence_has_no_plot_and_two_are_each_others_opposite() -> None:
    assert plot_of(np.ones((1, DIM), dtype=np.float32)) is None
    a, b, c = np.eye(DIM, dtype=np.float32)[:3]
    three = plot_of(np.stack([a, b, 2 * c]))
    assert three is not None
    assert np.allclose(np.linalg.norm(three.said, axis=1), 1.0)  # the sentences as unit vectors
    assert np.allclose(np.linalg.norm(three.centred, axis=1), 1.0)
    assert np.allclose(three.centred.sum(axis=0), 0.0, atol=1e-6)  # centred on their mean
    two = plot_of(np.stack([a, b]))
    assert two is not None and np.allclose(two.centred[0], -two.centred[1], atol=1e-6)


def test_a_long_text_keeps_an_even_spread_of_its_sentences() -> None:
    assert kept_sentences(5).tolist() == [0, 1, 2, 3, 4]
    kept = kept_sentences(100)
    assert len(kept) == PLOT_MAX_SENTENCES and kept[0] == 0 and kept[-1] == 99
    assert np.all(np.diff(kept) > 0) and np.diff(kept).max() - np.diff(kept).min() <= 1


def test_the_same_plot_in_another_setting_lines_up_sentence_for_sentence(parts: Any) -> None:
    home, away, roles = parts
    cue, analog = plot_of(_story(home, roles)), plot_of(_story(away, roles))
    match = plot_match(cue, analog)
    assert [(a, b) for a, b, _ in match.pairs] == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert 0.5 < match.score <= 1.0
    assert match.score == pytest.approx(plot_similarity(cue, analog))
    # the same sentences in another order: the alignment keeps what still comes in order, and scores less
    shuffled = plot_of(_story(away, roles[[2, 0, 3, 1]]))
    assert plot_similarity(cue, shuffled) < match.score - 0.2
    # another plot in the same setting: little lines up
    others = _unit(np.random.default_rng(8).normal(size=(4, DIM)))
    assert plot_similarity(cue, plot_of(_story(home, others))) < match.score - 0.3


def test_a_sentence_told_again_word_for_word_is_surface_not_plot(parts: Any) -> None:
    home, _, roles = parts
    story = plot_of(_story(home, roles))
    assert plot_similarity(story, story) == pytest.approx(0.0, abs=1e-6)


def test_without_two_plots_of_one_width_there_is_nothing_to_align(parts: Any) -> None:
    home, away, roles = parts
    cue = plot_of(_story(home, roles))
    assert plot_similarity(cue, None) == 0.0 and plot_similarity(None, cue) == 0.0
    narrow = plot_of(_story(away[:32], roles[:, :32]))
    assert plot_similarity(cue, narrow) == 0.0
    assert plot_match(cue, None).pairs == ()


def test_a_plot_survives_its_stored_form_and_a_bad_entry_reads_as_none(parts: Any) -> None:
    home, _, roles = parts
    plot = plot_of(_story(home, roles), [(0, 10), (11, 20), (21, 30), (31, 40)])
    assert plot is not None and plot.places == (0, 1, 2, 3) and plot.spans[1] == (11, 20)
    stored = json.loads(json.dumps(encode_plot(plot, 4)))
    back = decode_plot(stored)
    assert back is not None and stored["sentences"] == 4
    assert np.allclose(back.said, plot.said, atol=2e-3) and np.allclose(back.centred, plot.centred, atol=5e-3)
    assert back.places == plot.places and back.spans == plot.spans
    for bad in (None, "plot", {}, {"dim": 64}, {**stored, "float16": "%%%"}, {**stored, "dim": 0},
                {**stored, "dim": 7}, {**stored, "dim": "wide"}, {**stored, "places": [0, 1]},
                {**stored, "spans": [[0, 1]]}, {**stored, "spans": [["a", "b"]] * 4}):
        assert decode_plot(bad) is None


def test_sentences_are_found_by_rule_with_their_spans() -> None:
    text = "Dr. Lee skipped the check.  The pump failed! Was it the valve? Yes."
    found = sentences_of(text)
    assert [text[a:b] for _, (a, b) in found] == [t for t, _ in found]
    assert [t for t, _ in found][-3:] == ["The pump failed!", "Was it the valve?", "Yes."]
    assert sentences_of("   ") == [] and len(sentences_of("One sentence only.")) == 1


def test_texts_get_their_plots_from_one_model_call_and_one_sentence_texts_none() -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> np.ndarray:  # a vector per text, the same one every time
        calls.append(list(texts))
        return _unit(np.stack([np.random.default_rng(sum(map(ord, t))).normal(size=DIM) for t in texts]))

    texts = ["One sentence.", "A first. A second. A third.", "", "B one. B two."]
    entries = plots_of_texts(texts, embed)
    assert calls == [["A first.", "A second.", "A third.", "B one.", "B two."]]
    assert entries[0] is None and entries[2] is None
    plots = [decode_plot(e) for e in entries[1::2]]
    assert plots[0] is not None and plots[0].said.shape == (3, DIM) and plots[0].places == (0, 1, 2)
    assert plots[1] is not None and [texts[3][slice(*span)] for span in plots[1].spans] == ["B one.", "B two."]
    assert plots_of_texts(["Only one."], embed) == [None] and len(calls) == 1
    # begun on a side thread: the same entries (the same model answers), and no model call for one sentence
    calls.clear()
    assert plots_meanwhile(texts, embed)() == plots_of_texts(texts, embed) and len(calls) == 2
    assert plots_meanwhile(["Only one."], embed)() == [None] and len(calls) == 2


def test_a_long_text_keeps_its_sentence_numbers() -> None:
    text = " ".join(f"Step {n} happened." for n in range(80))
    entry = plots_of_texts([text], lambda t: _unit(np.random.default_rng(1).normal(size=(len(t), DIM))))[0]
    plot = decode_plot(entry)
    assert plot is not None and entry is not None and entry["sentences"] == 80
    assert plot.places == tuple(kept_sentences(80).tolist()) and len(plot.places) == PLOT_MAX_SENTENCES
    assert [text[slice(*span)] for span in plot.spans][-1] == "Step 79 happened."


def test_a_documents_plot_comes_from_its_propositions_vectors(parts: Any) -> None:
    home, _, roles = parts
    vectors = _story(home, roles).astype(np.float32)
    structure = merged_structure([{}, {}, {}, {}], vectors)
    assert structure["plot"]["sentences"] == 4
    assert merged_structure([{}]).get("plot") is None


def test_structural_similarity_mixes_the_plot_in_only_for_a_story_cue() -> None:
    assert structural_similarity(0.4, 0.9, 0.8, story_cue=False) == 0.4
    w = ANALOGICAL_PLOT_WEIGHT
    assert structural_similarity(0.4, 0.2, 0.0, story_cue=True) == pytest.approx((1 - w) * 0.4 + w * 0.2)


def test_a_story_cues_systematicity_counts_net_of_the_surface_the_texts_share() -> None:
    w, free = ANALOGICAL_PLOT_WEIGHT, ANALOGICAL_SURFACE_FREE
    assert structural_similarity(0.4, 0.2, 0.75, story_cue=True) == pytest.approx(
        (1 - w) * 0.4 * 0.25 / (1 - free) + w * 0.2)
    # a story of another setting keeps its whole mapping
    for surface in (-0.3, 0.0, free / 2, free):
        assert structural_similarity(0.4, 0.2, surface, story_cue=True) == pytest.approx((1 - w) * 0.4 + w * 0.2)
    # beyond that, the same mapping is worth less from a text that looks more like the cue; a copy keeps its plot alone
    worth = [structural_similarity(0.4, 0.1, surface, story_cue=True) for surface in (free + 0.1, 0.6, 0.9, 1.0)]
    assert worth == sorted(worth, reverse=True) and len(set(worth)) == 4 and worth[-1] == pytest.approx(w * 0.1)


# --- the real model and spaCy --------------------------------------------------------------------------------------
def _first_dev_set() -> dict[str, str]:
    return next(s for s in json.loads(STORIES.read_text())["stories"] if s["split"] == "dev")


def test_the_engine_keeps_a_plot_for_a_story_and_none_for_one_sentence(engine: MemoryEngine) -> None:
    story = _first_dev_set()["base"]
    kept = engine.remember(story)
    single = engine.remember("The payment page crashed on the first busy morning.")
    structure = engine.structure_of(kept.id)
    assert structure["plot"]["sentences"] == 4
    assert "plot" not in engine.structure_of(single.id)
    # the same plot as the extractor given the engine's model reads it (the cue is read the same way)
    fresh = EpisodeExtractor(embed=engine.embedder.encode).extract([story])[0]
    assert decode_plot(fresh["plot"]) is not None
    assert np.allclose(decode_plot(fresh["plot"]).said, decode_plot(structure["plot"]).said, atol=2e-3)


def test_a_story_cue_finds_the_analog_that_tells_its_plot_and_shows_which_sentence_maps_where(
        engine: MemoryEngine) -> None:
    story = _first_dev_set()
    true, false = engine.remember(story["true"]), engine.remember(story["false"])
    results = engine.recall(build_request(cue=story["base"], strategies=["analogical"], top_k=5, analogical_alpha=0.0))
    details = {r.memory.id: next(d for d in r.strategy_details if d.strategy.value == "analogical").fields
               for r in results}
    assert details[true.id]["plot_similarity"] > details[false.id]["plot_similarity"] > 0
    for fields in details.values():
        kept = min(1.0, (1 - fields["embedding_similarity"]) / (1 - ANALOGICAL_SURFACE_FREE))
        assert fields["structural_similarity"] == pytest.approx(
            (1 - ANALOGICAL_PLOT_WEIGHT) * fields["systematicity"] * kept
            + ANALOGICAL_PLOT_WEIGHT * fields["plot_similarity"])
    lined_up = details[true.id]["plot"]["sentences"]
    assert lined_up and all(p["similarity"] > 0 for p in lined_up)
    assert [p["cue"] for p in lined_up] == sorted(p["cue"] for p in lined_up)  # in order on both sides
    assert [p["memory"] for p in lined_up] == sorted(p["memory"] for p in lined_up)
    start, end = lined_up[0]["memory_span"]
    assert story["true"][start:end].strip()  # a span of the memory's own text


def test_a_story_that_retells_the_cues_surface_with_another_plot_ranks_below_the_true_analog(
        engine: MemoryEngine) -> None:
    story = _first_dev_set()  # "mere": the cue's baker, website and first sentence; the page is tested, no crash
    true, mere = engine.remember(story["true"]), engine.remember(story["mere"])
    for alpha in (0.0, 0.5):
        results = engine.recall(build_request(cue=story["base"], strategies=["analogical"], top_k=5,
                                              analogical_alpha=alpha))
        assert [r.memory.id for r in results][:2] == [true.id, mere.id]
    fields = {r.memory.id: r.strategy_details[0].fields for r in results}
    assert fields[mere.id]["embedding_similarity"] > 2 * fields[true.id]["embedding_similarity"]
    # the mere story maps the cue's repeated events: its systematicity counts only net of that shared surface
    assert fields[mere.id]["systematicity"] > 0
    undiscounted = {i: (1 - ANALOGICAL_PLOT_WEIGHT) * f["systematicity"] + ANALOGICAL_PLOT_WEIGHT * f["plot_similarity"]
                    for i, f in fields.items()}
    assert undiscounted[mere.id] - fields[mere.id]["structural_similarity"] > (
        undiscounted[true.id] - fields[true.id]["structural_similarity"])


def test_a_one_sentence_cue_ranks_by_the_mapper_alone(engine: MemoryEngine) -> None:
    story = _first_dev_set()
    engine.remember(story["true"])
    results = engine.recall(build_request(cue="She skipped testing the payment page to save time, and it crashed.",
                                          strategies=["analogical"], top_k=5, analogical_alpha=0.0))
    fields = results[0].strategy_details[0].fields
    assert fields["structural_similarity"] == fields["systematicity"]
    assert fields["plot_similarity"] == 0.0 and "plot" not in fields


def test_a_stored_structure_without_a_plot_maps_as_before() -> None:
    structure = EpisodeExtractor().extract(["Tom skipped the check. The machine broke."])[0]
    assert "plot" not in structure
    stored = stored_episode(json.dumps(structure))
    assert stored is not None and stored.plot is None
