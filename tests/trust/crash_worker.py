"""What a crash-trial child process runs until it is killed with SIGKILL (see test_crash.py).

Writes go through the real engine, real Chroma and the real record store; only the embedding model is a
deterministic stand-in (`HashEmbedder`), so a trial costs a process start, not a model load.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np


class HashEmbedder:
    """Deterministic unit vectors from a text's hash: durability does not depend on what vectors mean."""

    name = "hash-embedder-for-tests"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows)


def write_until_killed(data_dir: str, ack_path: str, trial: int) -> None:
    """Remember batches forever; after each returns, append its ids to the acknowledgement file."""
    from engine import MemoryEngine

    with MemoryEngine(Path(data_dir), embedder=HashEmbedder()) as engine, open(ack_path, "a") as ack:
        n = 0
        while True:
            size = 1 + n % 7
            batch = engine.remember_many(
                [{"content": f"trial {trial} memory {n + j}", "entity_id": f"trial-{trial}"} for j in range(size)]
            )
            ack.write("".join(f"{m.id}\n" for m in batch))
            ack.flush()  # in the page cache: a kill -9 of this process cannot lose it
            n += size


def index_until_killed(data_dir: str, folder: str, ack_path: str) -> None:
    """Index a folder; the acknowledgement file says the run started (the kill lands somewhere inside)."""
    from engine import MemoryEngine

    with MemoryEngine(Path(data_dir), embedder=HashEmbedder()) as engine:
        Path(ack_path).write_text("started\n")
        engine.ingest([folder])
        Path(ack_path).write_text("started\nfinished\n")


def remember_deferred_until_killed(data_dir: str, ack_path: str, trial: int) -> None:
    """Batched remembers whose structures are deferred, with the idle worker extracting them at once (no
    pause needed), so a kill lands inside a write, a worker's extraction or its commit."""
    from engine import MemoryEngine, structures

    structures.STRUCTURE_IDLE_SECONDS = 0.0
    structures.STRUCTURE_IDLE_BATCH = 4
    with MemoryEngine(Path(data_dir), embedder=HashEmbedder()) as engine, open(ack_path, "a") as ack:
        n = 0
        while True:
            size = 8 + n % 17
            batch = engine.remember_many([
                {"content": f"In trial {trial} the engineer {n + j} repaired the pump because it failed.",
                 "entity_id": f"trial-{trial}"}
                for j in range(size)
            ])
            ack.write("".join(f"{m.id}\n" for m in batch))
            ack.flush()
            n += size
