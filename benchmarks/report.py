"""docs/benchmarks.md, generated from the result files: tables, plots, the machine, and targets met or missed.

Nothing here is typed in by hand: every number comes from `benchmarks/results/*.json` of the same run.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

try:  # plots need the `bench` extra; without it the docs still get every table
    from benchmarks import plots
except ImportError:  # pragma: no cover - depends on the environment
    plots = None  # type: ignore[assignment]
from benchmarks.growth import SCALE_OPS, growth
from benchmarks.locomo import CATEGORIES, DRAGON_DIALOG, HELDOUT, KS, TUNE

READ_ORDER = (
    "floor",
    "floor_torch",
    "floor_k",
    "encode",
    "encode_torch",
    "similarity",
    "recommended",
    "recall_counted",
    "temporal",
    "causal",
    "causal_seeded",
    "analogical",
    "all_four",
)
WRITE_ORDER = ("encode_single", "remember_single", "encode_batch", "remember_batch", "reopen")
OP_NOTES = {
    "floor": "embed the cue + one raw Chroma query of width max(top_k, ef_search) = 50 (the engine's search)",
    "floor_k": "embed + raw query asking only top_k = 10 (a narrower, less exact search)",
    "encode": "embedding the cue alone (the default ONNX embedder)",
    "floor_torch": "the same floor with the cue embedded by sentence-transformers on torch (the old floor)",
    "encode_torch": "embedding the cue alone with sentence-transformers on torch",
    "similarity": "`retrieve`, similarity, top_k 10, ef_search 50",
    "recommended": "`retrieve(cue)`, the default recall (preset `recommended`: similarity + lexical fused), top_k 10",
    "recall_counted": "`engine.recall(cue)`, the default recall as `hebbs recall` and the servers run it: counted "
    "(the results' access counts written), top_k 10",
    "temporal": "`retrieve`, temporal: one entity's top 10 of its newest 200 by composite score",
    "causal": "`retrieve`, causal from the cue (seed = nearest memory), max_depth 5",
    "causal_seeded": "`retrieve`, causal from a given seed, max_depth 5 (no embedding)",
    "analogical": "`retrieve`, analogical, alpha 0.5",
    "all_four": "`retrieve`, all four strategies together, max_depth 5",
    "encode_single": "raw model: encode one text",
    "remember_single": "`remember` one memory with one edge (fsync'd)",
    "encode_batch": "raw model: encode a batch",
    "remember_batch": "`remember_many` of a batch",
    "reopen": "fresh process: open the store and build every index, ready to recall",
}


def _fmt(x: Any, digits: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    return f"{x:,}" if isinstance(x, int) else str(x)


def _pct(x: float | None) -> float | None:
    """JSON holds R@k as fractions; the docs show percent, like the paper."""
    return None if x is None else round(100 * x, 2)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    return out


def _plot(name: str, *args: Any) -> Path | None:
    if plots is None:
        return None
    return getattr(plots, name)(*args)


def _img(path: Path | None, docs_dir: Path, alt: str) -> list[str]:
    if path is None:
        return []
    return [f"![{alt}]({os.path.relpath(path, docs_dir)})", ""]


def _cold_cost(perf: dict[str, Any] | None) -> str:
    """What the one-time embedding costs on this machine, from this run's measured encode rate."""
    if not perf:
        return ""
    rows = [r for r in perf["results"] if r["operation"] == "encode_batch" and r.get("p50_ms")]
    if not rows:
        return ""
    batch = perf.get("settings", {}).get("batch_size", 256)
    rate = batch / (rows[-1]["p50_ms"] / 1000.0)
    texts = sum(int(s["size"]) for s in perf["sizes"]) + 7_854  # + LoCoMo turns and questions
    return (
        f" ({texts:,} texts: at this run's encode rate of {rate:,.0f} texts/s about {texts / rate / 60:,.0f} extra "
        "minutes, once; reruns reuse the cache)"
    )


def _machine(m: dict[str, Any]) -> list[str]:
    load = m.get("load_average_at_start")
    return [
        f"- CPU: {m.get('cpu_model')}, {m.get('cores')} cores; RAM {m.get('ram_gib')} GiB; {m.get('os')}",
        f"- Python {m.get('python')}, torch {m.get('torch')} ({m.get('torch_threads')} threads), "
        f"sentence-transformers {m.get('sentence_transformers')}, chromadb {m.get('chromadb')}, numpy {m.get('numpy')}",
        f"- Load average when the run started: {load} (a shared machine: other jobs ran alongside, so absolute "
        "times are noisy; ratios taken in one run are what count)",
    ]


