"""The speed targets of GUIDE section 8 / issues 5 and 27, checked against one run's numbers.

Each check reads only ratios or numbers measured in the same process run. The targets are stated at
100,000 memories; a run that did not reach that size (the smoke test) is checked at its largest size and
says so.
"""

from __future__ import annotations

from typing import Any

TARGET_SIZE = 100_000
SINGLE_STRATEGIES = ("similarity", "temporal", "causal", "analogical")
# Issue 27 settled the all-four target: parallel strategies waste nothing over the slowest of them.
ALL_FOUR_LIMIT = 1.15

# Why a target can be missed on this machine: shown next to a miss, so a reader knows where time goes.
WHY_MISSED = {
    "floor": "the cue is embedded by onnxruntime on one intra-op thread; the torch floor's p50 was measured "
    "in the same rounds",
    "floor_tail": "other jobs on the shared 2-core machine preempt the single query thread",
    "similarity_tail": "tails follow the machine's load: hydration from SQLite and scoring add Python work "
    "that other jobs can preempt",
    "similarity": "the engine adds id filtering, hydration of the hits from SQLite and composite scoring "
    "to the floor's embed + query; on a loaded 2-core box the thread hand-offs add jitter",
    "all_four": "analogical needs spaCy's parse of the cue, about as much CPU as the floor itself (5-9 ms on "
    "a short cue: tok2vec 2-3 ms, NER 2-3.5 ms; participant types come from doc.ents), which runs beside the "
    "embedding and slows it on 2 cores (parsing after the embedding instead measured the same); analogical "
    "then maps structures of its candidates; fusion scores a pool of about 350-550 as numpy columns (0.7 ms "
    "warm, about 2 ms in a recall at 10k) and ranking reads 100 of them from SQLite (about 1 ms); "
    "the parse takes the GIL back about 200 times per cue, so every other thread's Python delays it, and all "
    "four need about 2.5 floors of CPU on 2 cores; a shorter switch interval, one BLAS thread and reordering "
    "the strategies around the parse did not win in alternating A/B pairs (docs/analogy.md, session 10)",
    "temporal": "a temporal recall scores a pool of the entity's newest max(20 x top_k, 200) memories (so "
    "weightier ones can outrank merely newer ones): the slice is O(log n + k) and the pool is scored in "
    "numpy; its importance and access counts come from one SQLite read of a covering index (about 0.2 ms "
    "for 200 rows, the fastest of the SQL forms tried), then the top_k are read whole once; right after "
    "an encode (as in the benchmark's round-robin) the same recall took 1.4 ms p50 at 10k against 0.85 ms "
    "back to back, most likely CPU caches the model's weights displaced",
    "causal": "the walk stops at the last depth level needed, but the seed search, level timestamps and "
    "hydration come on top of the floor",
    "remember_batch": "structures are extracted and contradiction checks run after the write (the read barriers or "
    "the idle worker parse them, reported as the sustained rate), so a batch costs its encode plus request "
    "parsing, Chroma's HNSW insert (0.1-0.2 s of CPU per 256 texts, holding the GIL) and one SQLite "
    "transaction, both on the two cores the encode fills; the built indexes are frozen out of the garbage "
    "collector's full passes (docs/indexing.md, \"Batched remember\"); with extraction on the write path it "
    "capped near 0.65x",
    "recommended": "the default embeds the cue and its unnamed form (one batch of two, about 1.6x the floor's one "
    "text: half of the recall), searches 100 neighbours (the floor 50), fuses two similarity signals, BM25 over "
    "the cue and over windows (beside the embedding, on the second core), entity naming and neighbour smoothing "
    "over a pool of about 750 candidates and 1,200 rows read at 100,000 (the frame: about 6.6 ms of CPU), then "
    "reads the composite score's inputs and the matched terms from SQLite (docs/scaling.md)",
    "reopen": "the timeline, graph and structure indexes are rebuilt in Python from SQLite on open, and "
    "Chroma loads the HNSW segment from disk",
}


def _find(rows: list[dict], size: int, op: str, system: str = "hebbs") -> dict | None:
    for r in rows:
        if r["size"] == size and r["operation"] == op and r["system"] == system:
            return r
    return None


