"""Story analogs in a crowded store, the path a user runs: the dev bases of stories.json recalled with top_k 10 (the
CLI's default) from a store that holds every set's true and false analogs, the 100 one-line distractors and `--extra`
memories of the scale benchmark's synthetic corpus. Reported per alpha: for how many bases the true analog comes
first by analogical relevance, and first in the order the recall returns (the composite score with the default
weights, a live clock, every recall counted, as a user's recalls are), and is among the ten returned; with the plot
index (engine/index/plot_index.py) and, with `--without-plot-index`, without it (an empty index in its place: the
embedding neighbours and the feature index alone bring candidates).

    python -m benchmarks.analogy.crowded [--extra 5000] [--without-plot-index] [--bases N] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import corpus
from benchmarks.progress import bar
from engine import MemoryEngine, build_request
from engine.index.derived import DerivedIndexes
from engine.index.plot_index import PlotIndex

HERE = Path(__file__).resolve().parent
ALPHAS = (0.0, 0.5)
TOP_K = 10


def run(extra: int, plot_index: bool, bases: int | None = None) -> dict[str, Any]:
    stories = json.loads((HERE / "stories.json").read_text())["stories"]
    distractors = [x.strip() for x in (HERE / "distractors.txt").read_text().splitlines() if x.strip()]
    crowd = list(dict.fromkeys(corpus.generate(extra, 7).texts()))[:extra] if extra else []
    texts = list(dict.fromkeys([s[k] for s in stories for k in ("true", "false")] + distractors + crowd))
    dev = [s for s in stories if s["split"] == "dev"][:bases]
    original = DerivedIndexes.plot_index
    if not plot_index:
        DerivedIndexes.plot_index = property(lambda self: PlotIndex())  # type: ignore[method-assign, assignment]
    try:
        with tempfile.TemporaryDirectory() as folder, MemoryEngine(Path(folder)) as engine:
            with bar("remember", len(texts)) as update:
                stored = engine.remember_many([{"content": t} for t in texts], progress=update)
            ids = {m.content: m.id for m in stored}
            found: dict[str, dict[str, int]] = {}
            for alpha in ALPHAS:
                first = first_returned = inside = 0
                with bar(f"recall, alpha {alpha:g}", len(dev)) as update:
                    for n, s in enumerate(dev, 1):
                        results = engine.recall(build_request(cue=s["base"], strategies=["analogical"], top_k=TOP_K,
                                                              analogical_alpha=alpha))
                        order = [r.memory.id for r in sorted(results, key=lambda r: -r.strategy_details[0].relevance)]
                        first += bool(order) and order[0] == ids[s["true"]]
                        first_returned += bool(results) and results[0].memory.id == ids[s["true"]]
                        inside += ids[s["true"]] in order
                        update(n, len(dev))
                found[f"a={alpha:g}"] = {"true_first": first, "true_first_as_returned": first_returned,
                                          "true_in_top_k": inside, "bases": len(dev)}
    finally:
        DerivedIndexes.plot_index = original  # type: ignore[method-assign]
    return {"memories": len(texts), "extra": extra, "top_k": TOP_K, "plot_index": plot_index, "results": found}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extra", type=int, default=5000, help="synthetic memories stored beside the stories")
    ap.add_argument("--without-plot-index", action="store_true", help="an empty plot index in its place")
    ap.add_argument("--bases", type=int, help="only the first N dev bases (a quick look)")
    ap.add_argument("--out", type=Path, help="write the report here as JSON")
    args = ap.parse_args(argv)
    report = run(args.extra, not args.without_plot_index, args.bases)
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