def _perf_section(perf: dict[str, Any], docs_dir: Path, img_dir: Path) -> list[str]:
    rows = perf["results"]
    lines = ["## Speed", ""]
    lines += [
        "How: one process builds a synthetic store per size through the engine's own write path "
        "(`remember_many`, `add_edges`; corpus embeddings cached in `benchmarks/.cache/`), reopens it in fresh "
        "processes, then times every operation round-robin over the same cues (each cue goes through every "
        "operation before the next cue), so noise from other jobs hits all operations alike. The floor is "
        "*embed the cue + one raw Chroma query on the same collection*. Writes are compared with the raw model "
        "(one `encode` call; a batch of the same size). Recall is timed with `retrieve` (no access counting).",
        "",
    ]
    for info in perf["sizes"]:
        n = info["size"]
        c = info["corpus"]
        lines += [f"### {n:,} memories", ""]
        by_type = ", ".join(f"{k} {v:,}" for k, v in c["edges_by_type"].items())
        lines.append(
            f"Corpus: {c['entities']:,} entities, {c['edges']:,} edges ({by_type}), "
            f"max causal in-degree {c['max_cause_in_degree']}, {c['memories_with_accesses']:,} memories with accesses. "
            f"Build through the engine: {info['build_s']} s ({info['memories_per_s']:,} memories/s with cached "
            f"embeddings). RSS: {info['reopen_process_rss_mib']:,} MiB in a fresh process with the store open and "
            f"every index built (of which {info['reopen_process_rss_before_open_mib']:,} MiB is the interpreter "
            f"and libraries, no model); {info['rss_store_open_mib']:,} MiB in the benchmark process (model loaded)."
        )
        lines.append("")
        table = []
        for op in READ_ORDER + WRITE_ORDER:
            r = next(
                (x for x in rows if x["size"] == n and x["operation"] == op and x["system"] in ("hebbs", "model")), None
            )
            if r is None:
                continue
            basis = {"floor": "floor", "encode_single": "encode 1", "encode_batch": "encode batch"}.get(
                r["ratio_basis"], ""
            )
            ratio = f"{r['ratio_to_floor']:.2f}x {basis}" if r.get("ratio_to_floor") is not None else "-"
            table.append([op, r["p50_ms"], r["p95_ms"], r["p99_ms"], ratio, r.get("n"), OP_NOTES.get(op, "")])
        lines += _table(["operation", "p50 ms", "p95 ms", "p99 ms", "p50 ratio", "n", "what"], table)
        batch = next((x for x in rows if x["size"] == n and x["operation"] == "remember_batch"), None)
        reopen = next((x for x in rows if x["size"] == n and x["operation"] == "reopen"), None)
        lines.append("")
        if batch:
            lines.append(
                f"Batched remember: {batch['throughput_per_s']:,} memories/s in batches of {batch['batch_size']}, "
                f"{batch['throughput_vs_encode']:.2f}x the raw model's encode throughput when the call returns."
            )
            if batch.get("sustained_vs_encode") is not None and batch.get("checks_catch_up_p50_ms") is not None:
                lines.append(
                    f"Relational structures and contradiction checks follow writes (run before the next read of "
                    f"them, or by the idle worker): extracting a batch's structures took "
                    f"{batch['structures_catch_up_p50_ms']:,.0f} ms p50 and running its checks "
                    f"{batch['checks_catch_up_p50_ms']:,.0f} ms, so sustained, both included, "
                    f"{batch['sustained_throughput_per_s']:,} memories/s = {batch['sustained_vs_encode']:.2f}x encode "
                    "throughput."
                )
            elif batch.get("sustained_vs_encode") is not None:
                lines.append(
                    f"Relational structures follow writes (extracted before the next analogical read, or by the "
                    f"idle worker): extracting a batch's took {batch['structures_catch_up_p50_ms']:,.0f} ms p50, "
                    f"so sustained, structures included, {batch['sustained_throughput_per_s']:,} memories/s = "
                    f"{batch['sustained_vs_encode']:.2f}x encode throughput."
                )
        single = next((x for x in rows if x["size"] == n and x["operation"] == "remember_single"), None)
        if single and single.get("sustained_p50_ms") is not None:
            lines.append(
                f"Single remember: {single['p50_ms']:.1f} ms p50 returned, then "
                f"{single['structures_catch_up_p50_ms']:.1f} ms to extract its structure "
                + (f"and {single['checks_catch_up_p50_ms']:.1f} ms to check it for contradictions "
                   if single.get("checks_catch_up_p50_ms") is not None else "")
                + f"({single['sustained_p50_ms']:.1f} ms sustained)."
            )
        if reopen and reopen.get("breakdown_s"):
            parts = ", ".join(f"{k.removesuffix('_s')} {v:.2f}" for k, v in reopen["breakdown_s"].items())
            lines.append(f"Reopen breakdown (median seconds): {parts} (`import` is not counted in the total).")
        lines.append("")
    lines += _img(_plot("perf_ratios", rows, img_dir / "perf_ratios.png"), docs_dir, "latency relative to the floor")
    lines += _img(_plot("perf_latency", rows, img_dir / "perf_latency.png"), docs_dir, "latency per operation")
    lines += _peer_section(perf)
    lines += _targets_section(perf)
    return lines


