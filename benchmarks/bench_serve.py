"""What serving costs, and what a Chroma server costs, measured in one process run (docs/scaling.md).

One synthetic store of N memories; the same similarity recalls timed round-robin (so drift on a shared
machine hits every variant alike):
- `engine`: `MemoryEngine.handle` in process (the baseline),
- `rest`: the same engine behind the REST app (uvicorn on loopback, one keep-alive httpx client),
- `grpc`: the same engine behind the gRPC servicers (one channel),
- `engine_chroma_server`: a second engine over the same records with its vector index on `chroma run`.
Then throughput: recalls per second through REST from 1 and from 4 concurrent clients for a few seconds.
Then subscribe latency, from the end of a fed chunk to its first pushed memory (benchmarks/subscribe_latency.py).

    .venv/bin/python -m benchmarks.bench_serve --size 2000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks import corpus as corpus_mod
from benchmarks import subscribe_latency
from benchmarks.timing import summarize
from engine import MemoryEngine, NewMemory
from engine.api import RecallRequest
from engine.embedding import create_embedder
from engine.index.vector import VectorIndex

RESULTS = Path(__file__).resolve().parent / "results" / "serve.json"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(ok: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            raise RuntimeError("a server did not start")
        time.sleep(0.1)


def _up(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0, help="per throughput run")
    parser.add_argument("--subscribe-cues", type=int, default=100, help="chunks fed per subscribe transport")
    args = parser.parse_args()

    import grpc
    import uvicorn
    from hebbs._generated import hebbs_pb2 as pb
    from hebbs._generated import hebbs_pb2_grpc as pb_grpc

    from interfaces.grpc.server import start_grpc
    from interfaces.http import create_app
    from interfaces.service import HebbsService

    work = Path(tempfile.mkdtemp(prefix="hebbs-bench-serve-"))
    model = create_embedder()
    corp = corpus_mod.generate(args.size)
    cues = [c.text for c in corpus_mod.cues(corp, args.queries)]
    chroma = subprocess.Popen([str(Path(sys.executable).with_name("chroma")), "run", "--path", str(work / "chroma"),
                               "--host", "127.0.0.1", "--port", str(port := _free_port())],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        engine = MemoryEngine(work / "data", embedder=model)
        for start in range(0, args.size, 500):
            engine.remember_many([NewMemory(m.content, entity_id=m.entity_id, importance=m.importance)
                                  for m in corp.memories[start:start + 500]])
        engine.warm()
        service = HebbsService(engine, auth=False)
        rest_port = _free_port()
        http_server = uvicorn.Server(uvicorn.Config(create_app(service), host="127.0.0.1", port=rest_port,
                                                    log_level="warning"))
        threading.Thread(target=http_server.run, daemon=True).start()
        grpc_port = _free_port()
        grpc_server = start_grpc(service, "127.0.0.1", grpc_port)
        rest = f"http://127.0.0.1:{rest_port}"
        _wait(lambda: http_server.started)
        _wait(lambda: _up(f"http://127.0.0.1:{port}/api/v2/heartbeat"))

        # The same records, the vector index on the Chroma server (filled by reconcile on first use).
        shutil.copy(work / "data" / "records.sqlite3", work / "records-copy.sqlite3")
        remote_dir = work / "remote"
        remote_dir.mkdir()
        shutil.copy(work / "records-copy.sqlite3", remote_dir / "records.sqlite3")
        remote = MemoryEngine(remote_dir, embedder=model,
                              vector_index=lambda: VectorIndex.open_server(f"http://127.0.0.1:{port}", "bench"))
        remote.warm()

        client = httpx.Client(base_url=rest, timeout=60)
        channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
        stub = pb_grpc.MemoryServiceStub(channel)
        similarity = [pb.RecallStrategyConfig(strategy_type=pb.SIMILARITY)]
        variants: dict[str, Callable[[str], Any]] = {
            "engine": lambda cue: engine.handle(RecallRequest.parse({"cue": cue, "strategies": ["similarity"]})),
            "rest": lambda cue: client.post("/v1/memories/recall", json={"cue": cue, "strategies": ["similarity"]}
                                            ).raise_for_status(),
            "grpc": lambda cue: stub.Recall(pb.RecallRequest(cue=cue, strategies=similarity)),
            "engine_chroma_server": lambda cue: remote.handle(RecallRequest.parse({"cue": cue,
                                                                                   "strategies": ["similarity"]})),
        }
        for fn in variants.values():  # warm every path once
            fn(cues[0])
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for cue in cues:
            for name, fn in variants.items():
                t0 = time.perf_counter()
                fn(cue)
                samples[name].append((time.perf_counter() - t0) * 1000)
        latency = {name: summarize(ms) for name, ms in samples.items()}
        base = latency["engine"]["p50_ms"]
        for row in latency.values():
            row["ratio_p50_to_engine"] = round(row["p50_ms"] / base, 2)

        def throughput(clients: int) -> float:
            done = [0] * clients
            stop = time.monotonic() + args.seconds

            def run(n: int) -> None:
                with httpx.Client(base_url=rest, timeout=60) as own:
                    i = n
                    while time.monotonic() < stop:
                        own.post("/v1/memories/recall", json={"cue": cues[i % len(cues)],
                                                              "strategies": ["similarity"]}).raise_for_status()
                        done[n] += 1
                        i += clients

            threads = [threading.Thread(target=run, args=(n,)) for n in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return round(sum(done) / args.seconds, 1)

        rates = {f"{c}_clients_recalls_per_s": throughput(c) for c in (1, 4)}
        subscribe = subscribe_latency.measure(rest, f"127.0.0.1:{grpc_port}", cues[: args.subscribe_cues])
        result = {"size": args.size, "queries": args.queries, "latency": latency, "rest_throughput": rates,
                  "subscribe_chunk_to_push": subscribe, "load_average": list(os.getloadavg())}
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
        channel.close()
        client.close()
        http_server.should_exit = True
        grpc_server.stop(2).wait()
        remote.close()
        service.close()
    finally:
        chroma.terminate()
        chroma.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
