"""The speed benchmark (GUIDE section 8): every operation side by side with the floor, in one process run.

The floor of a similarity recall is "embed the cue + one raw Chroma query on the same collection". The
raw query asks for `max(top_k, ef_search)` neighbours, which is how this collection searches with the
engine's `ef_search` (see engine/index/vector.py), so floor and engine do the same HNSW work; a
`floor_k` variant asking only `top_k` neighbours is reported too. Operations are timed round-robin, one
cue at a time through every operation, so machine noise (other jobs on a shared box) hits all of them
alike and the ratios stay meaningful even when absolute times drift. Writes are compared with the raw
model: a single `remember` with one `encode` call, a batched `remember_many` with encoding the same
number of texts. Relational structures and contradiction checks follow writes (engine/structures.py,
engine/contradictions/follow.py), so after each timed write the time to extract its pending structures
(`catch_up_structures`, what the next analogical read or the idle worker does) and to run its pending
checks (`catch_up_contradictions`, what the next `contradiction_prepare` or the idle worker does) is timed
too, and the rows report the returned throughput and the sustained one with both.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import corpus as corpus_mod
from benchmarks.embed_cache import CachingEmbedder, cached_vectors, vector_key
from benchmarks.machine import rss_mib
from benchmarks.paths import REPO_ROOT
from benchmarks.progress import bar, log
from benchmarks.report import READ_ORDER
from benchmarks.timing import Samples, Stopwatch, summarize
from engine import MemoryEngine, NewMemory, build_request
from engine.clock import ManualClock
from engine.config import DEFAULT_EF_SEARCH

READ_OPS = READ_ORDER  # one list of the timed reads, in the order the report shows them


@dataclass
class PerfSettings:
    sizes: list[int]
    queries: int = 200
    warmup: int = 10
    top_k: int = 10
    single_writes: int = 40
    batch_size: int = 256
    batches: int = 4
    reopen_runs: int = 3
    seed: int = 7
    peer: bool = True
    hebbmem_max_n: int = 1_000  # its build is O(n^2) and one recall takes seconds at 1,000 (see peer.py)
    hebbmem_queries: int = 3
    work_dir: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _row(system: str, size: int, op: str, samples: list[float], basis: str, basis_p50: float | None) -> dict:
    s = summarize(samples)
    ratio = round(s["p50_ms"] / basis_p50, 3) if basis_p50 and s.get("p50_ms") is not None else None
    return {"system": system, "size": size, "operation": op, **s, "ratio_to_floor": ratio, "ratio_basis": basis}


def build_store(
    data_dir: Path, corp: corpus_mod.Corpus, embedder: Any, clock: ManualClock
) -> tuple[MemoryEngine, list[str], dict]:
    """Write the corpus through the engine's own write path (`remember_many`, `add_edges`), in chunks."""
    engine = MemoryEngine(data_dir, embedder=embedder, clock=clock)
    ids: list[str] = []
    chunk = 5000
    with Stopwatch() as sw_mem, bar(f"write {corp.n:,} memories", corp.n) as update:
        for start in range(0, corp.n, chunk):
            items = [
                NewMemory(m.content, m.importance, m.context, m.entity_id, created_at=m.created_at)
                for m in corp.memories[start : start + chunk]
            ]
            ids.extend(m.id for m in engine.remember_many(items))
            update(len(ids), corp.n)
    with Stopwatch() as sw_edges:
        for start in range(0, len(corp.edges), 50_000):
            engine.add_edges([(ids[s], ids[t], kind, conf) for s, t, kind, conf in corp.edges[start : start + 50_000]])
    with Stopwatch() as sw_structures:  # deferred structures, extracted before any read is timed
        engine.catch_up_structures()
    with Stopwatch() as sw_checks:  # deferred contradiction checks, run before any read is timed
        engine.catch_up_contradictions()
    info = {
        "write_memories_s": round(sw_mem.seconds, 2),
        "write_edges_s": round(sw_edges.seconds, 2),
        "structures_catch_up_s": round(sw_structures.seconds, 2),
        "contradiction_checks_catch_up_s": round(sw_checks.seconds, 2),
        "memories_per_s": round(corp.n / sw_mem.seconds, 1),
        "memories_per_s_with_structures": round(corp.n / (sw_mem.seconds + sw_structures.seconds), 1),
    }
    return engine, ids, info