def _peer_section(perf: dict[str, Any]) -> list[str]:
    rows = [r for r in perf["results"] if r["system"] in ("hebbmem", "txtai") or "(with " in r["operation"]]
    lines = ["### Peers", ""]
    if not rows:
        reasons = [
            f"{p['name']}: {p['skipped']}" for s in perf["sizes"] for p in s.get("peer") or [] if p.get("skipped")
        ]
        return lines + [
            "Not compared in this run" + (f" ({'; '.join(dict.fromkeys(reasons))})" if reasons else "") + ".",
            "",
        ]
    lines += [
        "Two peers from PyPI, both offline and both on the same all-MiniLM-L6-v2 weights, the same corpus and "
        "the same cues. Each peer's query is timed round-robin with our floor and our similarity recall "
        "(rows *with <peer>*), so the three share the machine's noise.",
        "",
        "- [txtai](https://pypi.org/project/txtai/): an embeddings database (Faiss index + SQLite content), "
        "given our model through its `external` transform; `save`/`load` is its reopen. It answers similarity "
        "search only (no timelines, graph or scoring).",
        "- [hebbmem](https://pypi.org/project/hebbmem/): a Hebbian memory for agents, with its own "
        "`SentenceTransformerEncoder` pointed at the bundled model. Each write links the new memory to every "
        "stored memory above a cosine threshold (an O(n) scan per write, O(n^2) links on a corpus of related "
        "texts) and each recall spreads activation by scanning the whole edge list per activated node. It is "
        "built at small sizes only and timed on a few cues.",
        "",
    ]
    table = []
    for r in rows:
        ratio = f"{r['ratio_to_floor']:.2f}x" if r.get("ratio_to_floor") is not None else "-"
        table.append([r["system"], r["size"], r["operation"], r["p50_ms"], r["p95_ms"], r["p99_ms"], ratio, r.get("n")])
    lines += _table(["system", "size", "operation", "p50 ms", "p95 ms", "p99 ms", "p50 / floor", "n"], table)
    lines.append("")
    for s in perf["sizes"]:
        for p in s.get("peer") or []:
            if p.get("skipped"):
                lines.append(f"- {p['name']}: {p['skipped']}.")
            else:
                extra = f", {p['edge_count']:,} auto-links" if "edge_count" in p else ""
                lines.append(
                    f"- {p['name']} {p.get('version')} at {s['size']:,}: built in {p['build_s']} s{extra} "
                    f"(ours: {s['build_s']} s through the full write path)."
                )
    lines.append("")
    return lines


def _targets_section(perf: dict[str, Any]) -> list[str]:
    t = perf.get("targets") or {}
    if not t.get("checks"):
        return []
    where = f"{t['size']:,} memories" + ("" if t.get("at_target_size") else " (the targets are stated at 100,000)")
    lines = [f"### Targets at {where}", ""]
    table = []
    for c in t["checks"]:
        verdict = "met" if c["met"] else "**missed**"
        table.append(
            [c["name"], c["target"], f"{_fmt(c['measured'], 3)} {c['unit']}", verdict, c["why_if_missed"] or ""]
        )
    lines += _table(["what", "target", "measured", "", "where the time goes (when missed)"], table)
    lines.append("")
    cold = perf.get("cold_start")
    if cold:
        lines.append(
            f"- Cold start ({cold['command']}, {cold['runs']} runs): wall p50 {cold['wall_s_p50']} s "
            f"(best {cold['wall_s_min']} s), CPU p50 {cold['cpu_s_p50']} s (best {cold['cpu_s_min']} s); "
            f"load average before/after {cold['load_average_before'][0]}/{cold['load_average_after'][0]} "
            f"on {cold['cores']} cores. Target: under 2 s on a quiet machine; on a loaded one the CPU time is "
            "the better guide, as wall time includes waiting for a core."
        )
        large = cold.get("large_store")
        if large:
            lines.append(
                f"- Cold start on a store past the exact-search limit ({large['command']}): wall p50 "
                f"{large['wall_s_p50']} s (best {large['wall_s_min']} s), CPU p50 {large['cpu_s_p50']} s; load "
                f"average before/after {large['load_average_before'][0]}/{large['load_average_after'][0]}."
            )
    for note in perf.get("notes", []):
        lines.append(f"- {note}")
    lines.append("")
    return lines


