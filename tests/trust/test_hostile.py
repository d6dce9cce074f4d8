"""Hostile input through the Python API and the CLI: each case asserts the exact error class (Python) or
exit code with one line on stderr (CLI), and that the store is exactly as it was before."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
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
from tests.trust.conftest import seed

SURROGATE = "\ud800"
BAD_BYTE = b"\xff".decode("utf-8", "surrogateescape")  # what Python makes of an undecodable argv byte
DEEP_JSON = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"a":' * 1000 + "1" + "}" * 1000
BIG = "x" * (1 << 20)
ESCAPE = "\x1b[2J\x1b]8;;http://evil\x07"
NO_DOCUMENTS = str(Path(__file__).parent)  # a folder without Markdown, text or JSON: nothing to index


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


# (id, call(engine, ids), error class): ids[0..2] are the seeded memories.
PY_CASES: list[tuple[str, Callable[[MemoryEngine, list[str]], Any], type[HebbsError]]] = [
    ("content lone surrogate", lambda e, i: e.remember(f"poison {SURROGATE}"), InvalidContentError),
    ("content surrogateescape byte", lambda e, i: e.remember(f"poison {BAD_BYTE}"), InvalidContentError),
    ("content NUL", lambda e, i: e.remember("a\x00b"), InvalidContentError),
    ("content not text", lambda e, i: e.remember(123), InvalidContentError),  # type: ignore[arg-type]
    ("content blank", lambda e, i: e.remember(" \n\t"), InvalidContentError),
    ("content too large", lambda e, i: e.remember("y" * 70_000), InvalidContentError),
    ("context value surrogate", lambda e, i: e.remember("x", context={"k": SURROGATE}), InvalidContextError),
    ("context JSON-escaped surrogate", lambda e, i: e.remember("x", context='{"k": "\\ud800"}'),
     InvalidContextError),
    ("context key surrogate", lambda e, i: e.remember("x", context={BAD_BYTE: 1}), InvalidContextError),
    ("context 1000-deep JSON text", lambda e, i: e.remember("x", context=DEEP_OBJECT), InvalidContextError),
    ("context 1000-deep dict", lambda e, i: e.remember("x", context=nested(1000)), InvalidContextError),
    ("context 33 levels", lambda e, i: e.remember("x", context=nested(33)), InvalidContextError),
    ("context 20 KB", lambda e, i: e.remember("x", context={"k": "z" * 20_000}), InvalidContextError),
    ("context NaN", lambda e, i: e.remember("x", context={"k": float("nan")}), InvalidContextError),
    ("context set", lambda e, i: e.remember("x", context={"k": {1, 2}}), InvalidContextError),
    ("context list", lambda e, i: e.remember("x", context=[1, 2]), InvalidContextError),
    ("context 5000-digit int", lambda e, i: e.remember("x", context='{"a": ' + "9" * 5000 + "}"),
     InvalidContextError),
    ("context int key", lambda e, i: e.remember("x", context={1: "a"}), InvalidContextError),
    ("entity 1 MB", lambda e, i: e.remember("x", entity_id=BIG), ValidationError),
    ("entity surrogate", lambda e, i: e.remember("x", entity_id=SURROGATE), ValidationError),
    ("entity escape sequence", lambda e, i: e.remember("x", entity_id=ESCAPE), ValidationError),
    ("entity not text", lambda e, i: e.remember("x", entity_id=123), ValidationError),
    ("created_at overflows UTC", lambda e, i: e.remember("x", created_at="9999-12-31T23:59:59-14:00"),
     InvalidTimeRangeError),
    ("created_at underflows UTC", lambda e, i: e.remember("x", created_at="0001-01-01T00:00:00+14:00"),
     InvalidTimeRangeError),
    ("created_at datetime.max", lambda e, i: e.remember("x", created_at=datetime.max), InvalidTimeRangeError),
    ("created_at a number", lambda e, i: e.remember("x", created_at=12345), InvalidTimeRangeError),
    ("importance NaN", lambda e, i: e.remember("x", importance=float("nan")), InvalidImportanceError),
    ("importance 2**70", lambda e, i: e.remember("x", importance=2**70), InvalidImportanceError),
    ("edge target None", lambda e, i: e.remember("x", edges=[(None, "caused_by")]), ValidationError),
    ("edge target unknown", lambda e, i: e.remember("x", edges=["01NOSUCHMEMORY0000000000:caused_by"]),
     InvalidEdgeError),
    ("edges a number", lambda e, i: e.remember("x", edges=123), InvalidEdgeError),
    ("edge attrs deep", lambda e, i: e.add_edges([{"source": i[0], "target": i[2], "type": "caused_by",
                                                    "attrs": nested(100)}]), InvalidContextError),
    ("add_edge target None", lambda e, i: e.add_edge(i[0], None, "caused_by"), ValidationError),  # type: ignore
    ("add_edges NaN confidence", lambda e, i: e.add_edges([(i[0], i[2], "caused_by", float("nan"))]),
     InvalidEdgeError),
    ("add_edges a number", lambda e, i: e.add_edges(123), InvalidEdgeError),  # type: ignore[arg-type]
    ("batch with one bad item", lambda e, i: e.remember_many([{"content": "fine"}, {"content": SURROGATE}]),
     InvalidContentError),
    ("recall strategies=123", lambda e, i: e.recall("rack", strategies=123), InvalidRecallError),
    ("recall unknown strategy", lambda e, i: e.recall("rack", strategies=["telepathy"]), InvalidRecallError),
    ("recall cue 1 MB", lambda e, i: e.recall(BIG), InvalidRecallError),
    ("recall cue surrogate", lambda e, i: e.recall(SURROGATE), InvalidRecallError),
    ("recall cue not text", lambda e, i: e.recall(42), InvalidRecallError),  # type: ignore[arg-type]
    ("recall top_k 2**70", lambda e, i: e.recall("rack", top_k=2**70), InvalidRecallError),
    ("recall top_k -1", lambda e, i: e.recall("rack", top_k=-1), InvalidRecallError),
    ("recall negative weight", lambda e, i: e.recall("rack", scoring_weights={"w_relevance": -1}),
     InvalidWeightsError),
    ("recall weights text", lambda e, i: e.recall("rack", scoring_weights="a:b:c:d"), InvalidWeightsError),
    ("recall range overflows", lambda e, i: e.recall("", strategies=["temporal"], entity_id="rack-7",
                                                     time_range=("9999-12-31T23:59:59-14:00", None)),
     InvalidTimeRangeError),
    ("recall range reversed", lambda e, i: e.recall("", strategies=["temporal"], entity_id="rack-7",
                                                    time_range="2026-05-01:2026-01-01"), InvalidTimeRangeError),
    ("recall temporal without entity", lambda e, i: e.recall("", strategies=["temporal"]), InvalidRecallError),
    ("recall seed with escape", lambda e, i: e.recall("rack", strategies=["causal"], seed_memory_id=ESCAPE),
     ValidationError),
    ("recall seed unknown", lambda e, i: e.recall("rack", strategies=["causal"],
                                                  seed_memory_id="01NOSUCHMEMORY0000000000"), MemoryNotFoundError),
    ("list limit 2**70", lambda e, i: e.list_memories(limit=2**70), ValidationError),
    ("list limit -1", lambda e, i: e.list_memories(limit=-1), ValidationError),
    ("list offset -5", lambda e, i: e.list_memories(offset=-5), ValidationError),
    ("list limit text", lambda e, i: e.list_memories(limit="10"), ValidationError),
    ("list revisions text", lambda e, i: e.list_memories(include_revisions="yes"), ValidationError),
    ("list unknown filter", lambda e, i: e.list_memories(colour="red"), ValidationError),
    ("get surrogate id", lambda e, i: e.handle(parse_request("get", {"memory_id": SURROGATE})), ValidationError),
    ("get 10 KB id", lambda e, i: e.handle(parse_request("get", {"memory_id": "a" * 10_000})), ValidationError),
    ("get None", lambda e, i: e.handle(parse_request("get", {"memory_id": None})), ValidationError),
    ("get unknown", lambda e, i: e.get("01NOSUCHMEMORY0000000000"), MemoryNotFoundError),
    ("forget entity by prefix", lambda e, i: e.forget(entity_id="cloudv"), MemoryNotFoundError),
    ("forget a number", lambda e, i: e.forget(123), ValidationError),  # type: ignore[arg-type]
    ("forget a mapping", lambda e, i: e.forget({"a": 1}), ValidationError),  # type: ignore[arg-type]
    ("forget prefix not bool", lambda e, i: e.forget(entity_id="rack-7", prefix="yes"), ValidationError),
    ("forget known and unknown", lambda e, i: e.forget([i[0], "01NOSUCHMEMORY0000000000"]), MemoryNotFoundError),
    ("revise surrogate content", lambda e, i: e.revise(i[0], content=SURROGATE), InvalidContentError),
    ("revise deep context", lambda e, i: e.revise(i[0], context=DEEP_JSON), InvalidContextError),
    ("revise nothing", lambda e, i: e.revise(i[0]), ValidationError),
    ("neighbourhood depth 2**70", lambda e, i: e.neighbourhood(i[0], depth=2**70), ValidationError),
    ("ingest surrogate path", lambda e, i: e.ingest([f"/tmp/{BAD_BYTE}"]), ValidationError),
    ("ingest budget -1", lambda e, i: e.ingest([NO_DOCUMENTS], file_seconds=-1), ValidationError),
    ("ingest budget text", lambda e, i: e.ingest([NO_DOCUMENTS], file_seconds="soon"), ValidationError),
    ("ingest budget inf", lambda e, i: e.ingest([NO_DOCUMENTS], file_seconds=float("inf")), ValidationError),
    ("prime without entity", lambda e, i: e.prime(None), InvalidRecallError),  # type: ignore[arg-type]
    ("unknown operation", lambda e, i: parse_request("telepathy", {}), ValidationError),
    ("request not a mapping", lambda e, i: parse_request("remember", [1, 2]), ValidationError),  # type: ignore
    ("unknown field", lambda e, i: e.remember("x", colour="red"), ValidationError),
]


@pytest.mark.parametrize("call, error", [c[1:] for c in PY_CASES], ids=[c[0] for c in PY_CASES])
def test_python_api_rejects_hostile_input(
    call: Callable[[MemoryEngine, list[str]], Any],
    error: type[HebbsError],
    seeded: tuple[Path, list[str]],
    embedder: SentenceTransformerEmbedder,
    unchanged: Callable[[], None],
) -> None:
    data_dir, ids = seeded
    with MemoryEngine(data_dir, embedder=embedder) as engine, pytest.raises(HebbsError) as raised:
        call(engine, ids)
    assert type(raised.value) is error, f"{type(raised.value).__name__}: {raised.value}"
    assert "\n" not in str(raised.value)
    unchanged()


# (id, argv after --data-dir, exit code); "{0}" in an argument is replaced by a seeded memory id.
CLI_CASES: list[tuple[str, list[str], int]] = [
    ("context JSON-escaped surrogate", ["remember", "poison", "--context", '{"k": "\\ud800"}'], 2),
    ("content undecodable byte", ["remember", f"poison {BAD_BYTE}"], 2),
    ("entity undecodable byte", ["remember", "x", "--entity-id", BAD_BYTE], 2),
    ("get undecodable id", ["get", BAD_BYTE], 2),
    ("recall undecodable cue", ["recall", BAD_BYTE], 2),
    ("list undecodable entity", ["list", "--entity-id", BAD_BYTE], 2),
    ("context 1000 deep", ["remember", "x", "--context", DEEP_OBJECT], 2),
    ("context 1000 deep arrays", ["remember", "x", "--context", '{"a": ' + DEEP_JSON + "}"], 2),
    ("context not an object", ["remember", "x", "--context", "[1]"], 2),
    ("context broken JSON", ["remember", "x", "--context", "{bad"], 2),
    ("context 20 KB", ["remember", "x", "--context", json.dumps({"k": "z" * 20_000})], 2),
    ("created-at overflows UTC", ["remember", "x", "--created-at", "9999-12-31T23:59:59-14:00"], 2),
    ("created-at not a date", ["remember", "x", "--created-at", "yesterday"], 2),
    ("importance nan", ["remember", "x", "--importance", "nan"], 2),
    ("importance 5", ["remember", "x", "--importance", "5"], 2),
    ("importance text", ["remember", "x", "--importance", "high"], 2),
    ("content empty", ["remember", ""], 2),
    ("content NUL", ["remember", "a\x00b"], 2),
    ("entity 1 MB", ["remember", "x", "--entity-id", BIG], 2),
    ("entity escape sequence", ["remember", "x", "--entity-id", ESCAPE], 2),
    ("unknown kind", ["remember", "x", "--kind", "dream"], 2),
    ("edge to unknown memory", ["remember", "x", "--edge", "01NOSUCHMEMORY0000000000:caused_by"], 2),
    ("edge malformed", ["remember", "x", "--edge", "a:b:c:d"], 2),
    ("edge unknown type", ["remember", "x", "--edge", "{0}:loves"], 2),
    ("recall unknown strategy", ["recall", "rack", "--strategy", "telepathy"], 2),
    ("recall top-k 0", ["recall", "rack", "--top-k", "0"], 2),
    ("recall top-k huge", ["recall", "rack", "--top-k", "9" * 30], 2),
    ("recall weights short", ["recall", "rack", "--weights", "1:2"], 2),
    ("recall temporal without entity", ["recall", "--strategy", "temporal"], 2),
    ("recall bad range", ["recall", "--strategy", "temporal", "--entity-id", "rack-7", "--time-range",
                          "2026-13-01:"], 2),
    ("recall cue 1 MB", ["recall", BIG], 2),
    ("recall max-depth 100", ["recall", "rack", "--max-depth", "100"], 2),
    ("recall alpha 2", ["recall", "rack", "--analogical-alpha", "2"], 2),
    ("recall seed unknown", ["recall", "rack", "--strategy", "causal", "--seed", "01NOSUCHMEMORY0000000000"], 2),
    ("list limit -1", ["list", "--limit", "-1"], 2),
    ("list limit huge", ["list", "--limit", "9" * 30], 2),
    ("list offset -1", ["list", "--offset", "-1"], 2),
    ("forget entity by prefix", ["forget", "--entity-id", "cloudv"], 2),
    ("forget --prefix without entity", ["forget", "{0}", "--prefix"], 2),
    ("forget unknown id", ["forget", "01NOSUCHMEMORY0000000000"], 2),
    ("forget nothing", ["forget"], 2),
    ("get unknown", ["get", "01NOSUCHMEMORY0000000000"], 2),
    ("revise nothing", ["revise", "{0}"], 2),
    ("revise surrogate context", ["revise", "{0}", "--context", '{"k": "\\udfff"}'], 2),
    ("index missing path", ["index", "/nonexistent-hebbs-path"], 2),
    ("index budget -1", ["index", NO_DOCUMENTS, "--file-seconds", "-1"], 2),
    ("index budget nan", ["index", NO_DOCUMENTS, "--file-seconds", "nan"], 2),
    ("unknown command", ["telepathy"], 2),
    ("unknown option", ["list", "--colour", "red"], 2),
    ("bad format", ["stats", "--format", "xml"], 2),
]


@pytest.mark.parametrize("argv, code", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_cli_rejects_hostile_input_in_one_line(
    argv: list[str], code: int, seeded: tuple[Path, list[str]], unchanged: Callable[[], None]
) -> None:
    data_dir, ids = seeded
    args = [a.replace("{0}", ids[0]) for a in argv]
    result = CliRunner().invoke(main, ["--data-dir", str(data_dir), *args])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    assert result.stderr.startswith("hebbs: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    result.stderr.encode("utf-8")  # what is printed is valid UTF-8
    unchanged()


def test_undecodable_data_dir_is_refused_before_it_is_created(tmp_path: Path) -> None:
    target = tmp_path / f"data{BAD_BYTE}"
    result = CliRunner().invoke(main, ["--data-dir", str(target), "stats"])
    assert result.exit_code == 2 and result.stderr.startswith("hebbs: error: argument 2 is not valid UTF-8")
    assert list(tmp_path.iterdir()) == []


def test_tables_are_large_enough_and_chroma_still_matches(
    seeded: tuple[Path, list[str]], embedder: SentenceTransformerEmbedder
) -> None:
    assert len(PY_CASES) + len(CLI_CASES) >= 60
    with MemoryEngine(seeded[0], embedder=embedder) as engine:
        stats = engine.stats()
    assert stats["memories"] == stats["vector_index"] == 3


def test_forget_by_prefix_only_when_spelled_out(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    with MemoryEngine(tmp_path / "d", embedder=embedder) as engine:
        seed(engine)
        assert engine.forget(entity_id="cloudvault")  # exact id: fine
        seed(engine)
        with pytest.raises(MemoryNotFoundError):
            engine.forget(entity_id="rack")
        # Prefixes resolve through the entity registry that ingestion builds; without one, "rack" is "rack".
        assert engine.forget(entity_id="rack", prefix=True) == []
        assert len(engine.list_memories(entity_id="rack-7")) == 4
