"""Analogies: analogs with their structures beside the cue's, and what embedding and structure contributed."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.workbench.conftest import MakeApp, Store, open_engine
from tests.workbench.helpers import plain, table

CUE = "We rushed the release and skipped testing because of a deadline, and it failed."


def find(at: AppTest, cue: str, alpha: float) -> AppTest:
    at.text_area(key="ana_cue").set_value(cue)
    at.slider(key="ana_alpha").set_value(alpha)
    return at.button(key="ana_run").click().run()


def test_structure_only_analogs_share_the_cues_shape(
    make_app: MakeApp, seeded_store: Store
) -> None:
    path, ids = seeded_store
    at = find(make_app(path, "analogies"), CUE, 0.0)
    assert not at.exception and not at.error
    frame = table(at, "ana_table")
    assert len(frame) > 0
    assert (frame["from_embedding"] == 0).all()
    assert list(frame["relevance"]) == pytest.approx(list(frame["from_structure"]), abs=1e-3)
    assert frame.iloc[0]["structural_similarity"] > 0
    top = frame[frame["shared_structure"].str.contains("act:omit")].iloc[0]  # an analog that also skipped a step
    # the Atlas postmortem (no "skipped", no "deadline") is found for its shape: a rushed omission caused a failure
    assert ids["atlas_postmortem"] in set(frame["id"])
    side_by_side = table(at, f"ana_structure_{top['id']}")
    assert list(side_by_side.columns) == ["role", "cue", "memory", "shared"]
    acts = side_by_side[side_by_side["role"] == "act"].iloc[0]
    assert "omit" in acts["cue"] and "omit" in acts["memory"] and "omit" in acts["shared"]
    described = at.markdown[0].value
    assert described.startswith("**The cue's structure:**") and "act\\: " in described and "omit" in described


def test_alpha_one_is_embedding_only(make_app: MakeApp, seeded_store: Store) -> None:
    path, _ = seeded_store
    at = find(make_app(path, "analogies"), CUE, 1.0)
    frame = table(at, "ana_table")
    assert (frame["from_structure"] == 0).all()
    assert list(frame["relevance"]) == pytest.approx(list(frame["from_embedding"]), abs=1e-3)
    assert list(frame["score"]) == sorted(frame["score"], reverse=True)


def test_an_empty_cue_is_a_readable_error(make_app: MakeApp, seeded_store: Store) -> None:
    path, _ = seeded_store
    at = find(make_app(path, "analogies"), "   ", 0.5)
    assert not at.exception
    assert "non-empty cue is required" in plain(at.error[0].value)


STORY_CUE = ("Priya wanted to launch her shop's website before the holidays. To save time, she skipped testing the "
             "payment page. On the first busy morning, the payment page crashed. Because of the crash, the holiday "
             "sales were lost.")
ANALOG = ("Coach Daniel wanted his team to win the final. To save time, he skipped the penalty practice. In the final, "
          "his players missed their penalties. Because of the misses, the team lost the title.")


def test_a_story_analog_shows_which_sentence_maps_to_which(make_app: MakeApp, tmp_path: Path) -> None:
    path = tmp_path / "data"
    engine = open_engine(path)
    analog = engine.remember(ANALOG)
    engine.remember("The museum opened a new wing for modern sculpture.")
    at = find(make_app(path, "analogies"), STORY_CUE, 0.0)
    assert not at.exception and not at.error
    sentences = table(at, f"ana_sentences_{analog.id}")
    assert len(sentences) > 1 and list(sentences.columns)[:2] == ["cue sentence", "cue"]
    assert sentences["cue"].iloc[0].startswith("Priya") and sentences["memory"].iloc[0].startswith("Coach")
    relations = table(at, f"ana_relations_{analog.id}")
    assert "thwarts" in set(relations["kind"])  # the failed goal, a higher-order relation, is carried over
    plot = table(at, f"ana_plot_{analog.id}")  # the plots aligned in order, each pair with how closely it lines up
    assert len(plot) > 1 and list(plot["cue sentence"]) == sorted(plot["cue sentence"])
    assert plot["cue"].iloc[0].startswith("Priya") and plot["memory"].iloc[0].startswith("Coach")
    assert (plot["lines up"] > 0).all()
    told = " ".join(plain(m.value) for m in at.markdown)
    assert "How the plots line up" in told and "counts net of the shared surface" in told
