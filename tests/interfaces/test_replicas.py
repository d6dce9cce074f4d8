"""Two `hebbs serve` replicas on one PostgreSQL database, as an operator runs them: a write acknowledged by
one is recalled on the other within 1 s; clients writing and recalling on both at once for a bounded time
lose no write and leave exact access counts; a replica killed with SIGKILL in the middle of writes loses
none it acknowledged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.interfaces.conftest import KEY, START_TIMEOUT, _answers, free_port, wait_until

pytestmark = pytest.mark.slow

DURATION = 4.0  # seconds of mixed traffic per client
SEED_ENTITY = "replicas"


class Replica:
    def __init__(self, database: str, log: Path) -> None:
        self.port = free_port()
        self.log = log
        hebbs = str(Path(sys.executable).with_name("hebbs"))
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [hebbs, "--database", database, "serve", "--rest-port", str(self.port),
                 "--grpc-port", str(free_port())],
                env={**os.environ, "HEBBS_API_KEY": KEY}, stdout=out, stderr=subprocess.STDOUT,
            )
        self.url = f"http://127.0.0.1:{self.port}"

    def ready(self) -> None:
        wait_until(lambda: _answers(f"{self.url}/v1/health/ready"), START_TIMEOUT, f"replica (see {self.log})",
                   alive=lambda: self.proc.poll() is None)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=60)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture
def replicas(database_url: str, tmp_path: Path) -> Iterator[list[Replica]]:
    started = [Replica(database_url, tmp_path / f"replica-{n}.log") for n in range(2)]
    try:
        for r in started:
            r.ready()
        yield started
    finally:
        for r in started:
            r.stop()


def _hebbs(database: str, *args: str) -> str:
    """A `hebbs` command on the database, as an operator types it; its standard output."""
    hebbs = str(Path(sys.executable).with_name("hebbs"))
    done = subprocess.run([hebbs, "--database", database, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _each_answers(replicas: list[Replica], key: str, status: int) -> None:
    """Every replica answers a request with `key` with `status` within 1 s of now."""
    since = time.monotonic()
    for replica in replicas:
        with httpx.Client(base_url=replica.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            while (got := http.get("/v1/stats").status_code) != status:
                assert time.monotonic() - since < 1.0, f"{replica.url} answered {got}, not {status}, after 1 s"


def _recalled(http: httpx.Client, cue: str) -> list[str]:
    reply = http.post("/v1/memories/recall", json={"cue": cue, "strategies": ["similarity"], "top_k": 1})
    assert reply.status_code == 200, reply.text
    return [r["memory"]["id"] for r in reply.json()["results"]]


def test_two_replicas_on_one_database(replicas: list[Replica], database_url: str) -> None:
    a, b = replicas
    # A write acknowledged by A is recalled on B within 1 s.
    with a.client() as on_a, b.client() as on_b:
        _recalled(on_b, "warm up")  # B's indexes are built before A writes
        written = on_a.post("/v1/memories", json={"content": "The clinic opening moved to the ninth of May."})
        assert written.status_code == 201
        acknowledged = time.monotonic()
        while _recalled(on_b, "clinic opening date") != [written.json()["id"]]:
            assert time.monotonic() - acknowledged < 1.0, "not visible on the other replica within 1 s"
        seed = [on_a.post("/v1/memories", json={"content": f"Seed note {i} about the release train.",
                                                "entity_id": SEED_ENTITY}).json()["id"] for i in range(4)]
        before = {m: on_b.get(f"/v1/memories/{m}").json()["access_count"] for m in seed}

    # Writers and recalls on both replicas at once: every write kept, every access counted.
    written_ids: list[list[str]] = [[], []]
    returned: list[Counter[str]] = [Counter(), Counter()]
    errors: list[str] = []

    def client(n: int) -> None:
        with replicas[n].client() as http:
            stop, i = time.monotonic() + DURATION, 0
            while time.monotonic() < stop:
                i += 1
                if i % 2:
                    reply = http.post("/v1/memories", json={"content": f"replica {n} note {i}",
                                                            "entity_id": f"{SEED_ENTITY}-{n}"})
                    if reply.status_code != 201:
                        errors.append(reply.text)
                        return
                    written_ids[n].append(reply.json()["id"])
                else:
                    reply = http.post("/v1/memories/recall", json={"strategies": ["temporal"],
                                                                   "entity_id": SEED_ENTITY})
                    if reply.status_code != 200:
                        errors.append(reply.text)
                        return
                    returned[n].update(r["memory"]["id"] for r in reply.json()["results"])

    threads = [threading.Thread(target=client, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=DURATION + 120)
    assert not errors, errors[:3]
    assert all(written_ids) and all(returned)
    recalls = returned[0] + returned[1]
    for replica in replicas:
        with replica.client() as http:
            for n in range(2):
                page = http.get("/v1/memories", params={"entity_id": f"{SEED_ENTITY}-{n}", "limit": 10_000}).json()
                assert {m["id"] for m in page["memories"]} == set(written_ids[n])
            for m in seed:
                assert http.get(f"/v1/memories/{m}").json()["access_count"] - before[m] == recalls[m], m

    # The key store is the database's: a key made (`hebbs keys create --database`) while both run works on
    # both, and once revoked is refused by both within the 1 s bound, with no restart.
    made = _hebbs(database_url, "keys", "create", "--name", "shared", "--format", "json")
    key = json.loads(made)["key"]
    _each_answers(replicas, key, 200)
    _hebbs(database_url, "keys", "revoke", json.loads(made)["id"])
    _each_answers(replicas, key, 401)
    _each_answers(replicas, KEY, 200)  # the other key is untouched

    # SIGKILL A while a client writes through it: B holds every write A acknowledged.
    acknowledged_ids: list[str] = []

    def write_until_killed() -> None:
        with a.client() as http:
            for i in range(10_000):
                try:
                    reply = http.post("/v1/memories", json={"content": f"before the kill {i}"})
                except httpx.HTTPError:
                    return
                if reply.status_code == 201:
                    acknowledged_ids.append(reply.json()["id"])

    writer = threading.Thread(target=write_until_killed)
    writer.start()
    wait_until(lambda: len(acknowledged_ids) >= 5, 120, "writes through the replica")
    a.proc.kill()
    writer.join(timeout=60)
    with b.client() as http:
        for memory_id in acknowledged_ids:
            assert http.get(f"/v1/memories/{memory_id}").status_code == 200, memory_id
