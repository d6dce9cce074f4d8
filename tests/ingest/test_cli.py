"""`hebbs index`: the summary (human and JSON), skipped files, and recall by alias afterwards."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.embedding import SentenceTransformerEmbedder
from interfaces.cli import main
from tests.ingest.test_pipeline import story

Write = Callable[[str, str | bytes], Path]
Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def hebbs(data_dir: Path, embedder: SentenceTransformerEmbedder, nlp: object) -> Run:
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(main, ["--data-dir", str(data_dir), *args], catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr

    return run


def test_index_prints_a_summary(hebbs: Run, write: Write) -> None:
    folder = story(write)
    write("legal/scan.md", b"\x00PDF-ish")
    code, out, err = hebbs("index", str(folder))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "documents     5 (5 new or changed, 0 unchanged, 0 removed)"
    assert lines[1].startswith("propositions  ") and "added, 0 kept, 0 removed)" in lines[1]
    assert lines[2] == "messages      2 (2 added, 0 kept, 0 removed; one memory per chat message)"
    assert lines[3].startswith("entities      ")
    assert lines[4].startswith("edges         caused_by ") and "proposition_of" in lines[4]
    assert lines[5].startswith("time          ") and "propositions/s" in lines[5]
    assert lines[-2:] == ["skipped       1 file:", "  legal/scan.md: binary file"]
    code, out, _ = hebbs("index", str(folder))
    assert out.splitlines()[0] == "documents     5 (0 new or changed, 5 unchanged, 0 removed)"


def test_index_in_json_and_recall_by_alias(hebbs: Run, write: Write) -> None:
    code, out, err = hebbs("index", str(story(write)), "--format", "json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["documents"] == 5 and summary["propositions"] == summary["propositions_added"] > 5
    assert set(summary["edges"]) == {"caused_by", "followed_by", "entity_relation", "proposition_of"}
    assert {"documents_unchanged", "entities", "skipped", "seconds"} <= set(summary)
    code, out, err = hebbs("recall", "what happened with Meridian?", "--strategy", "temporal", "--entity-id",
                           "meridian", "--top-k", "50", "--format", "json")
    assert code == 0, err
    contents = [r["memory"]["content"] for r in json.loads(out)["results"]]
    order = [next(i for i, c in enumerate(contents) if key in c) for key in
             ("signed a Data Processing Agreement", "was not notified", "discovered a violation", "escalated the")]
    assert order == sorted(order)


def test_an_ambiguous_entity_is_one_line_on_stderr(hebbs: Run, write: Write) -> None:
    write("legal/2026-05-01-hire.md", "# Hire\n\nDana Scott joined the legal team of Meridian Analytics.\n")
    hebbs("index", str(story(write)))
    code, out, err = hebbs("recall", "x", "--strategy", "temporal", "--entity-id", "dana")
    assert code == 2 and out == ""
    assert err.startswith("hebbs: error: entity 'dana' is ambiguous; it could be 'dana scott' (person)")


def test_a_missing_path_exits_2_with_nothing_written(hebbs: Run, tmp_path: Path) -> None:
    code, out, err = hebbs("index", str(tmp_path / "nowhere"))
    assert code == 2 and out == ""
    assert err.startswith("hebbs: error: no such file or folder: ") and err.rstrip().endswith("nowhere")


def test_index_a_folder_of_chats_with_no_flag(hebbs: Run, write: Write) -> None:
    write("chats/standup.json", json.dumps({"sessions": [
        {"date": "2026-05-04T09:00:00Z", "messages": [{"speaker": "Ana", "text": "The oven is fixed."},
                                                     {"speaker": "Ben", "text": "Then we bake on Monday."}]},
        {"date": "2026-05-11T09:00:00Z", "messages": [{"speaker": "Ana", "text": "Monday went well."}]},
    ]}))
    folder = write("chats/notes.json", '{"title": "not a chat"}').parent
    code, out, err = hebbs("index", str(folder))
    assert code == 0, err  # a skipped file is reported, not an error (as for any document)
    lines = out.splitlines()
    assert lines[0] == "documents     1 (1 new or changed, 0 unchanged, 0 removed)"
    assert lines[2] == "messages      3 (3 added, 0 kept, 0 removed; one memory per chat message)"
    assert lines[-2:] == ["skipped       1 file:", "  chats/notes.json: not a chat transcript (expected a list of "
                          '{"speaker", "text", "time"} messages, {"sessions": [...]}, '
                          "or session_1, session_2, ... keys)"]
    code, out, _ = hebbs("--format", "json", "recall", "when do we bake", "--strategy", "temporal",
                         "--entity-id", "ben")
    (hit,) = json.loads(out)["results"]
    assert hit["memory"]["content"] == "Ben: Then we bake on Monday." and hit["memory"]["context"]["session"] == 1