def _locomo_section(result: dict[str, Any] | None, docs_dir: Path, img_dir: Path) -> list[str]:
    lines = ["## Recall quality: LoCoMo", ""]
    if result is None or result.get("skipped"):
        reason = (result or {}).get("skipped", "not run")
        return lines + [f"Skipped in this run: {reason}.", ""]
    meta = result["meta"]
    names = [n for n, v in result.items() if isinstance(v, dict) and "all" in v]
    reported = [n for n in names if result[n]["reported"]]
    best = result.get("recommended_default")
    lines += [
        f"Data: LoCoMo (Maharana et al., 2024, *Evaluating Very Long-Term Conversational Memory of LLM Agents*; "
        f"CC BY-NC 4.0), {len(meta['conversations'])} conversations, {meta['memories']:,} dialog turns, "
        f"{meta['questions']:,} questions, read from outside the repo (never copied in). One store per "
        "conversation; each turn is a memory (`entity_id` = speaker, `created_at` = session date-time + turn "
        "order, `context` = conversation, session, dia_id; image captions appended), consecutive turns linked "
        "`followed_by`. Each question is asked with `retrieve` once per k (top_k = k), except fused configs, "
        "asked once with top_k = 50 and cut to k (their candidates and scores do not depend on top_k); the "
        "clock stands one day after the conversation's last session.",
        "",
        "R@k as in the paper: per question, the fraction of its evidence dialog ids among the top k; no "
        "evidence counts as 1; mean over questions. Evidence is parsed leniently (`D8:6; D9:17` is two ids, "
        "`D:11:26` is D11:26).",
        "",
        f"Recommended default: **{best}**, chosen by {meta['selection']}. Took {meta['seconds']} s.",
        "",
        "### Overall R@k (%)",
        "",
    ]
    lines += _user_paths_section(result.get("user_paths"), result.get("user_paths_load"))
    table = []
    for n in reported:
        for split in ("tune", "heldout", "all"):
            agg = result[n][split]
            if agg["questions"]:
                label = f"**{n}**" if n == best else n
                table.append([label, split, agg["questions"], *[_pct(agg[f"R@{k}"]) for k in KS]])
    table.append(["DRAGON dialog (paper)", "all", "", *[DRAGON_DIALOG[f"R@{k}"] for k in KS]])
    lines += _table(["config", "split", "questions", *[f"R@{k}" for k in KS]], table)
    lines += ["", f"Splits: tune = {', '.join(TUNE)}; heldout = {', '.join(HELDOUT)}; all = the ten.", ""]
    ablation = result.get("ablation_heldout") or []
    if ablation:
        cats = [k for k in ablation[0] if k.startswith("R@10 ")]
        lines += ["### Held-out ablation: from similarity to the recommended preset (%)", ""]
        rows = [
            [a["config"], *[_pct(a[f"R@{k}"]) for k in KS], " / ".join(_fmt(_pct(a[c]), 1) for c in cats)]
            for a in ablation
        ]
        rows.append(["DRAGON dialog (paper, all ten)", *[DRAGON_DIALOG[f"R@{k}"] for k in KS], ""])
        header = [*[f"R@{k}" for k in KS], "R@10 by category (" + " / ".join(c[7:] for c in cats) + ")"]
        lines += _table(["config", *header], rows)
        lines.append("")
    lines += ["Configs:", ""]
    for n in names:
        lines.append(f"- `{n}`: {result[n]['note']}" + ("" if result[n]["reported"] else " (tuning grid)"))
    lines.append("")
    grid = [
        [n, _pct(meta["tune_mean_r"].get(n))]
        for n in sorted(meta["tune_mean_r"], key=lambda x: -meta["tune_mean_r"][x])
    ]
    lines += ["### Tuning half: mean of R@5..R@50 (the selection criterion)", ""]
    lines += _table(["config", "mean R@k on tune"], grid)
    lines += _grid_section(result.get("fusion_grid"))
    lines += _latency_section(result.get("latency"))
    lines += ["", "### By category, all ten conversations (R@5 / R@10 / R@25 / R@50)", ""]
    shown = [n for n in dict.fromkeys([best, "similarity", *reported]) if n in result][:4]
    cat_rows = []
    for cat in [f"{c} {label}" for c, label in CATEGORIES.items()]:
        row: list[Any] = [cat, result[shown[0]]["all"]["by_category"][cat]["questions"]]
        for n in shown:
            c = result[n]["all"]["by_category"][cat]
            row.append(" / ".join(_fmt(_pct(c[f"R@{k}"]), 1) for k in KS))
        cat_rows.append(row)
    lines += _table(["category", "questions", *shown], cat_rows)
    lines.append("")
    lines += _img(
        _plot("locomo_overall", result, reported, DRAGON_DIALOG, img_dir / "locomo_overall.png"),
        docs_dir,
        "LoCoMo R@k overall",
    )
    lines += _img(
        _plot("locomo_categories", result, shown, img_dir / "locomo_categories.png"),
        docs_dir,
        "LoCoMo R@10 by category",
    )
    for note in result.get("notes", []):
        lines.append(f"- {note}")
    lines.append("")
    return lines


# Issue 25's targets on the held-out half: (path, figure, at least).
USER_PATH_TARGETS = (  # (path, figure, at least, at most this far below relevance-only or None)
    ("default, counted, +1 day, top_k 10", "R@10", 0.80, 0.03),
    ("default, counted, +30 days, top_k 10", "R@10", 0.75, None),
)
RELEVANCE_TARGETS = {"R@5": 0.74, "R@10": 0.84, "R@25": 0.91, "R@50": 0.94}
MULTI_HOP_TARGET = 0.55


def _user_paths_section(paths: dict[str, Any] | None, load: float | None = None) -> list[str]:
    """The path users run (benchmarks/locomo_paths.py) beside the relevance-only figure, with issue 25's targets."""
    if not paths:
        return []
    measured = f" 1-minute load average {load:g} on 2 cores when measured." if load is not None else ""
    lines = [
        "### The path users run, beside the relevance-only figure (%)",
        "",
        "`default, counted, ...`: each conversation's questions asked in order on one store through "
        "`MemoryEngine.recall(question, top_k=k)`: the default preset (`recommended`), the default weights "
        "0.5/0.2/0.2/0.1, every recall counted (reinforcement live), the clock at the last session + 1 or + 30 days "
        "(recency live). The first row is the published setting: the same preset, weights 1/0/0/0, `retrieve` (not "
        "counted). The CLI row: `hebbs index` then `hebbs recall QUESTION --format json` in a fresh process per "
        "question (the CLI's defaults, top_k 10, the machine's clock, years after the sessions), the first "
        "questions of one conversation per half. hit@k: session level, whether a session holding an evidence "
        f"turn is among the top k. A k above the path's top_k is `-`.{measured}",
        "",
    ]
    rows = []
    for split in ("heldout", "tune"):
        for name, v in paths.items():
            agg = v[split]
            if agg["questions"]:
                rows.append([name, split, *[_pct(agg[f"R@{k}"]) for k in KS], *[_pct(agg[f"hit@{k}"]) for k in KS],
                             _pct(agg["R@10 by category"].get("1 multi-hop"))])
    lines += _table(["path", "split", *[f"R@{k}" for k in KS], *[f"hit@{k}" for k in KS], "multi-hop R@10"], rows)
    lines += ["", "Targets (held-out half, never used to choose anything):", ""]
    relevance = next(iter(paths.values()))["heldout"]
    for name, figure, least, within in USER_PATH_TARGETS:
        got = paths.get(name, {}).get("heldout", {}).get(figure)
        if got is None:
            continue
        line = f"- {name}: {figure} {100 * got:.1f} (target {100 * least:.0f}: {'met' if got >= least else 'missed'})"
        below = relevance[figure] - got
        line += f"; {100 * below:.1f} points below relevance-only"
        if within is not None:
            line += f" (target within {100 * within:.0f}: {'met' if below <= within else 'missed'})"
        lines.append(line)
    for k, least in RELEVANCE_TARGETS.items():
        got = relevance.get(k)
        if got is not None:
            lines.append(f"- relevance-only {k} {100 * got:.1f} (target {100 * least:.0f}: "
                         f"{'met' if got >= least else 'missed'})")
    hop = relevance["R@10 by category"].get("1 multi-hop")
    if hop is not None:
        lines.append(f"- relevance-only multi-hop R@10 {100 * hop:.1f} (target {100 * MULTI_HOP_TARGET:.0f}: "
                     f"{'met' if hop >= MULTI_HOP_TARGET else 'missed'})")
    return [*lines, ""]


