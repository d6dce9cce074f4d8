"""Uploads, retries, document erasure and shutdown, from outside (issue 30, items 2, 6 and 9), against one
real `hebbs serve`: bad upload names are 400 with the reason and store nothing; an upload is identified
by its name (unchanged: a no-op, changed: replaced); an idempotency key makes a retried write store once,
also after a restart; forgetting a document forgets its propositions, their vectors and the uploaded file;
SIGTERM during a long write lets it finish and answer."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from click.testing import CliRunner

from engine import MemoryEngine, config
from engine.api import ForgetRequest, ForgetResponse
from engine.embedding import SentenceTransformerEmbedder
from engine.index.vector import stored_forms
from interfaces.cli import main
from tests.interfaces.conftest import wait_until
from tests.trust.servers import Server, running, start, stop
from tests.trust.test_erasure import files_holding

MARKER = "zorblaxian"  # a word only the secret document has
SECRET = (f"# Vault plan\n\nThe {MARKER} vault under Globex tower opens on Fridays.\n\n"
          f"Only the night guard knows the {MARKER} code.\n\nGlobex will move the vault to Oslo in May.\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    served = start(tmp_path_factory.mktemp("uploads") / "data")
    yield served
    stop(served)


def _upload(served: Server, files: list[tuple[str, bytes]], key: str | None = None) -> httpx.Response:
    with served.http() as http:
        return http.post("/v1/upload", files=[("files", (name, body, "text/markdown")) for name, body in files],
                         headers={"Idempotency-Key": key} if key else {})


def _uploads(served: Server) -> list[str]:
    root = served.data_dir / "uploads"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


# --- item 6: upload names and identity ------------------------------------------------------------------
@pytest.mark.parametrize(("files", "says"), [
    ([(".", b"x")], "'.'"),
    ([("..", b"x")], "'..'"),
    ([("../escape.md", b"x")], "'..'"),
    ([("/etc/cron.d/job.md", b"x")], "relative"),
    ([("a" * 300 + ".md", b"x")], "255 bytes"),
    ([("notes//a.md", b"x")], "empty"),
    ([("win\\path.md", b"x")], "'/'"),
    ([("plan", b"x"), ("plan/a.md", b"y")], "both a file and the folder"),
    ([("same.md", b"x"), ("same.md", b"y")], "twice"),
], ids=["dot", "dot-dot", "parent", "absolute", "300 characters", "empty part", "backslash", "file and folder",
        "one name twice"])
def test_bad_upload_names_are_400_with_the_reason(server: Server, files: list[tuple[str, bytes]], says: str) -> None:
    before, kept = server.memories(), _uploads(server)
    reply = _upload(server, files)
    assert reply.status_code == 400, reply.text
    assert says in reply.json()["error"]
    assert server.memories() == before and _uploads(server) == kept


@pytest.mark.slow
def test_a_name_that_is_an_uploaded_file_cannot_become_a_folder(server: Server) -> None:
    assert _upload(server, [("report.md", b"# Report\n\nInitech hired two engineers in June.\n")]).status_code == 200
    before = server.memories()
    reply = _upload(server, [("report.md/inner.md", b"# x\n\nA sentence about nothing in particular.\n")])
    assert reply.status_code == 400 and "is an uploaded file" in reply.json()["error"]
    assert server.memories() == before


def test_an_upload_is_identified_by_its_name(server: Server) -> None:
    first = "# Roadmap\n\nHooli will ship the tablet in March.\n\nThe tablet costs 300 dollars.\n"
    done = _upload(server, [("team/roadmap.md", first.encode())])
    assert done.status_code == 200 and done.json()["documents_indexed"] == 1
    after_first = server.memories()
    again = _upload(server, [("team/roadmap.md", first.encode())])  # the same file again: nothing new
    assert again.status_code == 200 and again.json()["documents_unchanged"] == 1
    assert server.memories() == after_first
    changed = first.replace("300 dollars", "450 dollars")
    replaced = _upload(server, [("team/roadmap.md", changed.encode())])
    assert replaced.status_code == 200 and replaced.json()["documents_indexed"] == 1
    assert "team/roadmap.md" in _uploads(server)
    assert (server.data_dir / "uploads" / "team" / "roadmap.md").read_text() == changed
    with server.http() as http:
        texts = [m["content"] for m in http.get("/v1/memories", params={"limit": 1000}).json()["memories"]]
    assert any("450 dollars" in t for t in texts) and not any("300 dollars" in t for t in texts)
    assert server.memories() == after_first  # replaced, not added beside


# --- item 2: idempotency keys ---------------------------------------------------------------------------
def test_a_retried_remember_batch_and_upload_store_once(server: Server) -> None:
    before = server.memories()
    with server.http() as http:
        one = [http.post("/v1/memories", json={"content": "Pied Piper closed its seed round."},
                         headers={"Idempotency-Key": "retry-one"}) for _ in range(3)]
        assert {r.status_code for r in one} == {201} and len({r.json()["id"] for r in one}) == 1
        assert [r.headers.get("Idempotent-Replayed") for r in one] == [None, "true", "true"]
        batch = {"items": [{"content": f"Batch fact {n} about Pied Piper's office move."} for n in range(5)]}
        twice = [http.post("/v1/memories", json=batch, headers={"Idempotency-Key": "retry-batch"}) for _ in range(2)]
        assert twice[0].json() == twice[1].json()
        other = http.post("/v1/memories", json={"content": "x"}, headers={"Idempotency-Key": "retry-batch"})
        assert other.status_code == 201  # same operation, same key: the first reply, nothing new stored
        assert other.json() == twice[0].json()
    assert server.memories() == before + 1 + 5
    doc = b"# Memo\n\nPied Piper will hire a new CFO in April.\n"
    uploads = [_upload(server, [("memo.md", doc)], key="retry-upload") for _ in range(2)]
    assert uploads[0].json() == uploads[1].json() and uploads[1].headers.get("Idempotent-Replayed") == "true"
    crossed = _upload(server, [("memo2.md", doc)], key="retry-one")  # a key of a remember, used for an upload
    assert crossed.status_code == 409 and "remember" in crossed.json()["error"]


# --- item 9: forgetting a document ----------------------------------------------------------------------
def _stored_vectors(data_dir: Path, ids: list[str]) -> list[bytes]:
    """The embeddings the server stored for `ids`, read from its record store (WAL readers do not block)."""
    with sqlite3.connect(f"{(data_dir / 'records.sqlite3').as_uri()}?mode=ro", uri=True) as conn:
        marks = ",".join("?" * len(ids))
        rows = conn.execute(f"SELECT embedding FROM memories WHERE id IN ({marks})", ids).fetchall()
    return [form for (blob,) in rows for form in stored_forms(np.frombuffer(blob, dtype=np.float32))]


def test_forgetting_a_document_erases_what_was_derived_from_it(server: Server) -> None:
    done = _upload(server, [("vault-plan.md", SECRET.encode())])
    assert done.status_code == 200 and done.json()["propositions"] >= 2, done.text
    with server.http() as http:
        mine = [m for m in http.get("/v1/memories", params={"limit": 10_000}).json()["memories"]
                if MARKER in m["content"] or "Oslo in May" in m["content"]]
        document = next(m for m in mine if m["kind"] == "document")
        propositions = [m for m in mine if m["kind"] == "proposition"]
        assert len(propositions) >= 2
        needles = [MARKER.encode(), *_stored_vectors(server.data_dir, [m["id"] for m in mine])]
        assert files_holding(server.data_dir, [MARKER.encode()])
        before = server.memories()
        forgot = http.delete(f"/v1/memories/{document['id']}")
        assert forgot.status_code == 200, forgot.text
        assert forgot.json()["cascade_count"] == len(propositions)
        assert set(forgot.json()["forgotten"]) == {m["id"] for m in mine}
        assert server.memories() == before - len(mine)
        left = http.post("/v1/recall", json={"cue": f"{MARKER} vault code", "top_k": 50}).json()["results"]
        assert not any(MARKER in r["memory"]["content"] for r in left)
    assert "vault-plan.md" not in _uploads(server)
    assert files_holding(server.data_dir, needles) == []


def test_the_python_api_and_cli_count_the_cascade(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "vault.md").write_text(SECRET)
    data = tmp_path / "data"
    with MemoryEngine(data, embedder=embedder) as engine:
        engine.ingest([notes])
        docs = engine.list_memories(kind="document")
        props = engine.list_memories(kind="proposition")
        assert len(docs) == 1 and len(props) >= 2
        forgotten = engine.handle(ForgetRequest.parse({"memory_ids": [docs[0].id]}))
        assert isinstance(forgotten, ForgetResponse) and forgotten.cascade_count == len(props)
        assert engine.stats()["memories"] == 0
        engine.ingest([notes])
        doc_id = engine.list_memories(kind="document")[0].id
        count = len(engine.list_memories(kind="proposition"))
    result = CliRunner().invoke(main, ["--data-dir", str(data), "forget", doc_id])
    assert result.exit_code == 0 and f"({count} derived from a forgotten document)" in result.stdout


# --- item 2: SIGTERM during a long write (last: it stops the server) -----------------------------------
@pytest.mark.slow
def test_sigterm_during_a_long_write_lets_it_finish_and_answer(server: Server) -> None:
    before = server.memories()
    size = config.MAX_BATCH_ITEMS  # the most a request may hold: many chunks, so SIGTERM lands mid-batch
    assert size >= 4 * config.WRITE_CHUNK_ITEMS
    items = [{"content": f"Shutdown test line {n}: pallet {n} was loaded.", "entity_id": "pallets"}
             for n in range(size)]
    result: dict[str, httpx.Response] = {}

    def write() -> None:
        with server.http(timeout=600) as http:  # the whole batch: minutes on a busy 2-core machine
            result["reply"] = http.post("/v1/memories", json={"items": items},
                                        headers={"Idempotency-Key": "long-batch"})

    writer = threading.Thread(target=write)
    writer.start()

    def first_chunk_committed() -> bool:
        # A read gets in between two chunks (health keeps its counts while writes queue for the lock).
        return server.memories() > before

    wait_until(first_chunk_committed, 300, "the first chunk of the batch")
    assert writer.is_alive()
    assert stop(server, timeout=600) == 0  # SIGTERM: the write in flight is waited for
    writer.join(timeout=60)
    reply = result["reply"]
    assert reply.status_code == 201 and len(reply.json()["memories"]) == size
    assert "data dir released" in server.output()
    # Durable and not duplicated, and the idempotency keys survived the restart.
    with running(server.data_dir) as again:
        assert again.memories() == before + size
        with again.http() as http:
            retried = http.post("/v1/memories", json={"items": items}, headers={"Idempotency-Key": "long-batch"})
            assert retried.status_code == 201 and retried.headers.get("Idempotent-Replayed") == "true"
            assert retried.json() == reply.json()
        assert again.memories() == before + size