def reopen_in_subprocess(data_dir: Path, runs: int, cue: str | None = None) -> list[dict]:
    """Run `benchmarks.reopen` in fresh processes (a reopen in this process would hit Chroma's cache); `cue`:
    the first default recall's (a cue of the store's corpus)."""
    out = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.reopen", str(data_dir), *([cue] if cue else [])],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


def read_ops(
    engine: MemoryEngine, model: Any, top_k: int, seeds: list[str], torch_model: Any = None
) -> dict[str, Callable[[corpus_mod.Cue, int], Any]]:
    """`torch_model`: the sentence-transformers (torch) embedder, timed in the same rounds as the default
    (ONNX) one, so the new floor is compared with the torch floor under the same machine noise."""
    n_floor = max(top_k, DEFAULT_EF_SEARCH)

    def floor(cue: corpus_mod.Cue, i: int) -> Any:
        return engine.raw_vector_query(model.encode([cue.text])[0], n_floor)

    def floor_k(cue: corpus_mod.Cue, i: int) -> Any:
        return engine.raw_vector_query(model.encode([cue.text])[0], top_k)

    def recall(**params: Any) -> Callable[[corpus_mod.Cue, int], Any]:
        def run(cue: corpus_mod.Cue, i: int) -> Any:
            args = {k: (v(cue, i) if callable(v) else v) for k, v in params.items()}
            return engine.retrieve(build_request(top_k=top_k, **args))

        return run

    text = lambda cue, i: cue.text  # noqa: E731
    entity = lambda cue, i: cue.entity_id  # noqa: E731
    seed = lambda cue, i: seeds[i % len(seeds)]  # noqa: E731
    torch_ops: dict[str, Callable[[corpus_mod.Cue, int], Any]] = {}
    if torch_model is not None:
        torch_ops = {
            "floor_torch": lambda cue, i: engine.raw_vector_query(torch_model.encode([cue.text])[0], n_floor),
            "encode_torch": lambda cue, i: torch_model.encode([cue.text]),
        }
    return {
        **torch_ops,
        "floor": floor,
        "floor_k": floor_k,
        "encode": lambda cue, i: model.encode([cue.text]),
        "similarity": recall(cue=text, strategies=["similarity"]),
        "recommended": recall(cue=text),
        # What `hebbs recall CUE` and the servers run: the same recall through the facade, counted (the results'
        # access counts written), contradiction marks and decay stamps included.
        "recall_counted": lambda cue, i: engine.recall(cue.text, top_k=top_k),
        "temporal": recall(strategies=["temporal"], entity_id=entity),
        "causal": recall(cue=text, strategies=["causal"], max_depth=5),
        "causal_seeded": recall(strategies=["causal"], seed_memory_id=seed, max_depth=5),
        "analogical": recall(cue=text, strategies=["analogical"]),
        "all_four": recall(
            cue=text, strategies=["similarity", "temporal", "causal", "analogical"], entity_id=entity, max_depth=5
        ),
    }


# Reads that write (a counted recall writes its results' access counts, and the log checkpoint follows on a
# thread of its own): timed in rounds of their own with the floor (`FLOOR_OF_WRITING_READS`), after the other
# reads, so their writes do not land in the other operations' samples.
WRITING_READS = ("recall_counted",)
FLOOR_OF_WRITING_READS = "floor_writing_rounds"


def floor_of(op: str, reads: dict[str, list[float]]) -> float:
    """The p50 of the floor timed in the same rounds as `op`."""
    return summarize(reads[FLOOR_OF_WRITING_READS if op in WRITING_READS else "floor"])["p50_ms"]


def time_reads(
    ops: dict[str, Callable[[corpus_mod.Cue, int], Any]], cues: list[corpus_mod.Cue], warmup: int, label: str
) -> dict[str, list[float]]:
    """The reads that write nothing round-robin, then those that write (`WRITING_READS`) round-robin with the
    floor: each cue goes through every operation of a pass (in a shuffled order) before the next cue."""
    reads = _round_robin({k: v for k, v in ops.items() if k not in WRITING_READS}, cues, warmup, label)
    writing = {k: v for k, v in ops.items() if k in WRITING_READS}
    if writing:
        apart = _round_robin({"floor": ops["floor"], **writing}, cues, warmup, f"{label}, counted")
        reads.update({**{k: apart[k] for k in writing}, FLOOR_OF_WRITING_READS: apart["floor"]})
    return reads


