"""Recall quality on LoCoMo: R@5/10/25/50 per category and overall, per strategy mix, per split.

Every config is a set of `build_request` parameters. Each question is asked with `engine.retrieve` (no
access counting, so asking never changes the next answer) once per k, with `top_k = k`: R@k is what the
engine returns when asked for k, not a prefix of a longer list. The recommended default is the config
with the best mean R@k on the tuning half only; the held-out half is reported, never looked at to choose.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import locomo, locomo_grid, locomo_paths
from benchmarks.embed_cache import CachingEmbedder, cached_vectors, vector_key
from benchmarks.progress import bar, log
from engine import MemoryEngine, build_request
from engine.clock import ManualClock
from engine.recall.presets import PRESETS

PURE_RELEVANCE = {"w_relevance": 1.0, "w_recency": 0.0, "w_importance": 0.0, "w_reinforcement": 0.0}
ALL_FOUR = ["similarity", "temporal", "causal", "analogical"]


@dataclass(frozen=True)
class EvalConfig:
    """A named recall configuration. `speaker_entity`: the temporal strategy reads the timeline of the
    speaker the question names (the questions never pass an entity id, so one is inferred)."""

    name: str
    params: dict[str, Any]
    note: str = ""
    speaker_entity: bool = False
    reported: bool = True  # False: a tuning-grid point, shown only in the tuning table
    # True: one retrieve with top_k = max(KS), R@k read off its first k. Exact for fused configs, whose
    # candidate pool and scores do not depend on top_k up to engine.recall.recaller.FUSION_POOL.
    prefix: bool = False


def configs() -> list[EvalConfig]:
    """The strategy mixes worth reporting, plus the tuning grid around them."""
    sim = {"strategies": ["similarity"]}
    out = [
        EvalConfig("similarity", sim, "similarity alone, engine defaults (ef 50, default weights)"),
        EvalConfig(
            "similarity/relevance/ef200",
            {**sim, "scoring_weights": PURE_RELEVANCE, "ef_search": 200},
            "as above, HNSW ef_search 200",
            reported=False,
        ),
        EvalConfig(
            "similarity+causal",
            {"strategies": ["similarity", "causal"], "max_depth": 1},
            "plus the turns next to the best match (followed_by, depth 1), default weights",
        ),
        EvalConfig(
            "similarity+causal/relevance",
            {"strategies": ["similarity", "causal"], "max_depth": 1, "scoring_weights": PURE_RELEVANCE},
            "plus neighbouring turns, ranked by relevance only",
        ),
        EvalConfig(
            "similarity+analogical",
            {"strategies": ["similarity", "analogical"]},
            "plus relational-structure matches (alpha 0.5), default weights",
        ),
        EvalConfig(
            "similarity+analogical/relevance/alpha0.8",
            {"strategies": ["similarity", "analogical"], "analogical_alpha": 0.8, "scoring_weights": PURE_RELEVANCE},
            "alpha 0.8, relevance only",
            reported=False,
        ),
        EvalConfig(
            "similarity+temporal",
            {"strategies": ["similarity", "temporal"]},
            "plus the newest turns of the speaker the question names, default weights",
            speaker_entity=True,
        ),
        EvalConfig(
            "all four",
            {"strategies": ALL_FOUR, "max_depth": 1},
            "similarity, temporal (named speaker), causal (depth 1), analogical; default weights",
            speaker_entity=True,
        ),
        EvalConfig(
            "all four/relevance",
            {"strategies": ALL_FOUR, "max_depth": 1, "scoring_weights": PURE_RELEVANCE},
            "all four, ranked by relevance only",
            speaker_entity=True,
            reported=False,
        ),
        EvalConfig("analogical", {"strategies": ["analogical"]}, "analogical alone (alpha 0.5)", reported=False),
        EvalConfig(
            "lexical",
            {"strategies": ["lexical"], "scoring_weights": PURE_RELEVANCE},
            "BM25 (k1 0.7, b 0, over an FTS5 index, Porter) of each turn plus its +-2-turn same-session window"
            " (with its date), no model",
            prefix=True,
        ),
        EvalConfig(
            "similarity+lexical",
            {"strategies": ["similarity", "lexical"], "scoring_weights": PURE_RELEVANCE},
            "z-score fusion of similarity, turn BM25 and window BM25, equal weights, no smoothing",
            prefix=True,
        ),
        EvalConfig(
            "recommended/no windows",
            {**RECOMMENDED, "fusion": {"weights": {**REC_WEIGHTS, "lexical_window": 0.0, "similarity_window": 0.0}}},
            "the recommended preset without the window signals (window BM25, window similarity)",
            prefix=True,
        ),
        EvalConfig(
            "recommended/no smoothing",
            {**RECOMMENDED, "fusion": {"neighbour_weight": 0.0, "episode_weight": 0.0}},
            "the recommended preset without neighbour smoothing and episode boost",
            prefix=True,
        ),
        EvalConfig(
            "recommended",
            RECOMMENDED,
            "preset `recommended` (the default of `hebbs recall`), relevance-only weights",
            prefix=True,
        ),
    ]
    return out


RECOMMENDED = {"preset": "recommended", "scoring_weights": PURE_RELEVANCE}
# The published setting, beside the path users run (benchmarks/locomo_paths.py).
RELEVANCE_ONLY_PATH = "recommended, relevance-only weights, uncounted (`retrieve`)"
REC_WEIGHTS = dict(PRESETS["recommended"].fusion.weights)
# The ablation table of issue 10: held-out R@k of each step from similarity to the recommended preset.
ABLATION = (
    "similarity", "lexical", "similarity+lexical", "recommended/no windows", "recommended/no smoothing",
    "recommended",
)


@dataclass
class QuestionScore:
    conversation: str
    category: int
    recall: dict[int, float]  # k -> R@k
    hit: dict[int, float] = field(default_factory=dict)  # k -> session-level hit@k (benchmarks/locomo_paths.py)


@dataclass
class ConfigResult:
    config: EvalConfig
    scores: list[QuestionScore] = field(default_factory=list)


def _speaker_in(question: str, speakers: Sequence[str]) -> str | None:
    named = [s for s in speakers if re.search(rf"\b{re.escape(s.split()[0])}\b", question, re.IGNORECASE)]
    return named[0] if len(named) == 1 else None


def _request(cfg: EvalConfig, question: str, speakers: Sequence[str], k: int) -> Any:
    params = dict(cfg.params)
    entity = _speaker_in(question, speakers) if cfg.speaker_entity else None
    if "strategies" in params:  # else a preset names them
        strategies = list(params.pop("strategies"))
        if "temporal" in strategies and entity is None:
            strategies.remove("temporal")  # no speaker named: there is no timeline to read
        params["strategies"] = strategies
    return build_request(question, top_k=k, entity_id=entity, **params)


def aggregate(scores: Sequence[QuestionScore], only: Sequence[str] | None = None) -> dict[str, Any]:
    """R@k as a fraction in [0, 1], overall and per category, over the questions of the given conversations."""
    chosen = [s for s in scores if only is None or s.conversation in only]
    out: dict[str, Any] = {"questions": len(chosen)}
    for k in locomo.KS:
        out[f"R@{k}"] = round(float(np.mean([s.recall[k] for s in chosen])), 4) if chosen else None
    per_cat: dict[str, Any] = {}
    for cat, label in locomo.CATEGORIES.items():
        part = [s for s in chosen if s.category == cat]
        per_cat[f"{cat} {label}"] = {
            "questions": len(part),
            **{f"R@{k}": round(float(np.mean([s.recall[k] for s in part])), 4) if part else None for k in locomo.KS},
        }
    out["by_category"] = per_cat
    return out


def _truncated(conv: locomo.Conversation, max_turns: int) -> locomo.Conversation:
    turns = conv.turns[:max_turns]
    kept = {t.dia_id for t in turns}
    questions = tuple(q for q in conv.questions if q.evidence and set(q.evidence) <= kept)
    return locomo.Conversation(conv.sample_id, conv.speakers, turns, questions)


def _mean_r(agg: dict[str, Any]) -> float:
    return float(np.mean([agg[f"R@{k}"] for k in locomo.KS]))


def run(
    path: Path,
    model: Any,
    conversations: Sequence[str] | None = None,
    max_questions: int | None = None,
    config_names: Sequence[str] | None = None,
    max_turns: int | None = None,
    grid: bool = True,
    latency_run: bool = True,
    user_paths: bool = True,
    cli_questions: int = 0,
) -> dict[str, Any]:
    """Import every conversation into its own store, ask every question under every config, aggregate.

    `max_turns` (smoke runs only) keeps each conversation's first turns and the questions whose evidence
    lies within them, so a seconds-long run still asks answerable questions. `grid`: also search the fusion
    settings of the recommended preset on the tuning half (benchmarks/locomo_grid.py). `user_paths`: also ask
    every question on the path users run, beside the relevance-only figure (benchmarks/locomo_paths.py);
    `cli_questions`: also ask that many questions of one conversation per half through the real CLI (0: not).
    """
    started = time.perf_counter()
    loaded = locomo.load(path)
    convs = [c for c in loaded if conversations is None or c.sample_id in conversations]
    if max_turns is not None:
        convs = [_truncated(c, max_turns) for c in convs]
    if max_questions is not None:
        convs = [locomo.Conversation(c.sample_id, c.speakers, c.turns, c.questions[:max_questions]) for c in convs]
    cfgs = [c for c in configs() if config_names is None or c.name in config_names]
    # Every conversation's texts, even when a subset is run: one cache file serves full and partial runs.
    texts = [t.content for c in loaded for t in c.turns] + [q.question for c in loaded for q in c.questions]
    with bar("LoCoMo embeddings (cached in benchmarks/.cache)", len(set(texts))) as update:
        table = cached_vectors("locomo", texts, model.encode, vector_key(model), update)
    embedder = CachingEmbedder(model, table)
    results = {c.name: ConfigResult(c) for c in cfgs}
    tune = [c for c in convs if c.sample_id in locomo.TUNE]
    rest = [c for c in convs if c.sample_id not in locomo.TUNE]
    # Phase 1, the tuning half: every config, grid included. The default is chosen here and only here.
    frames: list[locomo_grid.Question] | None = [] if grid and "recommended" in results else None
    _evaluate(tune, cfgs, embedder, results, "tuning half", frames)
    fusion_grid = locomo_grid.search(frames) if frames else None
    if fusion_grid is not None and fusion_grid["best"] is not None:
        log(f"LoCoMo: fusion grid on the tuning half, best point {fusion_grid['best']['point']} "
            f"(mean R@k {fusion_grid['best']['mean']:.4f}; the preset's point {fusion_grid['preset']['mean']:.4f})")
    tuned = {n: _mean_r(aggregate(r.scores, locomo.TUNE)) for n, r in results.items() if r.scores}
    best = max(tuned, key=lambda n: tuned[n]) if tuned else None
    if best is not None:
        log(f"LoCoMo: recommended default (best mean R@k on the tuning half): {best}")
    # Phase 2, the held-out half: the reported configs and the chosen default (grid points are not rerun).
    shown = [c for c in cfgs if c.reported or c.name == best]
    timing: dict[str, Any] | None = {} if "recommended" in results and latency_run else None
    _evaluate(rest, shown, embedder, results, "held-out half", timing=timing)

    report: dict[str, Any] = {}
    for name, res in results.items():
        complete = res.config in shown or not rest
        report[name] = {
            "note": res.config.note,
            "params": dict(res.config.params),
            "reported": res.config.reported or name == best,
            "tune": aggregate(res.scores, locomo.TUNE),
            "heldout": aggregate(res.scores, locomo.HELDOUT),
            "all": aggregate(res.scores) if complete else aggregate([]),
        }
    meta = {
        "selection": "highest mean of R@5, R@10, R@25, R@50 overall on the tuning half "
        f"({', '.join(locomo.TUNE)}); held-out ({', '.join(locomo.HELDOUT)}) never used to choose; "
        "tuning-grid configs are evaluated on the tuning half only",
        "tune_mean_r": {n: round(v, 4) for n, v in tuned.items()},
        "dragon_dialog_paper": {k: round(v / 100, 4) for k, v in locomo.DRAGON_DIALOG.items()},
        "conversations": [c.sample_id for c in convs],
        "questions": sum(len(c.questions) for c in convs),
        "memories": sum(len(c.turns) for c in convs),
        "seconds": round(time.perf_counter() - started, 1),
        "load_average_1min_at_end": round(os.getloadavg()[0], 2),
    }
    ablation = [
        {"config": n, **{f"R@{k}": report[n]["heldout"][f"R@{k}"] for k in locomo.KS},
         **{f"R@10 {cat}": v["R@10"] for cat, v in report[n]["heldout"]["by_category"].items()}}
        for n in ABLATION
        if n in report and report[n]["heldout"]["questions"]
    ]
    # The shape the issue asks for: config name -> {tune, heldout, all}, plus the recommended default.
    out = {**report, "recommended_default": best, "ablation_heldout": ablation, "meta": meta}
    if fusion_grid is not None:
        out["fusion_grid"] = fusion_grid
    if user_paths:
        scores: dict[str, list[Any]] = {}
        if "recommended" in results:
            scores[RELEVANCE_ONLY_PATH] = results["recommended"].scores
        scores.update(locomo_paths.run(convs, embedder))
        if cli_questions:
            if RELEVANCE_ONLY_PATH in scores:
                scores[locomo_paths.CLI_BASELINE] = locomo_paths.on_cli_questions(
                    scores[RELEVANCE_ONLY_PATH], convs, cli_questions)
            scores.update(locomo_paths.cli_path(convs, cli_questions))
        out["user_paths"] = locomo_paths.report(scores)
        out["user_paths_load"] = round(os.getloadavg()[0], 2)
    if timing:
        out["latency"] = timing
        log(f"LoCoMo: recall p50 similarity {timing['similarity_p50_ms']} ms, recommended "
            f"{timing['recommended_p50_ms']} ms ({timing['ratio']}x)")
    return out


def _evaluate(
    convs: Sequence[locomo.Conversation],
    cfgs: Sequence[EvalConfig],
    embedder: CachingEmbedder,
    results: dict[str, ConfigResult],
    label: str,
    frames: list[locomo_grid.Question] | None = None,
    timing: dict[str, Any] | None = None,
) -> None:
    """Ask every question of every conversation under every config; one fresh store per conversation."""
    if not convs or not cfgs:
        return
    work = Path(tempfile.mkdtemp(prefix="hebbs-locomo-"))
    total = sum(len(c.questions) for c in convs) * len(cfgs)
    try:
        with bar(f"LoCoMo {label}: {len(convs)} conversations x {len(cfgs)} configs", total) as update:
            done = 0
            for conv in convs:
                clock = ManualClock(conv.last_time + timedelta(days=1))  # asked the day after the last session
                with MemoryEngine(work / conv.sample_id, embedder=embedder, clock=clock) as engine:
                    dia_of = locomo.import_conversation(engine, conv)
                    if frames is not None:
                        rec = next(c for c in cfgs if c.name == "recommended")
                        for q in conv.questions:
                            frame = engine.fusion_frame(_request(rec, q.question, conv.speakers, max(locomo.KS)))
                            frames.append(locomo_grid.question(frame, dia_of, q.evidence))
                    for cfg in cfgs:
                        for q in conv.questions:
                            recall, hit = {}, {}
                            if cfg.prefix:
                                hits = engine.retrieve(_request(cfg, q.question, conv.speakers, max(locomo.KS)))
                                got = [dia_of[r.memory.id] for r in hits]
                                recall = {k: locomo.recall_at_k(got[:k], q.evidence) for k in locomo.KS}
                                hit = {k: locomo_paths.session_hit(got[:k], q.evidence) for k in locomo.KS}
                            for k in locomo.KS if not cfg.prefix else ():
                                hits = engine.retrieve(_request(cfg, q.question, conv.speakers, k))
                                got = [dia_of[r.memory.id] for r in hits]
                                recall[k] = locomo.recall_at_k(got, q.evidence)
                                hit[k] = locomo_paths.session_hit(got, q.evidence)
                            results[cfg.name].scores.append(QuestionScore(conv.sample_id, q.category, recall, hit))
                            done += 1
                            if done % 50 == 0:
                                update(done, total)
                    if timing is not None and not timing:
                        timing.update(latency(engine, conv, embedder))
            update(total, total)
    finally:
        shutil.rmtree(work, ignore_errors=True)


LATENCY_QUESTIONS = 100


def latency(engine: MemoryEngine, conv: locomo.Conversation, embedder: CachingEmbedder) -> dict[str, Any]:
    """Median recall latency of the `similarity` and `recommended` presets on the same store (top_k 10),
    alternating question by question so both see the same machine load. The cue's vector, and that of any
    text a recall derives from the cue (the cue without its entity names), is dropped from the cache before
    each recall: the model embeds them, as in real use."""
    times: dict[str, list[float]] = {"similarity": [], "recommended": []}
    questions = [q.question for q in conv.questions[:LATENCY_QUESTIONS]]
    if not questions:
        return {}
    stored = set(embedder.table) - set(questions)  # the memories' vectors; anything else is a cue's
    for q in questions[:5]:  # warm up
        for preset in times:
            engine.retrieve(build_request(q, preset=preset, top_k=10))
    for q in questions:
        for preset, samples in times.items():
            for text in [t for t in embedder.table if t not in stored]:
                del embedder.table[text]  # the cue, and any text a recall derives from it, are embedded
            started = time.perf_counter()
            engine.retrieve(build_request(q, preset=preset, top_k=10))
            samples.append(1000 * (time.perf_counter() - started))
    med = {p: float(np.median(v)) for p, v in times.items()}
    return {
        "conversation": conv.sample_id,
        "memories": len(conv.turns),
        "questions": len(questions),
        "similarity_p50_ms": round(med["similarity"], 2),
        "recommended_p50_ms": round(med["recommended"], 2),
        "ratio": round(med["recommended"] / med["similarity"], 3),
        "target_ratio": 1.5,
    }


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def notes(result: dict[str, Any]) -> list[str]:
    """Findings read off the numbers of this run (so the docs never claim what was not measured)."""
    out: list[str] = []
    best = result.get("recommended_default")
    dragon = locomo.DRAGON_DIALOG
    sim = result.get("similarity")
    if best and best in result:
        agg = result[best]["all"]
        diffs = ", ".join(f"R@{k} {100 * agg[f'R@{k}'] - dragon[f'R@{k}']:+.1f}" for k in locomo.KS)
        out.append(
            f"`{best}` against the paper's DRAGON dialog retriever, all ten conversations, in points: "
            f"{diffs}. DRAGON is a dense retriever trained for retrieval; ours is the general-purpose "
            "all-MiniLM-L6-v2 with no LoCoMo-specific training."
        )
        tune, held = result[best]["tune"], result[best]["heldout"]
        if tune["questions"] and held["questions"]:
            out.append(
                f"Tune vs held-out for `{best}`: R@10 {_pct(tune['R@10'])} vs {_pct(held['R@10'])}; the held-out "
                "half was not used to choose it."
            )
    if sim:
        out.append(
            "For similarity alone the scoring weights cannot change R@k: the strategy returns exactly the k "
            "nearest turns and the composite score only reorders them."
        )
    for mix in ("similarity+temporal", "all four"):
        if mix in result and sim and result[mix]["all"]["questions"]:
            verdict = "below" if result[mix]["all"]["R@10"] < sim["all"]["R@10"] else "at or above"
            out.append(
                f"`{mix}` (default weights): R@10 {_pct(result[mix]['all']['R@10'])}, {verdict} similarity alone "
                f"({_pct(sim['all']['R@10'])}). The temporal strategy adds a pool of the newest turns of the "
                "speaker the question names, scored by their similarity to the cue; with the default weights "
                "the recency signal (w_recency 0.2, 30-day horizon) then lifts the last sessions' turns above "
                "better matches, while questions ask about any session."
            )
    rel = result.get("all four/relevance")
    if rel and rel["all"]["questions"] and sim:
        out.append(
            f"`all four/relevance` (the same four strategies ranked by relevance alone): R@10 "
            f"{_pct(rel['all']['R@10'])} on all ten, held-out {_pct(rel['heldout']['R@10'])} vs "
            f"{_pct(sim['heldout']['R@10'])} for similarity alone: the extra candidates (the named speaker's "
            "recent turns, the best match's neighbours, structural matches) help once recency does not "
            "outweigh relevance."
        )
    causal = result.get("similarity+causal")
    if causal and sim:
        out.append(
            "Adding the neighbouring turns of the best match (`similarity+causal`, followed_by depth 1): "
            f"R@10 {_pct(causal['all']['R@10'])} vs {_pct(sim['all']['R@10'])} for similarity alone."
        )
    return out
