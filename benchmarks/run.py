"""Run the benchmarks and write `benchmarks/results/{perf,locomo}.json` and `docs/benchmarks.md`.

.venv/bin/python -m benchmarks.run                 # what `make bench` runs
.venv/bin/python -m benchmarks.run --smoke --results-dir out/r --docs-dir out/d   # a quick check
.venv/bin/python -m benchmarks.run --report-only   # regenerate the docs from the result files
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import machine, paths, progress, targets
from benchmarks.progress import log

SMOKE_LOCOMO_CONVERSATIONS = ("conv-26",)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1000,10000,100000", help="corpus sizes for the speed benchmark (comma list)")
    p.add_argument("--queries", type=int, default=150, help="timed cues per size")
    p.add_argument("--smoke", action="store_true", help="tiny sizes and few questions: a seconds-long check")
    p.add_argument("--skip-perf", action="store_true")
    p.add_argument("--skip-locomo", action="store_true")
    p.add_argument("--no-peer", action="store_true", help="do not run the hebbmem comparison")
    p.add_argument("--hebbmem-max-n", type=int, default=1_000, help="largest size the hebbmem peer is built at")
    p.add_argument(
        "--locomo",
        default=None,
        help=f"path to locomo10.json (env {paths.LOCOMO_ENV}; default {paths.DEFAULT_LOCOMO} beside the repo)",
    )
    p.add_argument(
        "--locomo-configs",
        default=None,
        help="comma list of LoCoMo config names to run, or `ablation` for the ablation table's configs "
        "(default all; see benchmarks/locomo_eval.py)",
    )
    p.add_argument(
        "--model",
        default=None,
        help="LoCoMo with another embedding model (e.g. `mpnet`, after `make setup-mpnet`): its figures and its "
        "cost beside the default model's go into locomo.json's `models` entry; the default model's stay",
    )
    p.add_argument("--no-locomo-grid", action="store_true", help="skip the fusion-settings grid on the tuning half")
    p.add_argument("--results-dir", type=Path, default=paths.RESULTS_DIR)
    p.add_argument("--docs-dir", type=Path, default=paths.DOCS_DIR)
    p.add_argument("--work-dir", type=Path, default=None, help="where stores are built (default: a temp dir)")
    p.add_argument("--report-only", action="store_true", help="only regenerate the docs from existing results")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--no-torch-floor", action="store_true", help="do not time the torch floor beside the ONNX one")
    p.add_argument("--cold-runs", type=int, default=5, help="cold `hebbs recall` runs in fresh processes (0: skip)")
    return p


def _load_model(name: str | None = None) -> Any:
    """The engine's default embedder (ONNX unless HEBBS_EMBEDDING_BACKEND says otherwise), or model `name`."""
    from engine.embedding import create_embedder

    model = create_embedder(model=name)
    model.encode(["warm up"])
    return model


def _load_torch_model() -> Any:
    """sentence-transformers on torch: the previous floor, timed beside the new one in the same rounds."""
    from engine.embedding import SentenceTransformerEmbedder

    model = SentenceTransformerEmbedder()
    model.encode(["warm up"])
    return model


