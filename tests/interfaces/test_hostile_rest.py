"""Hostile input through the REST API of a real `hebbs serve`: a 4xx with the reason (never a 500 or a
traceback), and nothing stored changes. The same rules as tests/trust/test_hostile.py, over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.interfaces.conftest import Served

DEEP = '{"a":' * 1000 + "1" + "}" * 1000
NO_DOCUMENTS = str(Path(__file__).parent)  # a folder without Markdown, text or JSON: nothing to index

# (id, method, path, raw body or None, query params or None, expected status)
CASES: list[tuple[str, str, str, bytes | None, dict[str, Any] | None, int]] = [
    ("content JSON-escaped surrogate", "post", "/v1/memories", b'{"content": "poison \\ud800"}', None, 400),
    ("context JSON-escaped surrogate", "post", "/v1/memories", b'{"content": "x", "context": {"k": "\\udfff"}}',
     None, 400),
    ("context 1000 deep", "post", "/v1/memories", b'{"content": "x", "context": ' + DEEP.encode() + b"}", None,
     400),
    ("context 1000 deep as text", "post", "/v1/memories", json.dumps({"content": "x", "context": DEEP}).encode(),
     None, 400),
    ("context 20 KB", "post", "/v1/memories", json.dumps({"content": "x", "context": {"k": "z" * 20_000}}).encode(),
     None, 400),
    ("invalid UTF-8 body", "post", "/v1/memories", b'{"content": "\xff\xfe"}', None, 400),
    ("entity 1 MB", "post", "/v1/memories", json.dumps({"content": "x", "entity_id": "e" * (1 << 20)}).encode(),
     None, 400),
    ("entity escape sequence", "post", "/v1/memories", json.dumps({"content": "x", "entity_id": "\x1b[2J"}).encode(),
     None, 400),
    ("created_at overflows UTC", "post", "/v1/memories",
     json.dumps({"content": "x", "created_at": "9999-12-31T23:59:59-14:00"}).encode(), None, 400),
    ("content NUL", "post", "/v1/memories", json.dumps({"content": "a\x00b"}).encode(), None, 400),
    ("list limit -1", "get", "/v1/memories", None, {"limit": -1}, 400),
    ("list limit 2**70", "get", "/v1/memories", None, {"limit": 2**70}, 400),
    ("recall cue surrogate", "post", "/v1/recall", b'{"cue": "\\ud800"}', None, 400),
    ("recall cue 1 MB", "post", "/v1/recall", json.dumps({"cue": "c" * (1 << 20)}).encode(), None, 400),
    ("forget entity by prefix", "post", "/v1/forget", json.dumps({"entity_id": "ra"}).encode(), None, 404),
    ("forget undecodable id", "post", "/v1/forget", b'{"memory_ids": ["\\udcff"]}', None, 400),
    ("index budget -1", "post", "/v1/index", json.dumps({"paths": [NO_DOCUMENTS], "file_seconds": -1}).encode(),
     None, 400),
]


@pytest.mark.parametrize("method, path, body, params, status", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rest_rejects_hostile_input_with_a_reason(
    served: Served, method: str, path: str, body: bytes | None, params: dict[str, Any] | None, status: int
) -> None:
    with served.client() as client:
        before = client.get("/v1/stats").json()
        response = client.request(method, path, content=body, params=params,
                                  headers={"Content-Type": "application/json"} if body is not None else {})
        assert response.status_code == status, response.text
        detail = json.dumps(response.json())
        assert "Traceback" not in detail and "internal error" not in detail
        response.content.decode("utf-8")  # valid UTF-8
        assert client.get("/v1/stats").json() == before


def test_hostile_rest_table_is_not_trivial() -> None:
    assert len(CASES) >= 15 and all(400 <= c[-1] < 500 for c in CASES)
