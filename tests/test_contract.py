"""One request model, every transport: the same table of good and bad requests gives the same JSON and the
same error (message and exit code / class) through the Python API and through `hebbs --format json`.

A scenario runs step by step against a fresh data dir per transport. `$n` in a payload is the id of the
memory step n created. Ids and times differ between runs, so outputs are compared after replacing each
id by its order of appearance and each timestamp by a marker; floats are rounded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine import MemoryEngine
from engine.api import parse_request
from engine.embedding import SentenceTransformerEmbedder
from engine.errors import (
    HebbsError,
    InvalidContentError,
    InvalidContextError,
    InvalidEdgeError,
    InvalidImportanceError,
    InvalidRecallError,
    InvalidTimeRangeError,
    InvalidWeightsError,
    MemoryNotFoundError,
    ValidationError,
)
from interfaces.cli import main
from interfaces.errors import outcome_of

OK = None
# (operation, payload, expected error class or OK)
SCENARIO: list[tuple[str, dict[str, Any], type[HebbsError] | None]] = [
    ("remember", {"content": "The cooling fan failed.", "entity_id": "rack-7", "importance": 0.7,
                  "created_at": "2026-01-05T10:00:00Z"}, OK),
    ("remember", {"content": "Rack 7 overheated because the cooling fan failed.", "entity_id": "rack-7",
                  "edges": ["$0:caused_by:0.9"], "created_at": "2026-01-05T11:00:00Z"}, OK),
    ("remember", {"content": "The data centre replaced the rack's fans.", "entity_id": "rack-7",
                  "context": {"ticket": "OPS-12"}, "created_at": "2026-01-06T09:00:00Z"}, OK),
    ("remember", {"content": "Dana Whitfield approved the budget.", "entity_id": "dana whitfield"}, OK),
    ("remember", {"content": "Dana Scott joined the team.", "entity_id": "dana scott", "kind": "insight"}, OK),
    ("remember", {"content": "   "}, InvalidContentError),
    ("remember", {"content": "x", "importance": 7}, InvalidImportanceError),
    ("remember", {"content": "x", "importance": -0.1}, InvalidImportanceError),
    ("remember", {"content": "x", "context": "[1, 2]"}, InvalidContextError),
    ("remember", {"content": "x", "context": "{not json"}, InvalidContextError),
    ("remember", {"content": "x", "kind": "dream"}, ValidationError),
    ("remember", {"content": "x", "edges": ["nope"]}, InvalidEdgeError),
    ("remember", {"content": "x", "edges": ["$0:likes:0.5"]}, InvalidEdgeError),
    ("remember", {"content": "x", "edges": ["$0:caused_by:2"]}, InvalidEdgeError),
    ("remember", {"content": "x", "edges": ["01NOSUCHMEMORY0000000000:caused_by"]}, InvalidEdgeError),
    ("remember", {"content": "x", "created_at": "yesterday-ish"}, InvalidTimeRangeError),
    ("get", {"memory_id": "$1"}, OK),
    ("get", {"memory_id": "01NOSUCHMEMORY0000000000"}, MemoryNotFoundError),
    ("list", {"entity_id": "rack-7"}, OK),
    ("list", {"entity_id": "rack-7", "limit": 1, "offset": 1}, OK),
    ("list", {"min_importance": 0.6}, OK),
    ("list", {"kind": "insight"}, OK),
    ("list", {"time_range": "2026-01-05:2026-01-05"}, OK),
    ("list", {"time_range": "2026-02-01:2026-01-01"}, InvalidTimeRangeError),
    ("list", {"limit": 0}, ValidationError),
    ("list", {"entity_id": "dana"}, OK),  # no registry without ingestion: taken as given
    ("stats", {}, OK),
    ("recall", {"cue": "why did the rack overheat", "strategies": ["similarity"], "top_k": 2}, OK),
    ("recall", {"cue": "rack", "strategies": ["temporal"], "entity_id": "rack-7"}, OK),
    ("recall", {"cue": "", "strategies": ["causal"], "seed_memory_id": "$1", "max_depth": 2}, OK),
    ("recall", {"cue": "fan", "strategies": ["similarity", "causal"], "scoring_weights": "1:0:0:0"}, OK),
    ("recall", {"cue": "why did the fan fail", "strategies": ["lexical"], "top_k": 2}, OK),
    ("recall", {"cue": "rack fan", "preset": "recommended", "top_k": 3}, OK),
    ("recall", {"cue": "rack fan", "top_k": 3}, OK),  # no strategies, no preset: the default preset
    ("recall", {"cue": "x", "preset": "best-ever"}, InvalidRecallError),
    ("recall", {"cue": " ", "strategies": ["lexical"]}, InvalidRecallError),
    ("recall", {"cue": "x", "strategies": ["telepathy"]}, InvalidRecallError),
    ("recall", {"cue": "x", "strategies": ["temporal"]}, InvalidRecallError),
    ("recall", {"cue": "", "strategies": ["similarity"]}, InvalidRecallError),
    ("recall", {"cue": "x", "top_k": 0}, InvalidRecallError),
    ("recall", {"cue": "x", "scoring_weights": "1:2:3"}, InvalidWeightsError),
    ("recall", {"cue": "x", "strategies": ["causal"], "max_depth": 11}, InvalidRecallError),
    ("recall", {"cue": "x", "analogical_alpha": 1.5, "strategies": ["analogical"]}, InvalidRecallError),
    ("recall", {"cue": "x", "strategies": ["causal"], "edge_types": "caused_by,sparkles"}, InvalidEdgeError),
    ("recall", {"cue": "x", "strategies": ["causal"], "seed_memory_id": "01NOSUCHMEMORY0000000000"},
     MemoryNotFoundError),
    ("revise", {"memory_id": "$2", "importance": 0.9}, OK),
    ("revise", {"memory_id": "$2"}, ValidationError),
    ("revise", {"memory_id": "$2", "importance": 3}, InvalidImportanceError),
    ("revise", {"memory_id": "01NOSUCHMEMORY0000000000", "content": "x"}, MemoryNotFoundError),
    ("forget", {"memory_ids": ["01NOSUCHMEMORY0000000000"]}, MemoryNotFoundError),
    ("forget", {"memory_ids": ["$4"]}, OK),
    ("stats", {}, OK),
]

CLI_FLAGS = {
    "entity_id": "--entity-id", "importance": "--importance", "created_at": "--created-at", "kind": "--kind",
    "limit": "--limit", "offset": "--offset", "min_importance": "--min-importance", "time_range": "--time-range",
    "top_k": "--top-k", "scoring_weights": "--weights", "seed_memory_id": "--seed", "max_depth": "--max-depth",
    "edge_types": "--edge-types", "ef_search": "--ef-search", "analogical_alpha": "--analogical-alpha",
    "preset": "--preset",
    "content": "--content",
}
POSITIONAL = {"remember": "content", "get": "memory_id", "revise": "memory_id", "recall": "cue"}


def cli_args(op: str, payload: dict[str, Any]) -> list[str]:
    """The `hebbs` command line for one request."""
    args = [op]
    rest = dict(payload)
    if op in POSITIONAL:
        args.append(str(rest.pop(POSITIONAL[op])))
    for name, value in rest.items():
        if name == "context":
            args += ["--context", value if isinstance(value, str) else json.dumps(value)]
        elif name == "edges":
            args += [a for edge in value for a in ("--edge", edge)]
        elif name == "strategies":
            args += [a for s in value for a in ("--strategy", s)]
        elif name == "memory_ids":
            args += list(value)
        else:
            args += [CLI_FLAGS[name], str(value)]
    return [*args, "--format", "json"]


Outcome = tuple[str, Any]  # ("ok", normalised json) or ("error", (exit code, message))


def resolve(payload: dict[str, Any], created: list[str]) -> dict[str, Any]:
    text = json.dumps(payload)
    for n in range(len(created) - 1, -1, -1):
        text = text.replace(f"${n}", created[n])
    return dict(json.loads(text))


def normalise(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: normalise(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, ids) for v in value]
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, str):
        if re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", value):
            return ids.setdefault(value, f"<id {len(ids)}>")
        if re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", value) and not value.endswith(":00Z"):
            return "<now>"
    return value


def run_scenario(call: Callable[[str, dict[str, Any]], Outcome]) -> Iterator[tuple[int, Outcome]]:
    created: list[str] = []
    ids: dict[str, str] = {}
    for step, (op, payload, _) in enumerate(SCENARIO):
        kind, value = call(op, resolve(payload, created))
        created.append(value["id"] if kind == "ok" and op == "remember" else "")
        yield step, (kind, normalise(value, ids) if kind == "ok" else value)


@pytest.fixture
def python_api(
    store: dict[str, Any], embedder: SentenceTransformerEmbedder
) -> Iterator[Callable[[str, dict], Outcome]]:
    """The Python API on each record store (SQLite, PostgreSQL): the other transports run on SQLite, so the
    same outputs also say that both stores answer every request alike."""
    with MemoryEngine(**store, embedder=embedder) as engine:
        errors: list[type[HebbsError]] = []

        def call(op: str, payload: dict[str, Any]) -> Outcome:
            try:
                return "ok", engine.handle(parse_request(op, payload)).to_dict()
            except HebbsError as exc:
                errors.append(type(exc))
                return "error", (outcome_of(exc).exit_code, str(exc), type(exc))

        yield call


@pytest.fixture
def cli(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Callable[[str, dict], Outcome]:
    runner = CliRunner()

    def call(op: str, payload: dict[str, Any]) -> Outcome:
        result = runner.invoke(main, ["--data-dir", str(tmp_path / "cli"), *cli_args(op, payload)])
        if result.exit_code == 0:
            return "ok", json.loads(result.stdout)
        prefix = "hebbs: error: "
        assert result.stderr.startswith(prefix) and result.stderr.count("\n") == 1, result.stderr
        return "error", (result.exit_code, result.stderr[len(prefix) :].strip())

    return call


def test_cli_and_python_api_agree_on_every_request(python_api: Callable, cli: Callable) -> None:
    assert len(SCENARIO) >= 30
    through_python = dict(run_scenario(python_api))
    through_cli = dict(run_scenario(cli))
    for step, (op, payload, expected) in enumerate(SCENARIO):
        kind, value = through_python[step]
        where = f"step {step}: {op} {payload}"
        if expected is OK:
            assert kind == "ok", f"{where}: {value}"
        else:
            assert kind == "error" and issubclass(value[2], expected), f"{where}: {value}"
            value = value[:2]
        assert through_cli[step] == (kind, value), where
