"""The speed targets are checked against ratios of one run's rows (benchmarks/targets.py)."""

from __future__ import annotations

from benchmarks.targets import ALL_FOUR_LIMIT, check


def _row(op: str, p50: float, p95: float | None = None, p99: float | None = None, floor: float = 10.0) -> dict:
    return {
        "system": "hebbs", "size": 100_000, "operation": op, "p50_ms": p50, "p95_ms": p95 or p50,
        "p99_ms": p99 or p50, "ratio_to_floor": round(p50 / floor, 3),
    }


def _rows(all_four: float, analogical: float = 20.0) -> list[dict]:
    return [
        _row("floor", 10.0), _row("similarity", 11.0), _row("temporal", 1.5), _row("causal", 12.0),
        _row("analogical", analogical), _row("all_four", all_four), _row("recommended", 24.0, 39.0, 61.0),
    ]


def _by_name(rows: list[dict]) -> dict[str, dict]:
    return {c["name"]: c for c in check(rows, [])["checks"]}


def test_all_four_is_measured_against_the_slowest_single_strategy_not_the_floor() -> None:
    checks = _by_name(_rows(all_four=22.0))
    assert checks["all_four"]["measured"] == 1.1  # 22 / analogical's 20, not 22 / the floor's 10
    assert checks["all_four"]["met"] and "analogical" in checks["all_four"]["target"]
    missed = _by_name(_rows(all_four=20.0 * ALL_FOUR_LIMIT + 1))["all_four"]
    assert not missed["met"] and missed["why_if_missed"]


def test_the_default_recall_has_its_median_and_tail_targets() -> None:
    checks = _by_name(_rows(all_four=22.0))
    assert checks["recommended"]["measured"] == 2.4 and checks["recommended"]["met"]
    assert checks["recommended_p95"]["measured"] == 3.9 and checks["recommended_p95"]["met"]
    assert checks["recommended_p99"]["measured"] == 6.1 and not checks["recommended_p99"]["met"]
