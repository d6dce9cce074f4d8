"""Smoke of the benchmarks: they run end to end at tiny sizes and write well-formed results.

Benchmarks are not tests: these check that `make bench` would work and that its numbers are shaped right
(one row per operation and size, R@k fractions that grow with k), not how fast anything is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import locomo, locomo_paths, paths, run
from engine.embedding import SentenceTransformerEmbedder

KS = ("R@5", "R@10", "R@25", "R@50")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder) -> Path:
    out = tmp_path_factory.mktemp("bench")
    code = run.main(
        [
            "--smoke",
            "--quiet",
            "--results-dir",
            str(out / "results"),
            "--docs-dir",
            str(out / "docs"),
            "--work-dir",
            str(out / "work"),
        ],
        model=embedder,
    )
    assert code == 0
    return out


@pytest.mark.slow
def test_perf_json_has_every_operation_with_percentiles_and_ratios(smoke: Path) -> None:
    perf = json.loads((smoke / "results" / "perf.json").read_text())
    rows = {(r["system"], r["operation"]): r for r in perf["results"]}
    for op in (
        "floor",
        "similarity",
        "temporal",
        "causal",
        "analogical",
        "all_four",
        "remember_single",
        "remember_batch",
        "reopen",
    ):
        row = rows[("hebbs", op)]
        assert row["size"] == 200
        assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"]
        assert "ratio_to_floor" in row
    assert rows[("hebbs", "floor")]["ratio_to_floor"] == 1.0
    assert rows[("hebbs", "remember_batch")]["throughput_vs_encode"] > 0
    assert {c["name"] for c in perf["targets"]["checks"]} >= {"similarity", "all_four", "temporal", "reopen"}
    assert perf["machine"]["cores"] >= 1


@pytest.mark.slow
def test_locomo_json_has_fractional_recall_growing_with_k(smoke: Path) -> None:
    result = json.loads((smoke / "results" / "locomo.json").read_text())
    if result.get("skipped"):
        pytest.skip(result["skipped"])
    assert result["recommended_default"] in result
    for name in ("similarity", "similarity+causal", "all four"):
        for split in ("tune", "heldout", "all"):
            agg = result[name][split]
            values = [agg[k] for k in KS]
            assert all(v is None or 0.0 <= v <= 1.0 for v in values), (name, split, values)
    # Similarity's top-k sets are nested in k (one search, cut at k), and so are those of similarity plus
    # a fixed set of neighbouring turns: their recall can only grow with k.
    for name in ("similarity", "similarity+causal"):
        values = [result[name]["all"][k] for k in KS]
        assert values == sorted(values), (name, values)
    assert result["similarity"]["all"]["questions"] > 0
    # the path users run: every path, R@k and session hit@k as fractions, none above its top_k
    user = result["user_paths"]
    assert set(user) >= {p.name for p in locomo_paths.PATHS}
    for path in locomo_paths.PATHS:
        agg = user[path.name]["all"]
        assert agg["questions"] > 0
        for k in locomo.KS:
            for figure in (f"R@{k}", f"hit@{k}"):
                assert (agg[figure] is None) == (k > path.top_k), (path.name, figure)
                assert agg[figure] is None or 0.0 <= agg[figure] <= 1.0
        assert agg["hit@10"] >= agg["R@10"] - 1e-9 or agg["R@10"] == 1.0  # a found turn's session is found


@pytest.mark.slow
def test_docs_are_written_with_tables_and_plots(smoke: Path) -> None:
    doc = (smoke / "docs" / "benchmarks.md").read_text()
    assert "## Speed" in doc and "## Recall quality: LoCoMo" in doc and "## Machine" in doc
    assert "| operation | p50 ms |" in doc
    pytest.importorskip("matplotlib")
    for png in ("perf_ratios.png", "perf_latency.png"):
        assert (smoke / "docs" / "benchmarks" / png).stat().st_size > 1000
    assert "/work/" not in doc and "/tmp/" not in doc  # no machine paths leak into the docs


def test_evidence_is_parsed_leniently() -> None:
    assert locomo.parse_evidence(["D8:6; D9:17"]) == ("D8:6", "D9:17")
    assert locomo.parse_evidence(["D:11:26", "D"]) == ("D11:26",)
    assert locomo.parse_evidence(["D1:3", "D1:3"]) == ("D1:3",)
    assert locomo.recall_at_k(["D1:3"], ()) == 1.0
    assert locomo.recall_at_k(["D1:3", "D2:1"], ("D1:3", "D4:4")) == 0.5


@pytest.mark.slow
def test_locomo_is_skipped_with_a_message_when_absent(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    code = run.main(
        [
            "--smoke",
            "--quiet",
            "--skip-perf",
            "--locomo",
            str(tmp_path / "missing.json"),
            "--results-dir",
            str(tmp_path / "r"),
            "--docs-dir",
            str(tmp_path / "d"),
        ],
        model=embedder,
    )
    assert code == 0
    result = json.loads((tmp_path / "r" / "locomo.json").read_text())
    assert "not found" in result["skipped"]
    assert "Skipped in this run" in (tmp_path / "d" / "benchmarks.md").read_text()


def test_locomo_path_defaults_beside_the_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(paths.LOCOMO_ENV, raising=False)
    assert paths.locomo_path() == (paths.REPO_ROOT / ".." / "shared" / "data" / "locomo10.json").resolve()
    monkeypatch.setenv(paths.LOCOMO_ENV, "elsewhere.json")
    assert paths.locomo_path() == Path("elsewhere.json")


def test_locomo_fusion_grid_and_latency_on_both_halves(embedder: SentenceTransformerEmbedder) -> None:
    """The recommended preset's grid (tuning half only) reproduces the engine's own ranking at the preset's
    point, and the latency of recommended against similarity is measured on a held-out store."""
    from benchmarks import locomo_eval

    path = paths.locomo_path()
    if not path.exists():
        pytest.skip("LoCoMo data not available")
    result = locomo_eval.run(
        path, embedder, conversations=("conv-26", "conv-44"), max_questions=4, max_turns=40,
        config_names=["recommended"],
    )
    grid = result["fusion_grid"]
    assert grid["questions"] == result["recommended"]["tune"]["questions"] > 0
    # The preset's point scored from the frames equals the engine's R@k for the same questions.
    for k in KS:
        assert grid["preset"][k] == pytest.approx(result["recommended"]["tune"][k], abs=1e-3)
    assert grid["best"]["mean"] >= grid["preset"]["mean"]
    timing = result["latency"]
    assert timing["conversation"] == "conv-44" and timing["similarity_p50_ms"] > 0 and timing["ratio"] > 0
