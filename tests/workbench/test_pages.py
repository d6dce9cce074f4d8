"""Every page renders without exceptions on an empty store and on the sample data (AppTest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.workbench.conftest import PAGES, MakeApp, Store, open_engine
from tests.workbench.helpers import plain
from workbench.session import SAMPLE_DATA_DIR


def shown_text(at: AppTest) -> str:
    """Everything the page says in prose: titles, markdown, captions, info boxes, text."""
    parts: list[str] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "success", "text"):
        parts.extend(str(getattr(e, "value", "")) for e in at.get(kind))
    return "\n".join(parts)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("page", list(PAGES))
def test_page_renders_on_an_empty_store(make_app: MakeApp, empty_store: Path, page: str) -> None:
    at = make_app(empty_store, page)
    assert_clean(at)
    assert "no memories yet" in shown_text(at).lower()
    assert "sample data" in shown_text(at).lower()


EXPECTED_ON_SAMPLE = {
    "recall_lab": "type a cue",
    "calibration": "type a cue",
    "timeline": "size is importance",
    "causal_graph": "memories reached",
    "analogies": "describe a situation",
    "insights": "contradictions to review",
    "memories": "newest first",
    "ingest": "upload",
}


@pytest.mark.parametrize("page", list(PAGES))
def test_page_renders_on_the_sample_data(make_app: MakeApp, sample_store: Store, page: str) -> None:
    at = make_app(sample_store[0], page)
    assert_clean(at)
    text = shown_text(at).lower()
    assert "no memories yet" not in text
    assert EXPECTED_ON_SAMPLE[page] in text


def test_every_widget_has_a_unique_explicit_key(make_app: MakeApp, sample_store: Store) -> None:
    """Widgets are driven by key in tests and keep their state across reruns."""
    at = make_app(sample_store[0])
    for page in PAGES:
        if page != "recall_lab":
            at.switch_page(PAGES[page]).run()
        keys = []
        for kind in ("text_input", "text_area", "selectbox", "multiselect", "slider", "number_input",
                     "date_input", "button", "file_uploader"):
            for widget in at.get(kind):
                assert widget.key, f"{page}: a {kind} without a key ({getattr(widget, 'label', '')!r})"
                keys.append(widget.key)
        assert len(keys) == len(set(keys)), page


def test_an_unopenable_store_shows_a_readable_error(make_app: MakeApp, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("not a data directory")
    at = make_app(not_a_dir)
    assert not at.exception
    assert at.error
    message = plain(at.error[0].value)
    assert "Could not open the memory store" in message
    assert "Traceback" not in message


@pytest.mark.slow
def test_every_page_on_the_whole_sample_data(make_app: MakeApp, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Once over the whole of sample_data/ as `make run` indexes it (the other tests use a small seed):
    every page renders clean, and the pages' main actions work on real indexed documents."""
    store = tmp_path_factory.mktemp("whole-sample") / "data"
    summary = open_engine(store).ingest([str(SAMPLE_DATA_DIR)])
    assert summary.documents_indexed >= 10 and not summary.skipped
    stats = open_engine(store).stats()
    assert summary.entities == stats["entities"]  # one meaning of "entities": the indexing run and stats agree
    at = make_app(store)
    for page in PAGES:
        if page != "recall_lab":
            at.switch_page(PAGES[page]).run()
        assert_clean(at)
        text = shown_text(at).lower()
        assert "no memories yet" not in text and EXPECTED_ON_SAMPLE[page] in text, page
    at.switch_page(PAGES["recall_lab"]).run()
    at.text_input(key="lab_cue").set_value("why did the launch fail").run()
    assert_clean(at)
    assert len(at.dataframe[0].value) > 1  # a recall over the indexed documents
    at.switch_page(PAGES["causal_graph"]).run()  # seeded from the recall lab's top result
    assert_clean(at)
    assert "memories reached" in shown_text(at).lower()