def _round_robin(
    ops: dict[str, Callable[[corpus_mod.Cue, int], Any]], cues: list[corpus_mod.Cue], warmup: int, label: str
) -> dict[str, list[float]]:
    """Round-robin: each cue goes through every operation (in a shuffled order) before the next cue."""
    samples = {name: Samples(name) for name in ops}
    for i, cue in enumerate(cues[:warmup]):
        for fn in ops.values():
            fn(cue, i)
    measured = cues[warmup:]
    names = list(ops)
    rng = np.random.default_rng(len(measured))
    with bar(f"recall timings ({label})", len(measured)) as update:
        for i, cue in enumerate(measured):
            # A fresh order per cue: no operation always runs first (cold caches) or right after a heavy one.
            for j in rng.permutation(len(names)):
                name = names[j]
                samples[name].time(partial(ops[name], cue, i))
            update(i + 1, len(measured))
    return {name: s.ms for name, s in samples.items()}


def time_writes(
    engine: MemoryEngine, model: Any, corp: corpus_mod.Corpus, ids: list[str], s: PerfSettings
) -> dict[str, list[float]]:
    """Single and batched remembers on fresh text (the model really runs), interleaved with raw encodes."""
    single = corpus_mod.fresh_texts(2 * s.single_writes + 4, seed=s.seed + corp.n, entities=corp.entities)
    names = ("encode_single", "remember_single", "catch_up_single", "checks_single", "encode_batch", "remember_batch",
             "catch_up_batch", "checks_batch")
    out = {k: Samples(k) for k in names}
    rng = np.random.default_rng(s.seed)
    for i in range(s.single_writes + 2):
        (text_a, entity_a), (text_b, _) = single[2 * i], single[2 * i + 1]
        target = ids[int(rng.integers(len(ids)))]
        enc = lambda t=text_b: model.encode([t])  # noqa: E731
        rem = lambda t=text_a, e=entity_a, tg=target: engine.remember(  # noqa: E731
            t, entity_id=e, importance=0.5, edges=[(tg, "caused_by", 0.8)]
        )
        if i < 2:  # warm-up
            enc()
            rem()
            engine.catch_up_structures()
            engine.catch_up_contradictions()
            continue
        out["encode_single"].time(enc)
        out["remember_single"].time(rem)
        out["catch_up_single"].time(engine.catch_up_structures)
        out["checks_single"].time(engine.catch_up_contradictions)
    batch_texts = corpus_mod.fresh_texts(2 * s.batch_size * s.batches, seed=s.seed + 2 * corp.n, entities=corp.entities)
    with bar("batched writes", s.batches) as update:
        for b in range(s.batches):
            chunk = batch_texts[2 * b * s.batch_size : 2 * (b + 1) * s.batch_size]
            raw, mine = chunk[: s.batch_size], chunk[s.batch_size :]
            out["encode_batch"].time(partial(model.encode, [t for t, _ in raw]))
            items = [NewMemory(t, 0.5, None, e) for t, e in mine]
            out["remember_batch"].time(partial(engine.remember_many, items))
            out["catch_up_batch"].time(engine.catch_up_structures)
            out["checks_batch"].time(engine.catch_up_contradictions)
            update(b + 1, s.batches)
    return {k: v.ms for k, v in out.items()}


def _with_catch_up(
    row: dict, written: list[float], caught_up: list[float], checked: list[float], encode_p50: float, texts: int
) -> None:
    """Add to a write row the time to extract its deferred structures and to run its deferred contradiction
    checks afterwards, and the sustained rate including both (per write: returned + catch-ups), beside the
    returned rate the target is measured on."""
    both = [w + c + k for w, c, k in zip(written, caught_up, checked, strict=True)]
    sustained_p50 = summarize(both)["p50_ms"]
    row["structures_catch_up_p50_ms"] = summarize(caught_up)["p50_ms"]
    row["checks_catch_up_p50_ms"] = summarize(checked)["p50_ms"]
    row["sustained_p50_ms"] = sustained_p50
    row["sustained_throughput_per_s"] = round(texts / (sustained_p50 / 1000.0), 1)
    row["sustained_vs_encode"] = round(encode_p50 / sustained_p50, 3)