def _perf(args: argparse.Namespace, model: Any) -> dict[str, Any]:
    from benchmarks import perf

    if args.smoke:
        settings = perf.PerfSettings(
            sizes=[200],
            queries=3,
            warmup=1,
            single_writes=2,
            batch_size=8,
            batches=1,
            reopen_runs=1,
            peer=not args.no_peer,
            hebbmem_max_n=0,  # its own model load alone costs seconds; txtai covers the peer path
            hebbmem_queries=2,
            work_dir=args.work_dir,
        )
    else:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        settings = perf.PerfSettings(
            sizes=sizes,
            queries=args.queries,
            peer=not args.no_peer,
            hebbmem_max_n=args.hebbmem_max_n,
            work_dir=args.work_dir,
        )
    if not args.smoke and not args.no_torch_floor and getattr(model, "backend", "") != "torch":
        settings.extra["torch_model"] = _load_torch_model()
    result = perf.run(settings, model)
    if args.cold_runs > 0 and not args.smoke:
        from benchmarks import cold_start

        result["cold_start"] = cold_start.run(args.cold_runs, large=True)
    result["targets"] = targets.check(result["results"], result["sizes"])
    result["settings"] = {k: v for k, v in vars(settings).items() if k not in ("work_dir", "extra")}
    result["settings"]["embedding_backend"] = getattr(model, "backend", "?")
    encode = [r for r in result["results"] if r["operation"] == "encode_batch"]
    notes = []
    if 1_000_000 not in settings.sizes and encode:
        per_s = settings.batch_size / (encode[-1]["p50_ms"] / 1000.0)
        notes.append(
            f"1,000,000 memories not run: embedding a million distinct texts once, at this run's raw encode "
            f"rate of {per_s:,.0f} texts/s, takes about {1_000_000 / per_s / 60:,.0f} minutes on this machine, "
            "beyond the 30-minute budget of `make bench`. `make bench-scale` measures the growth to 1M from "
            "precomputed vectors instead (the Scale section)."
        )
    notes.append("p50/p95/p99 come from the round-robin samples; ratios divide p50 by the floor's p50 of the same run.")
    result["notes"] = notes
    return result


def _locomo(args: argparse.Namespace, model: Any) -> dict[str, Any]:
    from benchmarks import locomo_eval, locomo_paths

    path = paths.locomo_path(args.locomo)
    if not path.exists():
        message = (
            f"LoCoMo data not found at {paths.display(path)} (pass --locomo PATH or set "
            f"{paths.LOCOMO_ENV}); the LoCoMo part is skipped"
        )
        log(f"[yellow]{message}[/yellow]")
        return {"skipped": message}
    if args.smoke:
        return locomo_eval.run(
            path,
            model,
            conversations=SMOKE_LOCOMO_CONVERSATIONS,
            max_questions=4,
            max_turns=40,
            config_names=["similarity", "similarity+causal", "all four"],
        )
    names = args.locomo_configs.split(",") if args.locomo_configs else None
    if names == ["ablation"]:
        names = list(locomo_eval.ABLATION)  # `make bench-locomo`: the ablation table, minutes not an hour
    result = locomo_eval.run(path, model, config_names=names, grid=not args.no_locomo_grid,
                             cli_questions=locomo_paths.CLI_QUESTIONS)
    result["notes"] = locomo_eval.notes(result)
    return result


def _other_model(args: argparse.Namespace, desc: dict[str, Any], started: float) -> int:
    """`--model NAME`: LoCoMo with that model, saved under locomo.json's `models`; the docs regenerated."""
    from benchmarks import model_compare, report

    if args.skip_locomo or args.smoke:
        raise SystemExit("--model runs LoCoMo: it cannot be combined with --skip-locomo or --smoke")
    model = _load_model(args.model)
    locomo_path = args.results_dir / "locomo.json"
    perf_path = args.results_dir / "perf.json"
    locomo_data = json.loads(locomo_path.read_text()) if locomo_path.exists() else {}
    entry = _locomo(args, model)
    if entry.get("skipped"):
        return 1
    summary = model_compare.summary(entry, model.name, paths.locomo_path(args.locomo))
    locomo_data.setdefault("models", {})[model.name] = summary
    paths.write_json(locomo_path, locomo_data)
    log(f"wrote {paths.display(locomo_path)} (models / {model.name})")
    perf_data = json.loads(perf_path.read_text()) if perf_path.exists() else None
    if perf_data is not None:
        perf_data["targets"] = targets.check(perf_data["results"], perf_data["sizes"])
    scale_path = args.results_dir / "scale.json"
    scale = json.loads(scale_path.read_text()) if scale_path.exists() else None
    loc = locomo_data if "meta" in locomo_data else None
    out = report.write(perf_data, loc, desc, args.docs_dir, "make bench-locomo", None, scale)
    log(f"wrote {paths.display(out)} in {(time.perf_counter() - started) / 60:.1f} min")
    return 0


