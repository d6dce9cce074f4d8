"""`benchmarks.run` keeps committed LoCoMo figures when the data set is not on this machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import run


def test_bench_locomo_without_the_data_exits_2_and_keeps_the_committed_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, docs = tmp_path / "results", tmp_path / "docs"
    results.mkdir()
    committed = {"meta": {"questions": 1986}, "recommended": {"heldout": {"R@10": 0.8225}}}
    (results / "locomo.json").write_text(json.dumps(committed))
    code = run.main(["--skip-perf", "--locomo-configs", "ablation", "--locomo", str(tmp_path / "missing.json"),
                     "--results-dir", str(results), "--docs-dir", str(docs), "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert "LoCoMo data not found" in err and "missing.json" in err and "Traceback" not in err
    assert json.loads((results / "locomo.json").read_text()) == committed
    assert not docs.exists()
