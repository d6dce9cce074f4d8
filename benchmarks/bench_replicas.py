"""Several `hebbs serve` replicas on one PostgreSQL database: REST recalls per second through one replica and
through two, and how long a write acknowledged by one takes to be recalled on the other.

    .venv/bin/python -m benchmarks.bench_replicas --size 2000 --seconds 20

The synthetic corpus (benchmarks/corpus.py), embedded once, is written straight into a throwaway PostgreSQL on
loopback (engine/store/postgres/local_server.py); two real `hebbs serve --database URL` processes then serve
it. Throughput: the same number of concurrent clients sends default recalls (preset `recommended`) of the
corpus's cues either all to replica A or split between A and B, the two layouts alternating (A, A+B, A, A+B)
so drift on a shared machine hits both alike. Visibility: a remember through A's REST, then recalls through
B's until B returns it. Results: benchmarks/results/replicas.json, with the load average.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks import corpus as corpus_mod
from benchmarks.bench_serve import _free_port, _up, _wait
from benchmarks.bench_stores import load_corpus
from benchmarks.machine import describe
from benchmarks.paths import save_by_size
from benchmarks.timing import summarize
from engine.embedding import create_embedder
from engine.store.postgres import PostgresStore
from engine.store.postgres.local_server import LocalServer

RESULTS = Path(__file__).resolve().parent / "results" / "replicas.json"
KEY = "hb_bench_replicas_0123456789abcdef"


def _serve(database: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    hebbs = str(Path(sys.executable).with_name("hebbs"))
    with log.open("wb") as out:
        proc = subprocess.Popen([hebbs, "--database", database, "serve", "--rest-port", str(port), "--grpc-port",
                                 str(_free_port()), "--sweep-minutes", "0"],
                                env={**os.environ, "HEBBS_API_KEY": KEY}, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    _wait(lambda: _up(f"{url}/v1/health/ready"), timeout=300)
    return proc, url


def _client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {KEY}"}, timeout=120)


def _throughput(urls: list[str], clients: int, cues: list[str], seconds: float) -> float:
    """Recalls per second from `clients` concurrent clients, spread over `urls` round-robin."""
    done = [0] * clients
    start = threading.Barrier(clients + 1)

    def run(n: int) -> None:
        with _client(urls[n % len(urls)]) as http:
            start.wait()
            stop = time.monotonic() + seconds
            for cue in itertools.cycle(cues[n::clients] or cues):
                if time.monotonic() >= stop:
                    return
                reply = http.post("/v1/memories/recall", json={"cue": cue, "top_k": 10})
                reply.raise_for_status()
                done[n] += 1

    threads = [threading.Thread(target=run, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    began = time.monotonic()
    for t in threads:
        t.join()
    return sum(done) / (time.monotonic() - began)


def _visibility(a: str, b: str, writes: int) -> list[float]:
    """Milliseconds from a remember acknowledged by A to B's similarity recall returning it."""
    out: list[float] = []
    with _client(a) as on_a, _client(b) as on_b:
        for n in range(writes):
            text = f"Replica probe {n}: the harbour crane inspection moved to week {n + 7}."
            written = on_a.post("/v1/memories", json={"content": text})
            written.raise_for_status()
            acknowledged = time.perf_counter()
            while True:
                found = on_b.post("/v1/memories/recall", json={"cue": text, "top_k": 1, "strategies": ["similarity"]})
                if [r["memory"]["id"] for r in found.json()["results"]] == [written.json()["id"]]:
                    break
            out.append((time.perf_counter() - acknowledged) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0, help="per throughput run (4 runs)")
    parser.add_argument("--writes", type=int, default=30)
    args = parser.parse_args()
    corp = corpus_mod.generate(args.size)
    vectors = create_embedder().encode(corp.texts())
    cues = [c.text for c in corpus_mod.cues(corp, 200)]
    work = Path(tempfile.mkdtemp(prefix="hebbs-bench-replicas-"))
    server = LocalServer().start()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        store = PostgresStore(server.url)
        load_corpus(store, corp, vectors)
        store.close()
        (a_proc, a), (b_proc, b) = (_serve(server.url, work / f"replica-{n}.log") for n in range(2))
        procs = [a_proc, b_proc]
        for url in (a, b):
            _throughput([url], 1, cues[:5], 2.0)  # warm: the model and the indexes loaded before timing
        load_before = [round(x, 2) for x in os.getloadavg()]
        rates: dict[str, list[float]] = {"one_replica": [], "two_replicas": []}
        for _ in range(2):
            rates["one_replica"].append(_throughput([a], args.clients, cues, args.seconds))
            rates["two_replicas"].append(_throughput([a, b], args.clients, cues, args.seconds))
        visible = _visibility(a, b, args.writes)
        load_after = [round(x, 2) for x in os.getloadavg()]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=60)
        server.remove()
        shutil.rmtree(work, ignore_errors=True)
    one, two = (sum(v) / len(v) for v in rates.values())
    out: dict[str, Any] = {
        "size": args.size, "clients": args.clients, "seconds_per_run": args.seconds, "machine": describe(),
        "load_average_before": load_before, "load_average_after": load_after,
        "recalls_per_second": {k: [round(x, 1) for x in v] for k, v in rates.items()},
        "two_vs_one": round(two / one, 2), "write_to_visible_ms": summarize(visible),
    }
    save_by_size(RESULTS, args.size, out)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