def check(rows: list[dict], sizes_info: list[dict]) -> dict[str, Any]:
    sizes = sorted({r["size"] for r in rows if r["system"] == "hebbs"})
    if not sizes:
        return {"size": None, "checks": []}
    size = TARGET_SIZE if TARGET_SIZE in sizes else sizes[-1]
    get = lambda op, system="hebbs": _find(rows, size, op, system)  # noqa: E731
    floor = get("floor")
    checks: list[dict[str, Any]] = []

    def add(name: str, target: str, value: float | None, limit: float, unit: str, ok: bool | None) -> None:
        checks.append(
            {
                "name": name,
                "target": target,
                "measured": value,
                "limit": limit,
                "unit": unit,
                "met": ok,
                "why_if_missed": None if ok else WHY_MISSED.get(name),
            }
        )

    torch_floor = get("floor_torch")
    if floor and torch_floor:
        ratio = round(floor["p50_ms"] / torch_floor["p50_ms"], 3)
        add("floor", "ONNX floor p50 <= 0.4x the torch floor p50 (same run)", ratio, 0.4, "x torch floor", ratio <= 0.4)
    if floor:
        tail = round(floor["p95_ms"] / floor["p50_ms"], 3)
        add("floor_tail", "floor p95 <= 2x its own p50", tail, 2.0, "x floor p50", tail <= 2.0)
    if floor:
        fp50 = floor["p50_ms"]
        similarity = get("similarity")
        if similarity:
            tail = round(similarity["p95_ms"] / fp50, 3)
            add("similarity_tail", "similarity p95 <= 2.5x the floor's p50", tail, 2.5, "x floor p50", tail <= 2.5)
        for op, limit in (("similarity", 1.2), ("recommended", 2.5)):
            row = get(op)
            if row:
                add(
                    op,
                    f"p50 <= {limit}x the floor",
                    row["ratio_to_floor"],
                    limit,
                    "x floor",
                    row["ratio_to_floor"] <= limit,
                )
        recommended = get("recommended")
        if recommended:
            for name, field, limit in (("recommended_p95", "p95_ms", 4.0), ("recommended_p99", "p99_ms", 6.0)):
                tail = round(recommended[field] / fp50, 3)
                add(name, f"recommended {field[:3]} <= {limit}x the floor's p50", tail, limit, "x floor p50",
                    tail <= limit)
        causal = get("causal")
        if causal:
            extra = round(causal["p50_ms"] - fp50, 3)
            add("causal", "p50 <= the floor + 5 ms (depth 5)", extra, 5.0, "ms over the floor", extra <= 5.0)
    all_four = get("all_four")
    singles = [r for r in (get(op) for op in SINGLE_STRATEGIES) if r]
    if all_four and len(singles) == len(SINGLE_STRATEGIES):
        slowest = max(singles, key=lambda r: r["p50_ms"])
        ratio = round(all_four["p50_ms"] / slowest["p50_ms"], 3)
        add(
            "all_four",
            f"all four p50 <= {ALL_FOUR_LIMIT}x the slowest single strategy's p50 (here {slowest['operation']})",
            ratio,
            ALL_FOUR_LIMIT,
            "x slowest single strategy",
            ratio <= ALL_FOUR_LIMIT,
        )
    temporal = get("temporal")
    if temporal:
        add("temporal", "p50 <= 2 ms", temporal["p50_ms"], 2.0, "ms", temporal["p50_ms"] <= 2.0)
    batch = get("remember_batch")
    if batch:
        add(
            "remember_batch",
            ">= 0.9x raw encode throughput",
            batch["throughput_vs_encode"],
            0.9,
            "x encode throughput",
            batch["throughput_vs_encode"] >= 0.9,
        )
        if batch.get("sustained_vs_encode") is not None:
            checks.append(
                {
                    "name": "remember_batch_sustained",
                    "target": "reported: throughput with the deferred structures extracted and checks run too",
                    "measured": batch["sustained_vs_encode"],
                    "limit": None,
                    "unit": "x encode throughput",
                    "met": True,
                    "why_if_missed": None,
                }
            )
    reopen = get("reopen")
    if reopen:
        seconds = round(reopen["p50_ms"] / 1000.0, 3)
        add("reopen", "reopening <= 5 s", seconds, 5.0, "s", seconds <= 5.0)
    info = next((s for s in sizes_info if s["size"] == size), None)
    if info:
        checks.append(
            {
                "name": "memory",
                "target": "RSS reported",
                "measured": info.get("reopen_process_rss_mib"),
                "limit": None,
                "unit": "MiB (fresh process, store open, no model)",
                "met": True,
                "why_if_missed": None,
            }
        )
    return {"size": size, "at_target_size": size == TARGET_SIZE, "checks": checks}