def _grid_section(grid: dict[str, Any] | None) -> list[str]:
    """The fusion-settings grid of the recommended preset, searched on the tuning half only."""
    if not grid or not grid.get("best"):
        return []
    axes = "; ".join(f"{n} in {{{', '.join(f'{v:g}' for v in vals)}}}" for n, vals in grid["grid"].items())
    lines = [
        "",
        "### Fusion settings: grid search on the tuning half",
        "",
        f"{grid['points']} points ({axes}) over the {grid['questions']} tuning questions, each searched once and "
        f"re-weighted per point (`benchmarks/locomo_grid.py`); criterion: {grid['criterion']}.",
        "",
    ]
    rows = [["preset `recommended`", _point(grid["preset"]["point"]), *[_pct(grid["preset"][f"R@{k}"]) for k in KS],
             _pct(grid["preset"]["mean"])]]
    for n, row in enumerate(grid["top10"][:5], 1):
        rows.append([f"grid #{n}", _point(row["point"]), *[_pct(row[f"R@{k}"]) for k in KS], _pct(row["mean"])])
    return lines + _table(["point", "settings", *[f"R@{k}" for k in KS], "mean"], rows)


def _latency_section(timing: dict[str, Any] | None) -> list[str]:
    if not timing:
        return []
    verdict = "met" if timing["ratio"] <= timing["target_ratio"] else "not met"
    return [
        "",
        "### Recall latency: recommended against similarity alone",
        "",
        f"Median over {timing['questions']} questions of {timing['conversation']} ({timing['memories']} memories), "
        f"top_k 10, the two presets alternating question by question on the same store, each cue embedded by "
        f"the model: similarity {timing['similarity_p50_ms']} ms, recommended {timing['recommended_p50_ms']} ms, "
        f"**{timing['ratio']}x** (target at most {timing['target_ratio']}x: {verdict}).",
    ]


def _models_section(models: dict[str, Any] | None, default: dict[str, Any] | None) -> list[str]:
    """Other embedding models (`make bench-locomo LOCOMO_ARGS="--model mpnet"`) beside the default, with cost."""
    if not models:
        return []
    lines = [
        "## Recall quality with a larger embedding model",
        "",
        "The same LoCoMo run with another embedder (`make setup-mpnet`, then "
        '`make bench-locomo LOCOMO_ARGS="--model mpnet"`): the same configs, the fusion grid re-run on the '
        "tuning half only with this model, the held-out half reported. The default model's rows come from the "
        "section above.",
        "",
    ]
    cat_names = [f"{c} {label}" for c, label in CATEGORIES.items()]
    for name, entry in models.items():
        rows = []
        for config_name in ("similarity", "recommended"):
            base = (default or {}).get(config_name)
            other = entry["configs"].get(config_name)
            for label, agg in (("default model", base and base["heldout"]), (name, other and other["heldout"])):
                if agg and agg["questions"]:
                    cats = " / ".join(_fmt(_pct(agg["by_category"][c]["R@10"]), 1) for c in cat_names)
                    rows.append([config_name, label, *[_pct(agg[f"R@{k}"]) for k in KS], cats])
        lines += [f"### {name}: held-out R@k (%)", ""]
        header = ["config", "model", *[f"R@{k}" for k in KS], "R@10 by category (" + " / ".join(
            c.split(" ", 1)[1] for c in cat_names) + ")"]
        lines += _table(header, rows)
        best = (entry.get("fusion_grid") or {}).get("best")
        preset = (entry.get("fusion_grid") or {}).get("preset")
        if best and preset:
            lines += [
                "",
                f"Fusion grid with {name} on the tuning half: best point {_point(best['point'])} (mean R@k "
                f"{_pct(best['mean'])}) against the preset's point {_pct(preset['mean'])}.",
            ]
        cost = entry.get("cost") or {}
        if cost:
            lines += ["", f"### {name}: what it costs (measured in the same run, one model after the other)", ""]
            cost_rows = [
                [m, c["dimension"], c["cue_p50_ms"], f"{c['cue_ratio']}x", c["ingest_ms_per_1k_texts"],
                 f"{c['ingest_ratio']}x", c["rss_mib_model"], c["disk_mib_weights"], c["disk_mib_onnx"]]
                for m, c in cost.items()
            ]
            lines += _table(
                ["model", "dims", "cue p50 ms", "vs default", "ms per 1k texts ingested", "vs default",
                 "RSS of the loaded model MiB", "weights MiB", "ONNX graph MiB"],
                cost_rows,
            )
        latency = entry.get("latency")
        if latency:
            lines += [
                "",
                f"Recall p50 with {name} ({latency['conversation']}, {latency['memories']} memories, cue embedded "
                f"each time): similarity {latency['similarity_p50_ms']} ms, recommended "
                f"{latency['recommended_p50_ms']} ms.",
            ]
        lines.append("")
    return lines


