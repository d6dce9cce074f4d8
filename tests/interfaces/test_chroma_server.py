"""`--chroma-url`: the vector index on a Chroma server (`chroma run` on a free loopback port, one per
session). Recall works through it, and the record store stays the truth: an emptied collection is
rebuilt from it when the engine opens."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from engine import MemoryEngine
from engine.embedding import SentenceTransformerEmbedder
from engine.errors import StoreError
from engine.index.vector import VectorIndex
from tests.interfaces.conftest import InProcess, free_port, wait_until


@pytest.fixture(scope="session")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    port = free_port()
    root = tmp_path_factory.mktemp("chroma")
    log = (root / "chroma.log").open("wb")
    proc = subprocess.Popen([chroma, "run", "--path", str(root / "db"), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{url}/api/v2/heartbeat", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(up, 120, f"chroma run (see {log.name})", alive=lambda: proc.poll() is None)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.mark.slow
def test_recall_through_a_server_on_a_chroma_server(
    chroma_url: str, in_process: Callable[..., InProcess]
) -> None:
    server = in_process(vector_index=lambda: VectorIndex.open_server(chroma_url, "recall_test"))
    with httpx.Client(base_url=server.rest, timeout=60) as http:
        for text in ("The Acme kickoff moved to Friday.", "Acme's budget review found a gap.",
                     "The coffee machine is broken again."):
            assert http.post("/v1/memories", json={"content": text, "entity_id": "acme"}).status_code == 201
        results = http.post("/v1/memories/recall", json={"cue": "when is the Acme kickoff", "top_k": 2}).json()
        top = results["results"][0]
        assert top["memory"]["content"].startswith("The Acme kickoff")
        assert top["strategy_details"][0]["distance"] < 0.5
        assert http.get("/v1/stats").json()["vector_index"] == 3


@pytest.mark.slow
def test_an_emptied_collection_is_rebuilt_from_the_record_store(
    chroma_url: str, tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    def vectors() -> VectorIndex:
        return VectorIndex.open_server(chroma_url, "rebuild_test")

    with MemoryEngine(tmp_path / "data", embedder=embedder, vector_index=vectors) as engine:
        made = [engine.remember(f"Rebuild note {i}: the release train left on time.") for i in range(4)]
        assert engine.stats()["vector_index"] == 4
    import chromadb

    port = int(chroma_url.rsplit(":", 1)[1])
    chromadb.HttpClient(host="127.0.0.1", port=port).delete_collection("rebuild_test")
    with MemoryEngine(tmp_path / "data", embedder=embedder, vector_index=vectors) as engine:
        assert engine.stats()["vector_index"] == 4
        found = engine.recall("Rebuild note 2: the release train", top_k=1)
        assert found[0].memory.id == made[2].id


def test_an_unreachable_chroma_server_is_a_clear_store_error() -> None:
    with pytest.raises(StoreError, match="cannot reach the Chroma server"):
        VectorIndex.open_server(f"http://127.0.0.1:{free_port()}")


@pytest.mark.slow
def test_each_tenant_has_a_collection_of_its_own_on_the_chroma_server(
    chroma_url: str, tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    """`hebbs serve --chroma-url`: tenant T's vectors in the collection `memories.T`, `default`'s in `memories`
    as before tenants; the same text in both tenants is recalled by each as its own memory only."""
    import chromadb

    from interfaces.server import open_tenants

    tenants = open_tenants(tmp_path / "data", chroma_url, embedder=embedder)
    try:
        made = {t: tenants.get(t).remember("The tenants' release train left on time.").id for t in ("default", "acme")}
        for tenant, own in made.items():
            found = tenants.get(tenant).recall("release train", strategies=["similarity"], top_k=5)
            assert [r.memory.id for r in found] == [own]
    finally:
        tenants.close()
    port = int(chroma_url.rsplit(":", 1)[1])
    client = chromadb.HttpClient(host="127.0.0.1", port=port)
    assert client.get_collection("memories.acme").get()["ids"] == [made["acme"]]
    assert made["default"] in client.get_collection("memories").get()["ids"]
