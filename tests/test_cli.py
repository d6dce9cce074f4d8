"""The `hebbs` command line: JSON shapes, human tables, one-line errors with exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.embedding import SentenceTransformerEmbedder
from interfaces.cli import main

MEMORY_KEYS = {
    "id",
    "content",
    "importance",
    "context",
    "entity_id",
    "kind",
    "created_at",
    "updated_at",
    "last_accessed_at",
    "access_count",
    "decay_score",
}


@pytest.fixture
def hebbs(data_dir: Path, embedder: SentenceTransformerEmbedder):  # type: ignore[no-untyped-def]
    """Run `hebbs ...` in-process against a temp data dir; returns (exit code, stdout, stderr)."""
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(main, ["--data-dir", str(data_dir), *args], catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr

    return run


def remember(hebbs, *args: str) -> dict:  # type: ignore[no-untyped-def]
    code, out, err = hebbs("remember", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_remember_get_recall_stats_in_json(hebbs) -> None:  # type: ignore[no-untyped-def]
    cause = remember(
        hebbs,
        "The cooling fan failed.",
        "--entity-id",
        "rack-7",
        "--importance",
        "0.7",
        "--context",
        '{"source": "pager"}',
        "--created-at",
        "2026-01-05T10:00:00Z",
    )
    assert set(cause) == MEMORY_KEYS
    assert cause["context"] == {"source": "pager"} and cause["created_at"] == "2026-01-05T10:00:00Z"
    effect = remember(
        hebbs,
        "Rack 7 overheated because the cooling fan failed.",
        "--entity-id",
        "rack-7",
        "--edge",
        f"{cause['id']}:caused_by:0.9",
    )

    code, out, _ = hebbs("get", cause["id"], "--format", "json")
    assert code == 0 and json.loads(out)["id"] == cause["id"]

    code, out, _ = hebbs(
        "recall",
        "why did the rack overheat",
        "--strategy",
        "similarity",
        "--strategy",
        "causal",
        "--seed",
        effect["id"],
        "--top-k",
        "5",
        "--format",
        "json",
    )
    assert code == 0
    results = json.loads(out)["results"]
    assert {r["memory"]["id"] for r in results} == {cause["id"], effect["id"]}
    for r in results:
        assert set(r) == {"memory", "score", "signals", "strategy_details"}
        assert set(r["signals"]) == {"relevance", "recency", "importance", "reinforcement"}
        assert set(r["memory"]) == MEMORY_KEYS
        for d in r["strategy_details"]:
            assert {"strategy", "relevance"} <= set(d)
    walked = next(r for r in results if r["memory"]["id"] == cause["id"])
    causal = next(d for d in walked["strategy_details"] if d["strategy"] == "causal")
    assert causal["depth"] == 1 and causal["edge_type"] == "caused_by"
    assert causal["path"] == [effect["id"], cause["id"]] and causal["seed_id"] == effect["id"]

    code, out, _ = hebbs("--format", "json", "stats")
    assert json.loads(out) == {"memories": 2, "vector_index": 2, "edges": 1, "entities": 1, "structures_pending": 2}


def test_weights_change_the_ranking(hebbs) -> None:  # type: ignore[no-untyped-def]
    old = remember(
        hebbs,
        "Quarterly planning notes for the data team.",
        "--importance",
        "1.0",
        "--created-at",
        "2020-01-01",
    )
    new = remember(hebbs, "Lunch menu for Friday.", "--importance", "0.0")

    def top(weights: str) -> str:
        code, out, err = hebbs("recall", "planning", "--weights", weights, "--format", "json")
        assert code == 0, err
        return json.loads(out)["results"][0]["memory"]["id"]

    assert top("0:0:1:0") == old["id"]
    assert top("0:1:0:0") == new["id"]


def test_temporal_recall_with_time_range_and_human_table(hebbs) -> None:  # type: ignore[no-untyped-def]
    for day in ("2025-01-10", "2025-02-10", "2025-03-10"):
        remember(hebbs, f"Status update of {day}.", "--entity-id", "proj", "--created-at", day)
    code, out, _ = hebbs(
        "recall",
        "--strategy",
        "temporal",
        "--entity-id",
        "proj",
        "--time-range",
        "2025-02-01:",
        "--format",
        "json",
    )
    assert code == 0
    assert [r["memory"]["content"] for r in json.loads(out)["results"]] == [
        "Status update of 2025-02-10.",
        "Status update of 2025-03-10.",
    ]
    code, out, _ = hebbs(
        "recall",
        "--strategy",
        "temporal",
        "--entity-id",
        "proj",
        "--time-range",
        "2025-01-01T00:00:00Z..2025-01-31T00:00:00Z",
    )
    assert code == 0 and "Status update of 2025-01-10." in out and "2025-02-10" not in out
    assert "temporal #0" in out and "+ rec" in out


def test_revise_and_forget(hebbs) -> None:  # type: ignore[no-untyped-def]
    m = remember(hebbs, "The offsite is in Lisbon.", "--entity-id", "offsite")
    code, out, _ = hebbs("revise", m["id"], "--content", "The offsite is in Porto.", "--format", "json")
    assert code == 0 and json.loads(out)["content"] == "The offsite is in Porto."
    code, out, _ = hebbs("forget", "--entity-id", "offsite", "--format", "json")
    assert code == 0 and len(json.loads(out)["forgotten"]) == 2
    code, _, err = hebbs("get", m["id"])
    assert code == 2 and err.count("\n") == 1 and m["id"] in err


def test_tenant_keeps_memories_apart(hebbs, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """`--tenant` (docs/serving.md): a tenant's memories are not another's; keys are made for one tenant."""
    acme = remember(hebbs, "The acme gate code is 4417.", "--tenant", "acme")
    default = remember(hebbs, "The acme gate code is 4417.")
    code, out, _ = hebbs("--tenant", "acme", "list", "--format", "json")
    assert code == 0 and [m["id"] for m in json.loads(out)["memories"]] == [acme["id"]]
    code, out, _ = hebbs("recall", "gate code", "--format", "json")
    assert code == 0 and [r["memory"]["id"] for r in json.loads(out)["results"]] == [default["id"]]
    code, _, err = hebbs("get", acme["id"])
    assert code == 2 and acme["id"] in err  # not default's
    assert (data_dir / "tenants" / "acme" / "records.sqlite3").exists()
    code, out, _ = hebbs("keys", "create", "--tenant", "acme", "--format", "json")
    assert code == 0 and json.loads(out)["tenant"] == "acme" and not json.loads(out)["admin"]
    code, out, _ = hebbs("keys", "create", "--admin", "--format", "json")
    assert code == 0 and json.loads(out)["tenant"] is None and json.loads(out)["admin"]


BAD = [
    ("remember", ""),
    ("remember", "x", "--importance", "1.5"),
    ("remember", "x", "--importance", "nan"),
    ("remember", "x", "--importance", "high"),
    ("remember", "x", "--context", "[1]"),
    ("remember", "x", "--context", "{oops"),
    ("remember", "x", "--edge", "01ARZ3NDEKTSV4RRFFQ69G5FAV:caused_by"),
    ("remember", "x", "--edge", "nonsense"),
    ("remember", "x", "--created-at", "soon"),
    ("recall", "x", "--strategy", "telepathy"),
    ("recall", "x", "--weights", "1:2:3"),
    ("recall", "x", "--weights", "-1:0:0:0"),
    ("recall", "--strategy", "temporal"),
    ("recall", "--strategy", "temporal", "--entity-id", "a", "--time-range", "2025-02-30:"),
    ("recall", "--strategy", "temporal", "--entity-id", "a", "--time-range", "2025-03-01:2025-01-01"),
    ("recall", "x", "--strategy", "causal", "--seed", "01ARZ3NDEKTSV4RRFFQ69G5FAV"),
    ("recall", "x", "--strategy", "causal", "--max-depth", "0"),
    ("recall", "x", "--strategy", "causal", "--edge-types", "caused_by,because"),
    ("recall", "x", "--top-k", "0"),
    ("recall", "x", "--ef-search", "-3"),
    ("recall", "x", "--analogical-alpha", "2"),
    ("forget",),
    ("get", "01ARZ3NDEKTSV4RRFFQ69G5FAV"),
    ("frobnicate",),
    ("recall", "x", "--format", "xml"),
    ("--tenant", "Acme Corp", "stats"),
    ("stats", "--tenant", "../acme"),
    ("keys", "create", "--admin", "--tenant", "acme"),
]


@pytest.mark.parametrize("args", BAD, ids=[" ".join(a) or "empty" for a in BAD])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(hebbs, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    keep = remember(hebbs, "already stored", "--entity-id", "a")
    code, out, err = hebbs(*args)
    assert code == 2
    assert err.startswith("hebbs: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err + out
    code, out, _ = hebbs("stats", "--format", "json")
    assert json.loads(out)["memories"] == 1
    code, out, _ = hebbs("get", keep["id"], "--format", "json")
    assert json.loads(out) == {**keep, "decay_score": pytest.approx(keep["decay_score"])}  # it follows the clock


def _run_hebbs(data_dir: Path, *args: str, check_no_torch: bool = False) -> subprocess.CompletedProcess[str]:
    code = "import sys; from interfaces.cli import main\ntry:\n    main(sys.argv[1:])\nfinally:\n"
    code += "    assert 'torch' not in sys.modules, 'torch was imported'\n" if check_no_torch else "    pass\n"
    env = {**os.environ, "HEBBS_DATA_DIR": str(data_dir)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow
def test_model_free_commands_do_not_import_torch(data_dir: Path) -> None:
    made = _run_hebbs(data_dir, "remember", "Torch-free reads.", "--entity-id", "t", "--format", "json")
    assert made.returncode == 0, made.stderr
    memory_id = json.loads(made.stdout)["id"]
    for args in (
        ["get", memory_id],
        ["stats"],
        ["list"],
        ["recall", "--strategy", "temporal", "--entity-id", "t"],
        ["recall", "--strategy", "causal", "--seed", memory_id],
        ["forget", memory_id],
    ):
        done = _run_hebbs(data_dir, *args, check_no_torch=True)
        assert done.returncode == 0, f"{args}: {done.stderr}"


def test_env_var_selects_the_data_dir(data_dir: Path) -> None:
    done = _run_hebbs(data_dir, "remember", "Where do I live?", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert (data_dir / "records.sqlite3").exists()


def test_every_command_is_documented_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for name in main.commands:
        assert f"hebbs {name}" in readme, f"`hebbs {name}` is not documented in README.md"


def test_a_story_recall_prints_which_sentence_plays_the_part_of_which(hebbs) -> None:  # type: ignore[no-untyped-def]
    analog = ("Coach Daniel wanted his team to win the regional final. To save time, he skipped the penalty practice. "
              "In the final, the match went to penalties. Because they had not practised, his players missed their "
              "kicks, and the team lost the title.")
    remember(hebbs, analog)
    cue = ("Priya wanted to launch her bakery's website before the holiday rush. To save time, she skipped testing the "
           "payment page. On the first busy morning, the payment page crashed. Because of the crash, customers could "
           "not order, and the holiday sales were lost.")
    code, out, _ = hebbs("recall", cue, "--strategy", "analogical", "--analogical-alpha", "0")
    assert code == 0
    mapped = out[out.index("analogical mappings"):]
    assert "systematicity" in mapped and "for the shared surface" in mapped and "plot" in mapped
    plot_lines = [line for line in mapped.splitlines() if "=>" in line and line.rstrip().endswith(")")]
    assert len(plot_lines) >= 2  # sentence by sentence, each with how closely it lines up
    assert "1 Priya wanted to launch" in plot_lines[0] and "1 Coach Daniel wanted" in plot_lines[0]