def _point(point: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in point.items())


SCALE_TARGET_SIZE = 1_000_000
SCALE_SIMILARITY_TARGET = 1.5  # similarity p50 over the floor's p50 at 1M memories


def _load_text(load: dict[str, Any] | None) -> str:
    return "-" if not load else f"{load['min']:.1f}-{load['max']:.1f} (median {load['median']:.1f})"


SCALE_27_TARGETS = {
    "recommended_p50_x_floor": "recommended p50 / floor p50",
    "recommended_p95_x_floor_p50": "recommended p95 / floor p50",
    "recommended_p99_x_floor_p50": "recommended p99 / floor p50",
    "similarity_p50_x_floor": "similarity p50 / floor p50",
    "write_mix_recall_p50_x_quiet": "recall after a write / quiet (p50)",
    "reopen_default_ready_s": "reopen to the first default recall, s (the limit is set at 1M)",
}


def _scale_section(scale: dict[str, Any] | None, docs_dir: Path, img_dir: Path) -> list[str]:
    """`benchmarks/results/scale.json` (`make bench-scale`): how recall, reopen, disk and RSS grow."""
    if not scale or not scale.get("sizes"):
        return []
    sizes = sorted(scale["sizes"], key=lambda s: s["size"])
    m = scale.get("machine", {})
    during = scale.get("load_average_during_run")
    load = (
        f"1-minute load average {_load_text(during)} during the run" if during
        else f"load average at the start {m.get('load_average_at_start')}"
    )
    reused = ", ".join(f"{s['size']:,} at {s['reused_store_built_at']}" for s in sizes
                       if s.get("reused_store_built_at"))
    lines = [
        f"## Scale: {', '.join(_short_size(s['size']) for s in sizes)}",
        "",
        f"From `make bench-scale` (`python -m benchmarks.scale`; {scale.get('minutes', '?')} minutes; {load} on "
        f"{m.get('cores')} cores: other jobs shared the machine, so absolute times are inflated and the ratios to "
        f"the floor timed in the same rounds are the measure). Raw numbers: `benchmarks/results/scale.json`. "
        f"**The stored vectors are precomputed, not embedded**: "
        f"the first {scale['base_memories']:,} memories of the synthetic corpus are embedded and parsed for real; "
        "every memory of a larger store gets the vector of a base memory of the same template plus Gaussian noise "
        f"(norm {scale['perturbation']}, cosine about 0.91 to its base, renormalised) and that memory's episode "
        "structure. Everything else goes through the engine's write path (`remember_many` in batches of 5,000, "
        f"`add_edges`); the {scale['queries']} cues per size are embedded and parsed for real at recall time, "
        "timed round-robin with the floor as above. `recommended` is `hebbs recall`'s default (similarity + "
        "lexical, fused).",
        "",
        *([str(scale["note"]), ""] if scale.get("note") else []),
        *([f"Stores reused (`--reuse-stores`), built earlier by the write path above: {reused}; their build "
           "figures are from that build, everything else from this run.", ""] if reused else []),
    ]
    ops = [op for op in SCALE_OPS if all(op in s["latency_ms"] for s in sizes)]
    rows = []
    for s in sizes:
        lat, floor = s["latency_ms"], s["latency_ms"]["floor"]["p50_ms"]
        rows.append([
            f"{s['size']:,}",
            *[f"{lat[op]['p50_ms']:.1f} / {lat[op]['p95_ms']:.1f} ({lat[op]['ratio_to_floor']:.2f}x / "
              f"{lat[op]['p95_ms'] / lat[op].get('floor_p50_ms', floor):.2f}x)" for op in ops],
        ])
    lines += [
        "Recall latency, p50 / p95 ms (in brackets: p50 and p95 over the floor's p50 in the same rounds):",
        "",
        *_table(["memories", *[op.replace("_", " ") for op in ops]], rows),
        "",
    ]
    largest = sizes[-1]
    similarity = largest["latency_ms"]["similarity"]["ratio_to_floor"]
    at = "at 1M" if largest["size"] == SCALE_TARGET_SIZE else f"stated at 1M; largest size run {largest['size']:,}"
    lines += [
        f"Target (issue 13, {at}): similarity p50 <= {SCALE_SIMILARITY_TARGET}x the floor: {similarity:.2f}x, "
        f"{'met' if similarity <= SCALE_SIMILARITY_TARGET else 'missed'}.",
        "",
    ]
    checks = [c for c in scale.get("targets") or [] if len(c) > 1]
    if checks:
        names = [name for name in SCALE_27_TARGETS if any(name in c for c in checks)]

        def cell(c: dict[str, Any], n: str) -> str:
            if n not in c:
                return "-"
            return f"{c[n]['measured']:.2f} (<= {c[n]['limit']}: {'met' if c[n]['met'] else 'missed'})"

        rows = [[f"{c['size']:,}", *[cell(c, n) for n in names]] for c in checks]
        lines += [
            "Issue 27's targets (the default recall at any size), each size against its own floor and quiet store:",
            "",
            *_table(["memories", *[SCALE_27_TARGETS[n] for n in names]], rows),
            "",
        ]
    for s in sizes:
        mix = s.get("write_mix")
        if mix:
            lines += [
                f"- Write-heavy mix at {s['size']:,} ({mix['rounds']} rounds of one `remember` and one default recall, "
                "in blocks of 20 alternating with quiet blocks): recall p50 "
                f"{mix['recall_after_write']['p50_ms']:.1f} ms right after a write against "
                f"{mix['recall_quiet']['p50_ms']:.1f} ms on the quiet store "
                f"({mix['p50_ratio_to_quiet']:.2f}x); `remember` p50 {mix['remember']['p50_ms']:.1f} ms.",
            ]
    lines += [""]
    header = ["memories", "reopen to the first default recall s (CPU s)", "reopen, every index s (CPU s)",
              "disk MiB (KiB/memory)", "RSS ready for the default recall MiB (KiB/memory)",
              "RSS of the open store, every index MiB (KiB/memory)", "build memories/s", "load average (1 min)"]
    rows = [[
        f"{s['size']:,}",
        f"{s['reopen_default_s']:.1f} ({s['reopen_default_cpu_s']:.1f})" if "reopen_default_s" in s else "-",
        f"{s['reopen_s']:.1f} ({s['reopen_cpu_s']:.1f})",
        f"{s['disk_mib']:,.0f} ({s['disk_kib_per_memory']:.1f})",
        f"{s['rss_default_mib']:,.0f} ({s['rss_default_kib_per_memory']:.1f})" if "rss_default_mib" in s else "-",
        f"{s['rss_store_mib']:,.0f} ({s['rss_kib_per_memory']:.1f})",
        f"{s['build_memories_per_s']:,.0f}",
        _load_text(s.get("load_average_1min")),
    ] for s in sizes]
    lines += _table(header, rows) + [""]
    segments = growth(sizes)
    if segments:
        def fmt(k: float | None) -> str:
            return "-" if k is None else f"{k:.2f}"

        names = [f"{_short_size(g['from'])} -> {_short_size(g['to'])}" for g in segments]
        figure_rows = [[f"{op.replace('_', ' ')} p50", *[fmt(g["p50_ms"].get(op)) for g in segments]] for op in ops]
        figure_rows += [[f"{op.replace('_', ' ')} p50 / floor", *[fmt(g["ratio_to_floor"].get(op)) for g in segments]]
                        for op in ops if op != "floor"]
        figure_rows += [[label, *[fmt(g[name]) for g in segments]] for name, label in
                        (("reopen_default_s", "reopen to the first default recall"), ("reopen_s", "reopen wall"),
                         ("reopen_cpu_s", "reopen CPU"), ("disk_mib", "disk"),
                         ("rss_default_mib", "RSS ready for the default recall"),
                         ("rss_store_mib", "RSS of the open store"))]
        lines += [
            "Growth with the store's size, as the exponent k of n^k (the slope of the log-log plot; 0 = flat, "
            "1 = linear). The floor moved with the machine's load, so the ratio to the floor of the same rounds "
            "is the steadier measure of what the engine adds:",
            "",
            *_table(["figure", *names], figure_rows),
            "",
        ]
    for skipped in scale.get("skipped", []):
        lines += [f"- {skipped['size']:,} memories {skipped['note']}.", ""]
    lines += _img(_plot("scale_growth", sizes, img_dir / "scale_growth.png"), docs_dir, "growth with the store size")
    return lines


