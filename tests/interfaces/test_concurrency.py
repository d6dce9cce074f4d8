"""Two clients writing and recalling at once through a real server for a bounded time: no write is lost,
and every memory's access count equals the number of recalls that returned it."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from tests.interfaces.conftest import Served

pytestmark = pytest.mark.slow

DURATION = 4.0  # seconds of mixed traffic per client
ENTITY = "concurrency"


def test_two_clients_lose_no_write_and_count_every_access_exactly(served: Served) -> None:
    with served.client() as http:
        seed = [http.post("/v1/memories", json={"content": f"Shared seed note {i} about the release train.",
                                               "entity_id": ENTITY}).json()["id"] for i in range(5)]
        before = {m: http.get(f"/v1/memories/{m}").json()["access_count"] for m in seed}

    written: list[list[str]] = [[], []]
    returned: list[Counter[str]] = [Counter(), Counter()]
    errors: list[str] = []

    def client(n: int) -> None:
        with served.client() as http:
            stop = time.monotonic() + DURATION
            i = 0
            while time.monotonic() < stop:
                i += 1
                if i % 2:
                    reply = http.post("/v1/memories", json={"content": f"client {n} note {i} on the release train",
                                                            "entity_id": f"{ENTITY}-{n}"})
                    if reply.status_code != 201:
                        errors.append(reply.text)
                        return
                    written[n].append(reply.json()["id"])
                else:  # the temporal strategy on the seed entity: exactly the seed memories, every time
                    reply = http.post("/v1/memories/recall", json={"strategies": ["temporal"], "entity_id": ENTITY})
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
    assert all(written) and all(returned), "both clients must have written and recalled"

    with served.client() as http:
        for n in range(2):
            page = http.get("/v1/memories", params={"entity_id": f"{ENTITY}-{n}", "limit": 10_000}).json()
            assert page["total"] == len(written[n])
            assert {m["id"] for m in page["memories"]} == set(written[n])
        recalls = returned[0] + returned[1]
        for m in seed:
            after = http.get(f"/v1/memories/{m}").json()["access_count"]
            assert after - before[m] == recalls[m], m