def run_size(n: int, model: Any, s: PerfSettings, work: Path) -> dict[str, Any]:
    """Everything at one corpus size: build, reopen, reads, writes (and the peer, when it fits)."""
    log(f"[bold]size {n:,}[/bold]: generating the corpus")
    corp = corpus_mod.generate(n, s.seed)
    with bar(f"embeddings for {n:,} (cached in benchmarks/.cache)", n) as update:
        table = cached_vectors(f"synthetic-n{n}-s{s.seed}", corp.texts(), model.encode, vector_key(model), update)
    caching = CachingEmbedder(model, table)
    data_dir = work / f"store-{n}"
    if data_dir.exists():
        shutil.rmtree(data_dir)
    clock = ManualClock(corpus_mod.YEAR_START + timedelta(days=366))
    rss_before = rss_mib()
    with Stopwatch() as sw_build:
        engine, ids, build_info = build_store(data_dir, corp, caching, clock)
    engine.close()
    log(f"built {n:,} memories in {sw_build.seconds:.1f}s; timing reopen in fresh processes")
    reopen = reopen_in_subprocess(data_dir, s.reopen_runs)

    engine = MemoryEngine(data_dir, embedder=model, clock=clock)
    engine.warm()
    rss_open = rss_mib()
    cues = corpus_mod.cues(corp, s.queries + s.warmup, seed=s.seed + 1)
    linked = {ids[source] for source, *_ in corp.edges}
    seeds = [i for i in ids[:: max(1, n // 500)] if i in linked]
    ops = read_ops(engine, model, s.top_k, seeds or ids[:1], s.extra.get("torch_model"))
    reads = time_reads(ops, cues, s.warmup, f"{n:,}")

    peer_rows: list[dict] = []
    peer_info: list[dict[str, Any]] = []
    if s.peer:
        from benchmarks import peer

        peer_rows, peer_info = peer.run(
            corp, table, caching, cues, s, floor_fn=ops["floor"], hebbs_fn=ops["similarity"]
        )

    writes = time_writes(engine, model, corp, ids, s)
    engine.close()

    rows = [_row("hebbs", n, op, reads[op], "floor", floor_of(op, reads)) for op in READ_OPS if op in reads]
    enc1 = summarize(writes["encode_single"])["p50_ms"]
    encb = summarize(writes["encode_batch"])["p50_ms"]
    rows.append(_row("model", n, "encode_single", writes["encode_single"], "encode_single", enc1))
    single_row = _row("hebbs", n, "remember_single", writes["remember_single"], "encode_single", enc1)
    _with_catch_up(single_row, writes["remember_single"], writes["catch_up_single"], writes["checks_single"], enc1, 1)
    rows.append(single_row)
    rows.append(_row("model", n, "encode_batch", writes["encode_batch"], "encode_batch", encb))
    batch_row = _row("hebbs", n, "remember_batch", writes["remember_batch"], "encode_batch", encb)
    batch_row["batch_size"] = s.batch_size
    batch_row["throughput_per_s"] = round(s.batch_size / (batch_row["p50_ms"] / 1000.0), 1)
    batch_row["throughput_vs_encode"] = round(encb / batch_row["p50_ms"], 3)
    _with_catch_up(batch_row, writes["remember_batch"], writes["catch_up_batch"], writes["checks_batch"], encb,
                   s.batch_size)
    rows.append(batch_row)
    reopen_s = [r["total_s"] * 1000.0 for r in reopen]
    reopen_row = _row("hebbs", n, "reopen", reopen_s, "none", None)
    reopen_row["breakdown_s"] = {
        k: round(float(np.median([r[k] for r in reopen])), 3) for k in reopen[0] if k.endswith("_s")
    }
    rows.append(reopen_row)
    rows.extend(peer_rows)
    shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "rows": rows,
        "info": {
            "size": n,
            "corpus": corp.stats,
            "build_s": round(sw_build.seconds, 1),
            **build_info,
            "embedding_cache_hits": caching.hits,
            "rss_before_build_mib": rss_before,
            "rss_store_open_mib": rss_open,
            "reopen_process_rss_mib": round(float(np.median([r["rss_open_mib"] for r in reopen])), 1),
            "reopen_process_rss_before_open_mib": round(
                float(np.median([r["rss_before_open_mib"] for r in reopen])), 1
            ),
            "peer": peer_info,
        },
    }


def run(s: PerfSettings, model: Any) -> dict[str, Any]:
    work = s.work_dir or Path(tempfile.mkdtemp(prefix="hebbs-bench-"))
    rows: list[dict] = []
    sizes: list[dict] = []
    try:
        for n in s.sizes:
            result = run_size(n, model, s, work)
            rows.extend(result["rows"])
            sizes.append(result["info"])
    finally:
        if s.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    return {"results": rows, "sizes": sizes}