def _short_size(n: int) -> str:
    """10000 -> 10k, 1000000 -> 1M: the sizes as the issue names them."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return f"{n:,}"


def _first_recall_section(result: dict[str, Any] | None) -> list[str]:
    """`benchmarks/results/first_recall.json` (`python -m benchmarks.first_recall --save`)."""
    if not result or "hebbs_recall" not in result:
        return []
    cli, bench = result["hebbs_recall"], result["workbench"]
    imports = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in cli["import_s"].items())
    return [
        "## First recall: cold `hebbs recall` and the workbench",
        "",
        f"From `python -m benchmarks.first_recall --save` ({result['runs']} fresh processes each; load average "
        f"{result['load_average_before'][0]:.1f} before, {result['load_average_after'][0]:.1f} after, on "
        f"{result['cores']} cores; targets: under 2 s and under 3 s on a quiet machine).",
        "",
        f"- Cold `hebbs recall CUE`: wall p50 {cli['wall_s_p50']} s (best {cli['wall_s_min']} s), CPU p50 "
        f"{cli['cpu_s_p50']} s. Cumulative import time of the heavy packages in one such run: {imports} "
        "(nested packages count inside the ones that import them).",
        f"- Workbench (AppTest in a fresh process, the server side without a browser): first page drawn "
        f"{bench['first_page_s_p50']} s after the interpreter started; a recall clicked at once then took "
        f"{bench['first_recall_s_p50']} s (best {bench['first_recall_s_min']} s; it loads the model and opens "
        f"the vector index); {bench['process_start_to_results_s_p50']} s from process start to results, CPU "
        f"{bench['cpu_s_p50']} s.",
        "",
    ]


def _int8_section(result: dict[str, Any] | None) -> list[str]:
    """`benchmarks/results/int8.json` (`python -m benchmarks.int8 --save`): the int8 embedder against fp32."""
    if not result or "speed" not in result:
        return []
    speed, agree = result["speed"], result["agreement"]
    before, after = result.get("load_average_before", ["?"]), result.get("load_average_after", ["?"])
    lines = [
        "## The int8 embedder (optional, `HEBBS_EMBEDDING_PRECISION=int8`)",
        "",
        "From `python -m benchmarks.int8 --save` (raw numbers: `benchmarks/results/int8.json`): the fp32 ONNX "
        "graph and its dynamically quantised int8 copy, in one run, cues alternating between the two; "
        f"load average {before[0]:.1f} at the start, {after[0]:.1f} at the end, on a shared machine.",
        "",
    ]
    lines += _table(
        ["precision", "single cue p50 ms", "single cue p95 ms", "batch texts/s"],
        [[p, f"{speed[p]['single_cue_ms_p50']:.1f}", f"{speed[p]['single_cue_ms_p95']:.1f}",
          f"{speed[p]['batch_texts_per_s']:.1f}"] for p in ("fp32", "int8")],
    )
    ratio = speed["int8_over_fp32"]
    lines += [
        "",
        f"int8 / fp32: single cue p50 {ratio['single_cue_p50']:.2f}x, "
        f"batch throughput {ratio['batch_throughput']:.2f}x "
        f"({speed['cues']} cues, {speed['batch_texts']} texts). Agreement with fp32 over {agree['texts']:,} LoCoMo "
        f"texts: cosine median {agree['cosine_median']}, 1st percentile {agree['cosine_p1']}, min "
        f"{agree['cosine_min']}. An int8 vector also depends a little on the batch it was computed in "
        "(activations are quantised with the range of the whole batch).",
        "",
    ]
    recall = result.get("locomo")
    if recall:
        ks = (5, 10, 25, 50)
        rows = []
        for name in ("similarity", "recommended"):
            for split in ("tune", "heldout"):
                rows.append([name, "tuning half" if split == "tune" else "held-out",
                             *[f"{100 * recall['fp32'][name][split][f'R@{k}']:.1f} / "
                               f"{100 * recall['int8'][name][split][f'R@{k}']:.1f}" for k in ks]])
        lines += ["LoCoMo R@k, fp32 / int8 (%):", ""]
        lines += _table(["config", "split", *[f"R@{k}" for k in ks]], rows)
        worst = min(v["R@10"] for cfg in result["locomo_cost_points"].values() for v in cfg.values())
        lines += [
            "",
            f"Largest R@10 loss: {-worst:.2f} points. fp32 stays the default: the bar for int8 was a cost "
            "under 0.5 point of R@10 everywhere." if worst <= -0.5 else
            f"Largest R@10 loss: {-worst:.2f} points (under the 0.5-point bar).",
            "",
        ]
    return lines


# Sections written by hand go below this line in docs/benchmarks.md: a regenerated file keeps them.
HAND_WRITTEN = "<!-- Written by hand from here on: benchmarks/report.py keeps this part when regenerating the file -->"


def write(
    perf: dict[str, Any] | None,
    locomo_result: dict[str, Any] | None,
    machine: dict[str, Any],
    docs_dir: Path,
    command: str,
    elapsed_s: float | None = None,
    scale: dict[str, Any] | None = None,
    int8: dict[str, Any] | None = None,
    first_recall: dict[str, Any] | None = None,
) -> Path:
    docs_dir.mkdir(parents=True, exist_ok=True)
    img_dir = docs_dir / "benchmarks"
    img_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `{command}` on {stamp}"
        + (f" in {elapsed_s / 60:.1f} minutes" if elapsed_s else "")
        + ". Do not edit by hand: rerun it. Raw numbers: `benchmarks/results/perf.json` and "
        "`benchmarks/results/locomo.json`.",
        "",
        "Rerun: `make bench` (or `.venv/bin/python -m benchmarks.run`; `--help` lists the options, e.g. "
        "`--sizes 10000,100000,1000000` or `--locomo PATH`; env `HEBBS_LOCOMO_PATH`). The first run embeds the "
        "synthetic corpora once and caches them in `benchmarks/.cache/`" + _cold_cost(perf) + ".",
        "",
        "## Machine",
        "",
        *_machine(machine),
        "",
    ]
    if perf is not None:
        lines += _perf_section(perf, docs_dir, img_dir)
    else:
        lines += ["## Speed", "", "Not run in this invocation.", ""]
    lines += _scale_section(scale, docs_dir, img_dir)
    lines += _first_recall_section(first_recall)
    lines += _int8_section(int8)
    lines += _locomo_section(locomo_result, docs_dir, img_dir)
    lines += _models_section((locomo_result or {}).get("models"), locomo_result)
    path = docs_dir / "benchmarks.md"
    previous = path.read_text() if path.exists() else ""
    kept = previous[previous.index(HAND_WRITTEN):] if HAND_WRITTEN in previous else ""
    path.write_text("\n".join(lines).rstrip() + "\n" + (f"\n{kept}" if kept else ""))
    return path