def main(argv: list[str] | None = None, model: Any = None) -> int:
    """`model`: an already loaded embedder to reuse (the smoke test shares the test session's)."""
    args = _parser().parse_args(argv)
    progress.QUIET = args.quiet
    started = time.perf_counter()
    perf_path = args.results_dir / "perf.json"
    locomo_path = args.results_dir / "locomo.json"
    scale_path = args.results_dir / "scale.json"
    scale = json.loads(scale_path.read_text()) if scale_path.exists() and not args.smoke else None
    int8_path = args.results_dir / "int8.json"  # `python -m benchmarks.int8 --save`
    int8 = json.loads(int8_path.read_text()) if int8_path.exists() and not args.smoke else None
    first_path = args.results_dir / "first_recall.json"  # `python -m benchmarks.first_recall --save`
    first = json.loads(first_path.read_text()) if first_path.exists() and not args.smoke else None
    command = "make bench" if not args.smoke else "python -m benchmarks.run --smoke"
    if args.results_dir.resolve() == (paths.REPO_ROOT / "benchmarks" / "results" / "quick").resolve():
        command = "make bench-quick"
    elif args.skip_perf and not args.skip_locomo and not args.smoke:
        command = "make bench-locomo"  # the speed section below is the last `make bench`'s
    if args.report_only:
        from benchmarks import report

        perf_data = json.loads(perf_path.read_text()) if perf_path.exists() else None
        loc = json.loads(locomo_path.read_text()) if locomo_path.exists() else None
        # Checks and notes are derived from the numbers: recompute them, so wording fixes need no rerun.
        if perf_data is not None:
            perf_data["targets"] = targets.check(perf_data["results"], perf_data["sizes"])
        if loc is not None and not loc.get("skipped") and "meta" in loc:
            from benchmarks import locomo_eval

            loc["notes"] = locomo_eval.notes(loc)
        desc = (perf_data or {}).get("machine") or machine.describe()
        elapsed = (perf_data or {}).get("elapsed_s")
        out = report.write(perf_data, loc, desc, args.docs_dir, command, elapsed, scale, int8, first)
        log(f"wrote {paths.display(out)}")
        return 0

    if command == "make bench-locomo" and not paths.locomo_path(args.locomo).exists():
        # LoCoMo is all this run measures: say so and keep the committed figures, never overwrite them with nothing.
        print(f"error: LoCoMo data not found at {paths.display(paths.locomo_path(args.locomo))} "
              f"(pass --locomo PATH or set {paths.LOCOMO_ENV})", file=sys.stderr)
        return 2
    desc = machine.describe()
    if args.model:
        return _other_model(args, desc, started)
    model = model or _load_model()
    perf_data = None
    if not args.skip_perf:
        perf_data = _perf(args, model)
        perf_data["machine"] = desc
        paths.write_json(perf_path, perf_data)
        log(f"wrote {paths.display(perf_path)}")
    elif perf_path.exists():
        # LoCoMo alone (`make bench-locomo`): the docs keep the speed section of the last full run.
        perf_data = json.loads(perf_path.read_text())
        perf_data["targets"] = targets.check(perf_data["results"], perf_data["sizes"])
    locomo_data = None
    if not args.skip_locomo:
        locomo_data = _locomo(args, model)
        previous = json.loads(locomo_path.read_text()) if locomo_path.exists() and not args.smoke else {}
        if locomo_data.get("skipped") and "meta" in previous:
            locomo_data = previous  # no data here: the last measured figures stay, in the file and the docs
        else:
            if "models" in previous:  # the other models' figures (`--model`) stay until they are rerun
                locomo_data["models"] = previous["models"]
            paths.write_json(locomo_path, locomo_data)
            log(f"wrote {paths.display(locomo_path)}")
    elif locomo_path.exists() and not args.smoke:
        # Speed alone (`--skip-locomo`): the docs keep the LoCoMo section of the last run that measured it.
        locomo_data = json.loads(locomo_path.read_text())
    elapsed = time.perf_counter() - started
    if perf_data is not None and not args.skip_perf:
        perf_data["elapsed_s"] = round(elapsed, 1)
        paths.write_json(perf_path, perf_data)
    from benchmarks import report

    out = report.write(perf_data, locomo_data, desc, args.docs_dir, command, elapsed, scale, int8, first)
    log(f"wrote {paths.display(out)} in {elapsed / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
