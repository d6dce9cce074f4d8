"""Ingest: upload files or pick the sample data; a progress bar and the indexing summary."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import workbench.session
from tests.workbench.conftest import MakeApp, open_engine
from workbench.session import SAMPLE_DATA_DIR

NOTE = b"""---
title: Kiln bakery opening
date: 2026-05-02
entity_id: kiln bakery
---
Kiln Bakery opened its second shop on 2026-05-02.
The opening was delayed by two weeks because the oven arrived late.
"""
CHAT = b'[{"speaker": "Ana", "text": "The Kiln oven passed inspection.", "time": "2026-04-28T10:00:00Z"}]'


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def upload(at: AppTest, files: list[tuple[str, bytes, str]]) -> AppTest:
    at.file_uploader(key="ingest_files").set_value(files)
    at.run()
    return at.button(key="ingest_upload_run").click().run()


def outcomes(at: AppTest) -> dict[str, str]:
    """Each uploaded file's outcome, from the page's per-file table."""
    frame = at.get_by_key("ingest_outcomes_table").dataframe[0].value
    return dict(zip(frame["file"], frame["outcome"], strict=True))


def test_upload_files_and_see_each_outcome(make_app: MakeApp, empty_store: Path) -> None:
    at = make_app(empty_store, "ingest")
    assert "No memories yet" in at.info[0].value
    at = upload(at, [("kiln.md", NOTE, "text/markdown"), ("chat.json", CHAT, "application/json")])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.get("progress")  # the progress bar, now full
    assert outcomes(at) == {"kiln.md": "indexed", "chat.json": "indexed"}
    frame = at.get_by_key("ingest_outcomes_table").dataframe[0].value
    details = dict(zip(frame["file"], frame["detail"], strict=True))
    assert details["chat.json"] == "conversation: 1 messages added, 0 kept"  # taken as a chat, no flag needed
    assert "**2** indexed · **0** unchanged · **0** skipped" in [m.value for m in at.markdown]
    shown = metrics(at)
    assert int(shown["memories"]) > 2  # the store's counts are refreshed too
    assert open_engine(empty_store).stats()["memories"] == int(shown["memories"])
    # the sidebar's counts are drawn after the page: they include what was just indexed
    assert any(c.value.startswith(f"{shown['memories']} memories") for c in at.sidebar.caption)


def test_uploading_a_file_again_updates_instead_of_duplicating(make_app: MakeApp, empty_store: Path) -> None:
    at = upload(make_app(empty_store, "ingest"), [("kiln.md", NOTE, "text/markdown")])
    count = open_engine(empty_store).stats()["memories"]
    at = upload(at, [("kiln.md", NOTE, "text/markdown")])
    assert outcomes(at) == {"kiln.md": "unchanged"}
    assert open_engine(empty_store).stats()["memories"] == count


def test_a_bad_file_is_a_warning_with_its_reason(make_app: MakeApp, empty_store: Path) -> None:
    at = upload(make_app(empty_store, "ingest"),
                [("broken.json", b"{not json", "application/json"), ("kiln.md", NOTE, "text/markdown")])
    assert not at.exception and not at.error
    assert outcomes(at) == {"broken.json": "skipped", "kiln.md": "indexed"}
    warning = next(w.value for w in at.warning if "broken" in w.value)
    assert "JSON" in warning or "json" in warning  # the reason, not just the name


def test_index_the_sample_data(make_app: MakeApp, empty_store: Path, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    small = tmp_path / "sample"
    small.mkdir()
    for name in ("launches/2026-01-28-atlas-launch-plan.md", "incidents/2026-03-10-fernwood-dns-misconfiguration.txt"):
        shutil.copy(SAMPLE_DATA_DIR / name, small / Path(name).name)
    monkeypatch.setattr(workbench.session, "SAMPLE_DATA_DIR", small)  # two documents keep this test quick
    at = make_app(empty_store, "ingest")
    at.button(key="ingest_sample_run").click().run()
    assert not at.exception and not at.error
    assert metrics(at)["documents"] == "2"
    assert "entities" not in metrics(at) or metrics(at)["entities"] == str(open_engine(empty_store).stats()["entities"])
    at.switch_page("screens/timeline.py").run()  # the other pages now have something to show
    assert not at.exception and "No memories yet" not in " ".join(i.value for i in at.info)
