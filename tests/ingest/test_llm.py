"""The optional LLM extractor, against a fake OpenAI-compatible server on 127.0.0.1 (a real HTTP server)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from engine import EdgeType, MemoryEngine
from engine.errors import ExtractorError

Write = Callable[[str, str | bytes], Path]

NOTE = "# Atlas review\n\nThe Atlas launch failed on 2026-02-10 because QA was skipped.\n" \
       "Brightpath Software released Atlas.\n"
REPLY = {
    "propositions": [
        {"text": "The Atlas launch failed.", "block": 0, "entities": [{"name": "Atlas", "type": "product"}],
         "subject": "Atlas", "date": "2026-02-10", "plan": False, "event": True,
         "causes": [{"proposition": 2, "cue": "because"}], "relations": []},
        {"text": "   "},  # blank: dropped, and the indexes after it still line up
        {"text": "QA testing was skipped.", "block": 0, "entities": [], "subject": None, "date": None,
         "event": True, "causes": []},
        {"text": "Brightpath Software released Atlas.", "block": 0,
         "entities": [{"name": "Brightpath Software", "type": "organization"}, {"name": "Atlas", "type": "product"}],
         "subject": "Brightpath Software", "event": True,
         "relations": [{"subject": "Brightpath Software", "verb": "release", "object": "Atlas"}]},
    ]
}


class FakeOpenAI:
    """A chat-completions endpoint that answers with `self.reply` and records what it was sent."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.status = 200
        self.content: str = json.dumps(REPLY)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                fake.requests.append({"path": self.path, **json.loads(body)})
                fake.headers.append(dict(self.headers))
                payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": fake.content}}]})
                self.send_response(fake.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    monkeypatch.setenv("HEBBS_LLM_BASE_URL", fake.url)
    monkeypatch.setenv("HEBBS_LLM_MODEL", "fake-model")
    monkeypatch.setenv("HEBBS_LLM_API_KEY", "sk-test")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    yield fake
    fake.close()


def contents(engine: MemoryEngine) -> dict[str, str]:
    return {m.content: m.id for m in engine.list_memories(kind="proposition", limit=100)}


def test_llm_propositions_dates_causes_and_relations(
    engine: MemoryEngine, write: Write, fake_llm: FakeOpenAI, nlp: object
) -> None:
    summary = engine.ingest([write("2026-02-18-atlas.md", NOTE)], extractor="llm")
    assert (summary.extractor, summary.llm_fallbacks) == ("llm", 0)
    props = contents(engine)
    assert set(props) == {"The Atlas launch failed.", "QA testing was skipped.", "Brightpath Software released Atlas."}
    failed = engine.get(props["The Atlas launch failed."])
    assert failed.created_at == datetime(2026, 2, 10, tzinfo=UTC) and failed.entity_id == "atlas"
    causes = [e.target for e in engine.edges_of(failed.id) if e.type == EdgeType.CAUSED_BY and e.source == failed.id]
    assert causes == [props["QA testing was skipped."]]
    released = props["Brightpath Software released Atlas."]
    (relation,) = [e for e in engine.edges_of(released) if e.type == EdgeType.ENTITY_RELATION]
    assert relation.attrs["verb"] == "release" and engine.get(relation.target).entity_id == "atlas"
    (request,) = fake_llm.requests
    assert request["path"] == "/v1/chat/completions" and request["model"] == "fake-model"
    assert "[block 0]" in request["messages"][1]["content"]
    assert fake_llm.headers[0]["Authorization"] == "Bearer sk-test"
    assert "val:failure" in engine.structure_of(failed.id)["features"]  # structure as offline


@pytest.mark.parametrize(("status", "content"), [(500, "{}"), (200, "Sorry, I cannot help."), (200, '{"x": 1}')])
def test_a_failing_llm_falls_back_to_the_offline_extractor(
    engine: MemoryEngine, write: Write, fake_llm: FakeOpenAI, nlp: object, status: int, content: str
) -> None:
    fake_llm.status, fake_llm.content = status, content
    summary = engine.ingest([write("2026-02-18-atlas.md", NOTE)], extractor="llm")
    assert summary.llm_fallbacks == 1
    assert "Brightpath Software released Atlas." in contents(engine)  # the offline sentence split


def test_the_llm_extractor_needs_its_configuration(
    engine: MemoryEngine, write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HEBBS_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("HEBBS_LLM_MODEL", raising=False)
    with pytest.raises(ExtractorError, match="HEBBS_LLM_BASE_URL"):
        engine.ingest([write("a.md", "Text here.")], extractor="llm")


def test_the_extractor_can_be_chosen_by_environment(
    engine: MemoryEngine, write: Write, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, nlp: object
) -> None:
    monkeypatch.setenv("HEBBS_INDEX_EXTRACTOR", "llm")
    assert engine.ingest([write("2026-02-18-atlas.md", NOTE)]).extractor == "llm"
    assert len(fake_llm.requests) == 1
