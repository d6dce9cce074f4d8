"""The first recall a user waits for: a cold `hebbs recall CUE`, and the workbench's first recall.

    python -m benchmarks.first_recall [--runs 3] [--save]

Each run is a fresh interpreter over a small store, so every import, the model load and Chroma's open are
paid as a user pays them. Reported with the machine's load (a shared machine inflates wall time; CPU time
is reported beside it):

- `hebbs recall`: wall and CPU per run (benchmarks/cold_start.py), and where the time goes: the cumulative
  import time of the heavy packages, read from one `python -X importtime` run of the same command.
- Workbench: the app run by Streamlit's `AppTest` in a fresh process (the server side of the page, no
  browser): seconds from the interpreter's start to the first page drawn, then from that page to the
  results of a recall clicked at once (the model loads then, not in the background), and the total.

`--save` writes benchmarks/results/first_recall.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import cold_start
from benchmarks.paths import REPO_ROOT, RESULTS_DIR, display, write_json

CUE = "why did the deploy fail?"
HEAVY = ("chromadb", "onnxruntime", "tokenizers", "numpy", "interfaces", "engine", "click", "rich", "streamlit")

_WORKBENCH_CHILD = """
import json, sys, time
start = time.perf_counter()
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=300)
at.run()
page = time.perf_counter()
at.text_input(key="lab_cue").set_value(sys.argv[2])
at.button(key="lab_run").click().run()
done = time.perf_counter()
errors = [e.value for e in at.exception] + [e.value for e in at.error]
print(json.dumps({"page_s": page - start, "recall_s": done - page, "errors": [str(e) for e in errors]}))
"""


def _imports(data_dir: Path) -> dict[str, float]:
    """Cumulative import seconds of the top-level heavy packages in one cold `hebbs recall`."""
    env = {**os.environ, "HEBBS_DATA_DIR": str(data_dir)}
    code = f"import sys; from interfaces.cli.main import main; sys.argv = ['hebbs', 'recall', {CUE!r}]; main()"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, check=True)
    out: dict[str, float] = {}
    for line in done.stderr.splitlines():  # "import time: self_us | cumulative_us | <indent>module"
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit() and parts[2].strip() in HEAVY:
            out[parts[2].strip()] = int(parts[1]) / 1e6  # a package is imported once (nested ones count twice)
    return {k: round(v, 3) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def _workbench(data_dir: Path) -> dict[str, Any]:
    env = {**os.environ, "HEBBS_DATA_DIR": str(data_dir)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _WORKBENCH_CHILD, str(REPO_ROOT / "workbench" / "app.py"), CUE],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = json.loads(done.stdout.strip().splitlines()[-1])
    if child["errors"]:
        raise RuntimeError(f"the workbench recall failed: {child['errors']}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"page_s": child["page_s"], "recall_s": child["recall_s"], "wall_s": wall, "cpu_s": cpu}


def run(runs: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="hebbs-first-recall-"))
    try:
        data_dir = work / "data"
        for fact in cold_start.FACTS:
            cold_start.hebbs(data_dir, "remember", fact, "--entity-id", "ops")
        load_before = os.getloadavg()
        cli_wall, cli_cpu, bench = [], [], []
        for _ in range(runs):
            wall, cpu = cold_start.hebbs(data_dir, "recall", CUE)
            cli_wall.append(wall)
            cli_cpu.append(cpu)
            bench.append(_workbench(data_dir))
        imports = _imports(data_dir)

        def p50(values: list[float]) -> float:
            return round(statistics.median(values), 3)

        return {
            "runs": runs,
            "hebbs_recall": {
                "wall_s_p50": p50(cli_wall), "wall_s_min": round(min(cli_wall), 3), "cpu_s_p50": p50(cli_cpu),
                "import_s": imports,
            },
            "workbench": {
                "note": "AppTest in a fresh process: server side of the page, no browser; recall clicked at once",
                "first_page_s_p50": p50([b["page_s"] for b in bench]),
                "first_recall_s_p50": p50([b["recall_s"] for b in bench]),
                "first_recall_s_min": round(min(b["recall_s"] for b in bench), 3),
                "process_start_to_results_s_p50": p50([b["page_s"] + b["recall_s"] for b in bench]),
                "cpu_s_p50": p50([b["cpu_s"] for b in bench]),
            },
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "cores": os.cpu_count(),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--save", action="store_true", help=f"write {display(RESULTS_DIR / 'first_recall.json')}")
    args = parser.parse_args()
    result = run(max(1, args.runs))
    print(json.dumps(result, indent=2))
    if args.save:
        write_json(RESULTS_DIR / "first_recall.json", result)


if __name__ == "__main__":
    main()
