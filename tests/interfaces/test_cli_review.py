"""`hebbs reflect`, `hebbs insights` and `hebbs contradictions` on a data dir: JSON, human output, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import MemoryEngine
from engine.embedding import SentenceTransformerEmbedder
from interfaces.cli import main
from tests.reflect.test_reflect import TOPICS


@pytest.fixture
def seeded(data_dir: Path, embedder: SentenceTransformerEmbedder) -> Path:
    with MemoryEngine(data_dir, embedder=embedder) as engine:
        for topic, texts in TOPICS.items():
            for text in texts:
                engine.remember(text, entity_id=topic)
        engine.remember("The car's brakes do not squeal when stopping on wet roads.", entity_id="car")
    return data_dir


def hebbs(data_dir: Path, *args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(main, ["--data-dir", str(data_dir), *args], catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


def test_reflect_then_insights(seeded: Path) -> None:
    code, out, _ = hebbs(seeded, "reflect", "--entity-id", "garden", "--format", "json")
    assert code == 0
    done = json.loads(out)
    assert done["insights_created"] == 1 and done["memories_processed"] == len(TOPICS["garden"])
    code, out, _ = hebbs(seeded, "reflect")
    assert code == 0 and "new insight(s)" in out and "1 unchanged" in out  # garden's exists already
    code, out, _ = hebbs(seeded, "insights", "--format", "json", "--max-results", "2")
    listed = json.loads(out)["insights"]
    assert len(listed) == 2 and listed[0]["confidence"] >= listed[1]["confidence"]
    code, out, _ = hebbs(seeded, "insights", "--entity-id", "garden")
    assert code == 0 and "memories about garden" in " ".join(out.split())


def test_contradictions_list_and_verdicts(seeded: Path) -> None:
    code, out, _ = hebbs(seeded, "contradictions", "--format", "json")
    (candidate,) = json.loads(out)["candidates"]
    assert candidate["reason"] == "negation" and "squeal" in candidate["content_b"]
    code, out, _ = hebbs(seeded, "contradictions")
    assert code == 0 and candidate["pending_id"] in out and "older" in out
    code, out, _ = hebbs(seeded, "contradictions", "--verdict", f"{candidate['pending_id']}:contradiction")
    assert code == 0 and "1 contradiction(s)" in out
    code, out, _ = hebbs(seeded, "contradictions")
    assert "no contradiction candidates pending" in out


@pytest.mark.parametrize("args", [
    ("insights", "--max-results", "0"),
    ("insights", "--min-confidence", "2"),
    ("reflect", "--since", "someday"),
    ("contradictions", "--verdict", "01NOSUCH:dismiss"),
    ("contradictions", "--verdict", "01NOSUCH:maybe"),
])
def test_bad_input_is_one_line_exit_2(seeded: Path, args: tuple[str, ...]) -> None:
    code, out, err = hebbs(seeded, *args)
    assert code == 2 and err.startswith("hebbs: error: ") and err.count("\n") == 1, (out, err)
    code, out, _ = hebbs(seeded, "insights", "--format", "json")
    assert json.loads(out)["count"] == 0  # nothing written by a refused command
