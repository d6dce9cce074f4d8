"""Graceful shutdown under load: writes in flight when the server stops either finish (and are then
durable and indexed) or are refused; nothing acknowledged is lost and nothing is half-written."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import httpx

from engine import MemoryEngine
from engine.embedding import SentenceTransformerEmbedder
from tests.interfaces.conftest import InProcess, wait_until


def test_writes_in_flight_at_shutdown_are_finished_or_refused_never_lost(
    in_process: Callable[..., InProcess], embedder: SentenceTransformerEmbedder
) -> None:
    server = in_process()
    data_dir = Path(server.service.engine.data_dir)
    acked: list[str] = []
    refused: list[int] = []

    def writer(n: int) -> None:
        with httpx.Client(base_url=server.rest, timeout=30) as http:
            i = 0
            while True:
                i += 1
                try:
                    reply = http.post("/v1/memories", json={"content": f"writer {n} note {i}", "entity_id": "stop"})
                except httpx.HTTPError:
                    return  # the server has gone away
                if reply.status_code != 201:
                    assert reply.status_code == 503 and "shutting down" in reply.json()["error"], reply.text
                    assert reply.json()["stored"] == 0  # a refused write says that nothing was stored
                    refused.append(reply.status_code)
                    return
                acked.append(reply.json()["id"])

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    wait_until(lambda: len(acked) >= 20, 120, "the writers")
    server.shutdown()
    for t in threads:
        t.join(timeout=60)
    with MemoryEngine(data_dir, embedder=embedder) as engine:  # the lock was released: this process reopens it
        stats = engine.stats()
        assert stats["memories"] == stats["vector_index"] >= len(acked)
        assert set(acked) <= {m.id for m in engine.list_memories(entity_id="stop", limit=100_000)}
