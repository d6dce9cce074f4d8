"""The plot index (engine/index/plot_index.py): a story cue's candidates by plot, scored as the formula says, kept in
step with writes on both record stores, and bringing analogs neither the embedding neighbours nor the features do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import MemoryEngine, build_request
from engine.analogy.plot import Plot, plot_of, plot_similarity
from engine.embedding import Embedder
from engine.index.feature_index import FeatureIndex
from engine.index.plot_index import PlotIndex

STORIES = Path(__file__).resolve().parents[2] / "benchmarks" / "analogy" / "stories.json"


def _random_plot(rng: np.random.Generator, sentences: int, dim: int = 16) -> Plot:
    plot = plot_of(rng.normal(size=(sentences, dim)))
    assert plot is not None
    return plot


def _formula(cue: Plot, other: Plot) -> float:
    best = np.maximum(cue.centred @ other.centred.T, 0.0).max(axis=1)
    return float(best.sum() / np.sqrt(len(cue.centred) * len(other.centred)))


def test_best_matches_rank_by_each_cue_sentences_best_match() -> None:
    rng = np.random.default_rng(3)
    plots = {f"m{n:03d}": _random_plot(rng, int(rng.integers(2, 9))) for n in range(200)}
    index = PlotIndex(plots.items())
    cue = _random_plot(rng, 5)
    found = index.best_matches(cue, 15)
    assert len(found) == 15
    expected = sorted(((i, _formula(cue, p)) for i, p in plots.items()), key=lambda f: (-f[1], f[0]))[:15]
    assert [i for i, _ in found] == [i for i, _ in expected]
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], rel=1e-5)
    for memory_id, score in found:  # an upper bound of the in-order alignment the strategy then computes
        assert score >= plot_similarity(cue, plots[memory_id]) - 1e-6


def test_the_index_follows_adds_replacements_and_removals() -> None:
    rng = np.random.default_rng(5)
    cue = _random_plot(rng, 4)
    index = PlotIndex()
    assert index.best_matches(cue, 5) == []
    index.add("twin", cue)  # the cue's own plot matches itself best
    index.add("other", _random_plot(rng, 4))
    index.add("single", None)  # a text of one sentence has no plot
    assert len(index) == 2 and index.best_matches(cue, 5)[0] == ("twin", pytest.approx(1.0))
    index.add("twin", _random_plot(rng, 3))  # a revised text: its new plot replaces the old
    assert index.best_matches(cue, 5)[0][1] < 0.99
    index.remove(["twin", "unknown"])
    assert [i for i, _ in index.best_matches(cue, 5)] == ["other"]
    assert index.best_matches(_random_plot(rng, 3, dim=8), 5) == []  # another model's width matches nothing


def test_changes_after_the_matrix_is_stacked_score_as_a_fresh_build_would() -> None:
    rng = np.random.default_rng(9)
    plots = {f"m{n:03d}": _random_plot(rng, int(rng.integers(2, 6))) for n in range(300)}
    index = PlotIndex(plots.items())
    cue = _random_plot(rng, 4)
    index.best_matches(cue, 10)  # stacked now: what follows is held apart, then re-stacked once it is many
    for step in range(150):
        memory_id = f"m{int(rng.integers(0, 400)):03d}"
        if step % 3 == 2:
            index.remove([memory_id])
            plots.pop(memory_id, None)
        else:
            plots[memory_id] = _random_plot(rng, int(rng.integers(2, 6)))  # a new memory, or a revised one
            index.add(memory_id, plots[memory_id])
        if step % 10 == 0:
            expected = sorted(((i, _formula(cue, p)) for i, p in plots.items()), key=lambda f: (-f[1], f[0]))[:20]
            found = index.best_matches(cue, 20)
            assert [i for i, _ in found] == [i for i, _ in expected]
            assert [s for _, s in found] == pytest.approx([s for _, s in expected], rel=1e-5)
    assert len(index) == len(plots)


# --- the real engine, on SQLite and PostgreSQL -----------------------------------------------------------------------
def _first_dev_set() -> dict[str, str]:
    return next(s for s in json.loads(STORIES.read_text())["stories"] if s["split"] == "dev")


def _plot_ids(engine: MemoryEngine, ids: list[str]) -> set[str]:
    index = engine._indexes.plot_index  # noqa: SLF001 - the index under test
    return {i for i in ids if i in index}


def test_the_engines_plot_index_follows_writes_and_is_rebuilt_on_reopen(
        store: dict[str, Any], embedder: Embedder) -> None:
    story = _first_dev_set()
    with MemoryEngine(**store, embedder=embedder) as engine:
        true = engine.remember(story["true"])
        single = engine.remember("The payment page crashed on the first busy morning.")  # one sentence: no plot
        engine.recall(build_request(cue=story["base"], strategies=["analogical"], top_k=3))  # builds the index
        ids = [true.id, single.id]
        assert _plot_ids(engine, ids) == {true.id}
        false = engine.remember(story["false"])  # written after the build: joins once its structure is extracted
        ids.append(false.id)
        engine.recall(build_request(cue=story["base"], strategies=["analogical"], top_k=3))
        assert _plot_ids(engine, ids) == {true.id, false.id}
        engine.revise(false.id, content="The team lost the final.")  # told in one sentence now: no plot
        engine.recall(build_request(cue=story["base"], strategies=["analogical"], top_k=3))
        assert _plot_ids(engine, ids) == {true.id}
        engine.revise(false.id, content=story["false"])
        engine.recall(build_request(cue=story["base"], strategies=["analogical"], top_k=3))
        assert _plot_ids(engine, ids) == {true.id, false.id}
        engine.forget(memory_ids=[false.id])
        assert _plot_ids(engine, ids) == {true.id}
    with MemoryEngine(**store, embedder=embedder) as reopened:  # rebuilt from the stored structures
        reopened.recall(build_request(cue=story["base"], strategies=["analogical"], top_k=3))
        assert _plot_ids(reopened, ids) == {true.id}
        assert len(reopened._indexes.plot_index) == 1  # noqa: SLF001 - no revision's old text, nothing forgotten


def test_a_story_cue_finds_an_analog_by_its_plot_alone(engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    story = _first_dev_set()
    true = engine.remember(story["true"])
    for n in range(5):
        engine.remember(f"Note {n}: the weekly meeting moved to room {n + 4}.")
    monkeypatch.setattr(FeatureIndex, "best_matches", lambda self, features, limit: [])  # no feature overlap at all

    def found(alpha: float) -> list[str]:
        results = engine.recall(build_request(cue=story["base"], strategies=["analogical"], top_k=3,
                                              analogical_alpha=alpha))
        return [r.memory.id for r in results]

    assert found(0.0)[0] == true.id  # alpha 0 asks no embedding neighbours: the plot index alone brought it
    monkeypatch.setattr(type(engine._indexes), "plot_index", property(lambda self: PlotIndex()))  # noqa: SLF001
    assert found(0.0) == []


def test_a_sqlite_store_finds_its_plots_through_the_partial_index(engine: MemoryEngine) -> None:
    from engine.store.sqlite.connection import PLOTTED

    story = engine.remember(_first_dev_set()["true"])
    engine.remember("A single line without a plot.")
    engine.recall(build_request(cue=_first_dev_set()["base"], strategies=["analogical"], top_k=2))  # extracts
    store = engine._store  # noqa: SLF001 - the query under test
    assert [i for i, _ in store.plots()] == [story.id]
    plan = " ".join(str(row) for row in store._query(  # noqa: SLF001
        f"EXPLAIN QUERY PLAN SELECT id, json_extract(structure, '$.plot') FROM memories WHERE {PLOTTED}"))
    assert "memories_plots" in plan  # not a scan of every structure

