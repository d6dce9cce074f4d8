"""How recall, reopen, disk and memory grow with the store: 10k -> 100k -> 1M memories.

    python -m benchmarks.scale [--sizes 10000,100000,1000000] [--queries 40] [--save]

Embedding a million texts on a 2-core machine takes many hours, so the stores here are built from
*precomputed* vectors, and this is what the figures mean:

- The synthetic corpus of each size comes from `benchmarks.corpus.generate` (texts, entities, times,
  importances, edges), like `make bench`.
- The *base*: the first `--base` (10,000) memories' texts are embedded for real by the default model
  (cached in `benchmarks/.cache/`) and parsed for real by spaCy (their episode structures, cached too).
- Every memory of a larger store gets the vector of a base memory written from the same template,
  perturbed by Gaussian noise and renormalised (cosine about 0.9 to its base: neighbourhoods stay
  template-shaped, no two vectors are equal), and that base memory's structure. Everything else goes
  through the engine's own write path (`remember_many` in batches of 5,000, `add_edges`).
- Cues are embedded and parsed for real at recall time, by the same model as the floor.

Each size's reads (the four strategies, alone and together, and `recommended`, `hebbs recall`'s default)
are timed round-robin with the floor (embed the cue + one raw Chroma query) exactly as in `benchmarks.perf`;
reopen is timed in fresh processes; disk is the data directory's size; RSS per memory is the growth of a
fresh process's RSS when the store is opened, divided by its size. The 1-minute load average is sampled
every 30 s (per size and for the whole run), and growth exponents per decade are saved with the sizes.
Then the write-heavy mix (`write_mix`): `--mix-rounds` rounds of one `remember` and one default recall,
against the same recalls on the quiet store in alternating blocks; issue 27's targets are checked per size
(`targets`) and saved beside the figures. A size that is projected not to fit in what is left of
`--budget-minutes` (from the previous size's build rate) is replaced by the largest multiple of 50,000 that
does, and the run says so.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import corpus as corpus_mod
from benchmarks.embed_cache import cached_vectors, vector_key
from benchmarks.growth import growth
from benchmarks.machine import LoadSampler, describe
from benchmarks.paths import CACHE_DIR, RESULTS_DIR, display, write_json
from benchmarks.perf import floor_of, read_ops, reopen_in_subprocess, time_reads
from benchmarks.progress import log
from benchmarks.timing import Samples, Stopwatch, summarize
from engine import MemoryEngine, NewMemory, build_request
from engine.analogy.episode_graph import GRAPH_VERSION
from engine.analogy.plot import Embed
from engine.analogy.text import EpisodeExtractor
from engine.clock import ManualClock
from engine.embedding import create_embedder

STRATEGIES = ("floor", "similarity", "temporal", "causal", "causal_seeded", "analogical", "all_four", "recommended",
              "recall_counted")
PERTURBATION = 0.45  # noise norm relative to the unit base vector: cosine to the base about 0.91
WRITE_CHUNK = 5000
FIT_MARGIN = 0.8  # the build rate falls as the store grows: plan on 80% of the time left
BUILD_SHARE = 0.75  # of a size's time, the share that goes to building (the rest: reopen and reads)
FIT_STEP = 50_000  # a size run instead of one that does not fit is a multiple of this


class PerturbedVectors:
    """An `Embedder` for the build only: each text gets its base memory's real vector plus fresh noise."""

    def __init__(self, name: str, base_of: dict[str, np.ndarray], seed: int) -> None:
        self.name = name
        self.base_of = base_of
        self.rng = np.random.default_rng(seed)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        base = np.stack([self.base_of[t] for t in texts])
        noise = self.rng.standard_normal(base.shape).astype(np.float32)
        noise *= PERTURBATION / np.linalg.norm(noise, axis=1, keepdims=True)
        out = base + noise
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


class TableExtractor:
    """A `StructureExtractor` answering known texts from a table and anything else (cues) with spaCy."""

    name = "episode"

    def __init__(self, table: dict[str, dict[str, Any]], embed: Embed | None = None) -> None:
        self.table = table
        self.inner = EpisodeExtractor(embed=embed)  # with the model: a cue of several sentences has its plot

    def extract(self, texts: Sequence[str]) -> list[dict[str, Any]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.table]
        if missing:
            self.table.update(zip(missing, self.inner.extract(missing), strict=True))
        return [self.table[t] for t in texts]


def _base_structures(label: str, texts: list[str], embed: Embed) -> dict[str, dict[str, Any]]:
    """The base texts' real episode structures (spaCy, and the model for the plots of texts of several sentences,
    as the engine extracts them), cached as JSON beside the embedding cache."""
    path = CACHE_DIR / f"{label}-structures-v{GRAPH_VERSION}-plots.json"  # a new extractor version parses them again
    if path.exists():
        stored = json.loads(path.read_text())
        if len(stored) == len(texts):
            return dict(zip(texts, stored, strict=True))
    structures: list[dict[str, Any]] = []
    extractor = EpisodeExtractor(embed=embed)
    for start in range(0, len(texts), 1000):
        structures.extend(extractor.extract(texts[start : start + 1000]))
        log(f"base structures: {len(structures):,}/{len(texts):,}")
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(structures))
    return dict(zip(texts, structures, strict=True))


def _disk_mib(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def assign_bases(corp: corpus_mod.Corpus, base: corpus_mod.Corpus, seed: int) -> dict[int, int]:
    """For each memory of `corp`, a base memory written from the same template (itself if it is one)."""
    by_template: dict[int, list[int]] = defaultdict(list)
    for i, m in enumerate(base.memories):
        by_template[int(m.context["template"])].append(i)
    rng = np.random.default_rng(seed)
    out: dict[int, int] = {}
    for i, m in enumerate(corp.memories):
        if i < base.n and m.content == base.memories[i].content:
            out[i] = i
        else:
            pool = by_template[int(m.context["template"])]
            out[i] = pool[int(rng.integers(len(pool)))]
    return out


def build_store(n: int, corp: corpus_mod.Corpus, base_of: dict[str, np.ndarray], table: dict[str, dict[str, Any]],
                args: argparse.Namespace, data_dir: Path, model: Any) -> tuple[dict[str, Any], list[str]]:
    """The store of size `n` built through the engine's write path: (its build figures, the ids in order)."""
    log(f"size {n:,}: building through remember_many")
    shutil.rmtree(data_dir, ignore_errors=True)
    clock = ManualClock(corpus_mod.YEAR_START + timedelta(days=366))
    embedder = PerturbedVectors(model.name, base_of, args.seed)
    extractor = TableExtractor(table, model.encode)
    ids: list[str] = []
    started = time.perf_counter()
    with Stopwatch() as sw_build:
        engine = MemoryEngine(data_dir, embedder=embedder, clock=clock, extractor=extractor)
        # The contradiction check of each write (engine/contradictions/follow.py) parses each new memory with
        # up to 5 near memories of its entity; templated texts have 5 near ones nearly always, so a 100k build
        # would leave 500k pairs for spaCy, checked by the reading engine's idle worker while reads are timed.
        # This store is built to time reads: its build marks no check (the write-heavy mix below marks them, as
        # every remember does).
        engine._writer.needs_check = None  # noqa: SLF001
        with engine.bulk():  # recall's structures catch up once, at the end (`MemoryEngine.bulk`)
            for start in range(0, n, WRITE_CHUNK):
                items = [
                    NewMemory(m.content, m.importance, m.context, m.entity_id, created_at=m.created_at)
                    for m in corp.memories[start : start + WRITE_CHUNK]
                ]
                ids.extend(m.id for m in engine.remember_many(items))
                if (start // WRITE_CHUNK) % 10 == 9:
                    log(f"  {len(ids):,}/{n:,} written ({len(ids) / (time.perf_counter() - started):.0f}/s)")
            memories_s = time.perf_counter() - started
            for start in range(0, len(corp.edges), 50_000):
                engine.add_edges([(ids[s], ids[t], k, c) for s, t, k, c in corp.edges[start : start + 50_000]])
        # Structures follow writes (engine/structures.py): fill them from the table now, or the reading
        # engine's first analogical recall would parse every memory with spaCy behind its read barrier.
        engine.catch_up_structures()
        engine.close()
    return {
        "build_s": round(sw_build.seconds, 1),
        "build_memories_per_s": round(n / sw_build.seconds, 1),
        "build_memories_s": round(memories_s, 1),  # remember_many of every memory
        "build_edges_s": round(sw_build.seconds - memories_s, 1),  # add_edges, the deferred catch-up, closing
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }, ids


def _ids_in_order(data_dir: Path, n: int) -> list[str]:
    """A kept store's first `n` memory ids in the order they were written (the corpus's order)."""
    with sqlite3.connect(f"file:{data_dir / 'records.sqlite3'}?mode=ro", uri=True) as conn:
        return [r[0] for r in conn.execute("SELECT id FROM memories ORDER BY rowid LIMIT ?", (n,))]


def run_size(n: int, base: corpus_mod.Corpus, vectors: dict[str, np.ndarray], structures: dict[str, dict[str, Any]],
             model: Any, args: argparse.Namespace, work: Path, load: LoadSampler) -> dict[str, Any]:
    load_mark = load.mark()
    with Stopwatch() as sw_gen:
        corp = corpus_mod.generate(n, args.seed) if n != base.n else base
        bases = assign_bases(corp, base, args.seed)
    # Texts repeat across memories (templates): each distinct text is tied to one base, the first seen.
    base_of: dict[str, np.ndarray] = {}
    table: dict[str, dict[str, Any]] = {}
    for i, m in enumerate(corp.memories):
        if m.content not in base_of:
            b = base.memories[bases[i]].content
            base_of[m.content] = vectors[b]
            table[m.content] = structures[b]
    data_dir = work / f"scale-{n}"
    marker = work / f"scale-{n}.built.json"  # beside the store: its build figures, for --reuse-stores
    log(f"size {n:,}: corpus generated in {sw_gen.seconds:.1f}s")
    reused = args.reuse_stores and marker.exists() and data_dir.exists()
    if reused:
        built = json.loads(marker.read_text())
        ids = _ids_in_order(data_dir, n)
        log(f"size {n:,}: reusing the store built {built['built_at']} (--reuse-stores)")
        engine = MemoryEngine(data_dir, embedder=model, extractor=TableExtractor(table, model.encode))
        redone = engine.reextract_structures()  # another extractor version's structures: from the table, not spaCy
        # What an earlier run's write mix left pending (its fresh memories' structures and contradiction checks)
        # is done now, not by the idle worker during the timed reads.
        left = engine.catch_up_structures()
        engine.catch_up_contradictions()
        engine.close()
        if redone:
            log(f"size {n:,}: {redone:,} structures of another extractor version re-extracted from the table")
        if left:
            log(f"size {n:,}: {left:,} structures an earlier run's writes left pending extracted before the reads")
    else:
        built, ids = build_store(n, corp, base_of, table, args, data_dir, model)
        if args.keep_stores and args.work_dir:
            marker.write_text(json.dumps(built))
    clock = ManualClock(corpus_mod.YEAR_START + timedelta(days=366))
    log(f"size {n:,}: built in {built['build_s']:.0f}s; reopening in fresh processes")
    disk = _disk_mib(data_dir)
    cues = corpus_mod.cues(corp, args.queries + args.warmup, seed=args.seed + 1)
    reopen = reopen_in_subprocess(data_dir, args.reopen_runs, cues[0].text)

    engine = MemoryEngine(data_dir, embedder=model, clock=clock)
    engine.warm()
    linked = {ids[source] for source, *_ in corp.edges}
    seeds = [i for i in ids[:: max(1, n // 500)] if i in linked] or ids[:1]
    ops = {k: v for k, v in read_ops(engine, model, args.top_k, seeds).items() if k in STRATEGIES}
    reads = time_reads(ops, cues, args.warmup, f"{n:,}")
    mix = write_mix(engine, corp, cues, args.mix_rounds, args.top_k) if args.mix_rounds else None
    engine.close()
    if not (args.keep_stores and args.work_dir):
        shutil.rmtree(data_dir, ignore_errors=True)

    latency = {}
    for op in STRATEGIES:
        s, floor = summarize(reads[op]), floor_of(op, reads)
        latency[op] = {**s, "ratio_to_floor": round(s["p50_ms"] / floor, 3) if floor else None,
                       "floor_p50_ms": floor}  # (the floor timed in the same rounds: see `perf.WRITING_READS`)
    rss_open = float(np.median([r["rss_open_mib"] for r in reopen]))
    rss_default = float(np.median([r["rss_default_ready_mib"] for r in reopen]))
    rss_before = float(np.median([r["rss_before_open_mib"] for r in reopen]))
    return {
        "size": n,
        **{k: v for k, v in built.items() if k != "built_at"},
        "reused_store_built_at": built["built_at"] if reused else None,  # --reuse-stores: built by an earlier run
        "edges": len(corp.edges),
        "latency_ms": latency,
        # open + the first default recall in a fresh process (issue 27's reopen), then every index built
        "reopen_default_s": round(float(np.median([r["default_ready_s"] for r in reopen])), 3),
        "reopen_default_cpu_s": round(float(np.median([r["default_ready_cpu_s"] for r in reopen])), 3),
        "reopen_s": round(float(np.median([r["total_s"] for r in reopen])), 3),
        "reopen_cpu_s": round(float(np.median([r["total_cpu_s"] for r in reopen])), 3),
        "reopen_breakdown_s": {
            k: round(float(np.median([r[k] for r in reopen])), 3) for k in reopen[0] if k.endswith("_s")
        },
        "disk_mib": disk,
        "disk_kib_per_memory": round(disk * 1024 / n, 2),
        "rss_open_mib": round(rss_open, 1),
        "rss_store_mib": round(rss_open - rss_before, 1),
        "rss_kib_per_memory": round((rss_open - rss_before) * 1024 / n, 2),  # every index built
        "rss_default_mib": round(rss_default - rss_before, 1),  # ready for the default recall
        "rss_default_kib_per_memory": round((rss_default - rss_before) * 1024 / n, 2),
        "write_mix": mix,
        "load_average_1min": load.summary(load_mark),  # while this size was built, reopened and read
    }


MIX_BLOCK = 20  # rounds per block; quiet and write-heavy blocks alternate, so both see the same machine load


def write_mix(engine: MemoryEngine, corp: corpus_mod.Corpus, cues: list[corpus_mod.Cue], rounds: int,
              top_k: int) -> dict[str, Any]:
    """The default recall on a store that is being written: `rounds` rounds of one `remember` (fresh text, the
    real model) then one default recall, against the same recalls on the quiet store, in alternating blocks
    of `MIX_BLOCK` rounds. Before the change log every write dropped the candidate table and posting lists."""
    recall = lambda cue: engine.retrieve(build_request(cue.text, top_k=top_k))  # noqa: E731
    texts = corpus_mod.fresh_texts(rounds + 1, seed=corp.n + 11, entities=corp.entities)
    engine.remember(texts[-1][0], entity_id=texts[-1][1])  # first write's one-off costs (model loads) untimed
    quiet, mixed, writes = Samples("quiet"), Samples("mixed"), Samples("remember")
    for start in range(0, rounds, MIX_BLOCK):
        block = range(start, min(start + MIX_BLOCK, rounds))
        for i in block:
            quiet.time(partial(recall, cues[i % len(cues)]))
        for i in block:
            text, entity = texts[i]
            writes.time(partial(engine.remember, text, entity_id=entity))
            mixed.time(partial(recall, cues[i % len(cues)]))
    q, m = quiet.summary(), mixed.summary()
    return {"rounds": rounds, "recall_quiet": q, "recall_after_write": m, "remember": writes.summary(),
            "p50_ratio_to_quiet": round(m["p50_ms"] / q["p50_ms"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--base", type=int, default=10_000, help="memories embedded and parsed for real")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--reopen-runs", type=int, default=2)
    parser.add_argument("--mix-rounds", type=int, default=200, help="write-heavy mix: remember + recall rounds")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--budget-minutes", type=float, default=60.0,
                        help="time for the whole run: a size that would not fit is replaced by the largest that does")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--keep-stores", action="store_true",
                        help="keep each size's built store in --work-dir (scale-N/) to profile it afterwards")
    parser.add_argument("--reuse-stores", action="store_true",
                        help="read a store kept in --work-dir by an earlier --keep-stores run instead of building it")
    parser.add_argument("--save", action="store_true", help=f"write {display(RESULTS_DIR / 'scale.json')}")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))

    started = time.perf_counter()
    load = LoadSampler().start()
    machine = describe()
    model = create_embedder()
    base = corpus_mod.generate(args.base, args.seed)
    base_texts = list(dict.fromkeys(base.texts()))
    log(f"base: {len(base_texts):,} distinct texts embedded for real (cached) and parsed for real (cached)")
    vectors = cached_vectors(f"synthetic-n{args.base}-s{args.seed}", base.texts(), model.encode, vector_key(model))
    structures = _base_structures(f"synthetic-n{args.base}-s{args.seed}", base_texts, model.encode)
    model.encode(["warm up"])

    work = args.work_dir or Path(tempfile.mkdtemp(prefix="hebbs-scale-"))
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    try:
        for wanted in sizes:
            n = _size_that_fits(wanted, results[-1], args, started, skipped) if results else wanted
            if n is None:
                continue
            results.append(run_size(n, base, vectors, structures, model, args, work, load))
            r = results[-1]
            save(args, machine, started, results, skipped, load)
            log(f"size {n:,}: " + ", ".join(f"{k} p50 {v['p50_ms']:.1f} ms" for k, v in r["latency_ms"].items())
                + f"; reopen {r['reopen_default_s']} s (to the default recall), {r['reopen_s']} s (every index), "
                + f"disk {r['disk_mib']} MiB, RSS {r['rss_kib_per_memory']} KiB/memory")
    finally:
        if args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    save(args, machine, started, results, skipped, load)
    load.stop()


def _size_that_fits(
    n: int, previous: dict[str, Any], args: argparse.Namespace, started: float, skipped: list[dict[str, Any]]
) -> int | None:
    """`n`, or the largest round size above the previous one that the time left can build, or None.

    The build rate falls as the store grows, so the projection uses the previous size's rate with a margin
    (`FIT_MARGIN`); what is left of `--budget-minutes` after the sizes already run is the time available.
    A size that does not fit is recorded in `skipped` with the reason."""
    rate = previous["build_memories_per_s"]
    left = args.budget_minutes - (time.perf_counter() - started) / 60.0
    projected = n / rate / 60.0
    if projected <= left * FIT_MARGIN * BUILD_SHARE:
        return n
    fits = int(rate * left * FIT_MARGIN * 60.0 * BUILD_SHARE) // FIT_STEP * FIT_STEP
    note = (
        f"not run: at the {previous['size']:,}-memory build rate ({rate:,.0f} memories/s) {n:,} would take about "
        f"{projected:.0f} min to build, {left:.0f} min of the {args.budget_minutes:.0f}-min budget were left"
    )
    if fits > previous["size"]:
        note += f"; ran {fits:,} instead, the largest size that fitted"
    log(note)
    skipped.append({"size": n, "projected_build_minutes": round(projected, 1), "note": note})
    return fits if fits > previous["size"] else None


def targets(result: dict[str, Any]) -> dict[str, Any]:
    """Issue 27's targets at one size, from that size's own run: each (measured, limit, met)."""
    latency, floor = result["latency_ms"], result["latency_ms"]["floor"]["p50_ms"]
    rec = latency["recommended"]
    checks = {
        "recommended_p50_x_floor": (rec["ratio_to_floor"], 2.5),
        "recommended_p95_x_floor_p50": (round(rec["p95_ms"] / floor, 3), 4.0),
        "recommended_p99_x_floor_p50": (round(rec["p99_ms"] / floor, 3), 6.0),
        "similarity_p50_x_floor": (latency["similarity"]["ratio_to_floor"], 1.2),
    }
    if "reopen_default_s" in result:
        checks["reopen_default_ready_s"] = (result["reopen_default_s"], 10.0)  # issue 27 sets it at 1M
    if result.get("write_mix"):
        checks["write_mix_recall_p50_x_quiet"] = (result["write_mix"]["p50_ratio_to_quiet"], 1.2)
    return {"size": result["size"],
            **{name: {"measured": v, "limit": limit, "met": v <= limit} for name, (v, limit) in checks.items()}}


def save(args: argparse.Namespace, machine: dict[str, Any], started: float, results: list[dict[str, Any]],
         skipped: list[dict[str, Any]], load: LoadSampler) -> None:
    """Print the results so far (and write them with --save): after every size, so a long run that is
    stopped keeps what it measured."""
    out = {
        "benchmark": "scale",
        "machine": machine,
        "base_memories": args.base,
        "perturbation": PERTURBATION,
        "queries": args.queries,
        "minutes": round((time.perf_counter() - started) / 60.0, 1),
        "load_average_during_run": load.summary(),
        "sizes": results,
        "growth": growth(results),
        "targets": [targets(r) for r in results],
        "skipped": skipped,
    }
    print(json.dumps(out))
    if args.save:
        write_json(RESULTS_DIR / "scale.json", out)


if __name__ == "__main__":
    main()
