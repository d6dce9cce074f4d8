"""Figures for docs/benchmarks.md (matplotlib, headless, PNG). Each returns the file it wrote, or None."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first

from benchmarks.growth import SCALE_OPS  # noqa: E402

RATIO_OPS = ("similarity", "temporal", "causal", "causal_seeded", "analogical", "all_four")


def _sizes(rows: list[dict]) -> list[int]:
    """The corpus sizes this run measured (those with a floor)."""
    return sorted({r["size"] for r in rows if r["system"] == "hebbs" and r["operation"] == "floor"})


def _row(rows: list[dict], size: int, op: str) -> dict | None:
    return next((r for r in rows if r["size"] == size and r["operation"] == op and r["system"] == "hebbs"), None)


def perf_ratios(rows: list[dict], out: Path) -> Path | None:
    """p50 / floor p50 per recall operation, one group of bars per corpus size."""
    sizes = _sizes(rows)
    if not sizes:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.2))
    width = 0.8 / len(sizes)
    for j, size in enumerate(sizes):
        values = []
        for op in RATIO_OPS:
            row = _row(rows, size, op)
            values.append(row["ratio_to_floor"] if row and row["ratio_to_floor"] is not None else 0.0)
        xs = [i + (j - (len(sizes) - 1) / 2) * width for i in range(len(RATIO_OPS))]
        ax.bar(xs, values, width, label=f"{size:,} memories")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--", label="floor (embed + raw Chroma query)")
    ax.axhline(1.3, color="tab:red", linewidth=0.6, linestyle=":", label="similarity target 1.3x")
    ax.axhline(2.0, color="tab:purple", linewidth=0.6, linestyle=":", label="all-four target 2x")
    ax.set_xticks(range(len(RATIO_OPS)), [op.replace("_", " ") for op in RATIO_OPS])
    ax.set_ylabel("p50 / floor p50")
    ax.set_title("Recall latency relative to the floor (same process run)")
    ax.legend(fontsize=8, ncols=2)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def perf_latency(rows: list[dict], out: Path) -> Path | None:
    """p50 with p95 whiskers per operation and size, log scale."""
    ops = ("floor", "similarity", "temporal", "causal", "causal_seeded", "analogical", "all_four", "remember_single")
    sizes = _sizes(rows)
    if not sizes:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.2))
    width = 0.8 / len(sizes)
    for j, size in enumerate(sizes):
        p50, err = [], []
        for op in ops:
            row = _row(rows, size, op)
            p50.append(row["p50_ms"] if row else 0.0)
            err.append(max(0.0, row["p95_ms"] - row["p50_ms"]) if row else 0.0)
        xs = [i + (j - (len(sizes) - 1) / 2) * width for i in range(len(ops))]
        ax.bar(xs, p50, width, yerr=[[0] * len(err), err], capsize=2, label=f"{size:,} memories")
    ax.set_yscale("log")
    ax.set_xticks(range(len(ops)), [op.replace("_", " ") for op in ops], rotation=15)
    ax.set_ylabel("ms (bar p50, whisker p95)")
    ax.set_title("Latency per operation")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def locomo_overall(result: dict[str, Any], names: list[str], dragon: dict[str, float], out: Path) -> Path | None:
    """R@k against k on all ten conversations, per config, with the paper's DRAGON dialog retriever."""
    if not names:
        return None
    ks = [5, 10, 25, 50]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name in names:
        agg = result[name]["all"]
        style = "-o" if name != result.get("recommended_default") else "-s"
        ax.plot(ks, [100 * agg[f"R@{k}"] for k in ks], style, label=name, linewidth=2.2 if style == "-s" else 1.2)
    ax.plot(ks, [dragon[f"R@{k}"] for k in ks], "k--^", label="DRAGON dialog (paper)")
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_xlabel("k")
    ax.set_ylabel("R@k (%)")
    ax.set_ylim(0, 100)
    ax.set_title("LoCoMo retrieval recall, all ten conversations")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def locomo_categories(result: dict[str, Any], names: list[str], out: Path, k: int = 10) -> Path | None:
    """R@k per question category (all ten conversations) for a few configs."""
    if not names:
        return None
    cats = list(result[names[0]]["all"]["by_category"])
    fig, ax = plt.subplots(figsize=(9, 4.2))
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        values = [100 * (result[name]["all"]["by_category"][c][f"R@{k}"] or 0.0) for c in cats]
        xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(cats))]
        ax.bar(xs, values, width, label=name)
    ax.set_xticks(range(len(cats)), cats)
    ax.set_ylabel(f"R@{k} (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"LoCoMo R@{k} by question category, all ten conversations")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out




def scale_growth(sizes: list[dict[str, Any]], out: Path) -> Path | None:
    """Log-log growth with the store's size: p50 per strategy, reopen time, disk and RSS."""
    if len(sizes) < 2:
        return None
    ns = [s["size"] for s in sizes]
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(13, 4.2))
    for op in (op for op in SCALE_OPS if all(op in s["latency_ms"] for s in sizes)):
        left.plot(ns, [s["latency_ms"][op]["p50_ms"] for s in sizes], marker="o",
                  linestyle="--" if op == "floor" else "-", color="black" if op == "floor" else None,
                  label=op.replace("_", " "))
    left.set_ylabel("p50 ms")
    left.set_title("Recall p50 per strategy")
    left.legend(fontsize=7)
    middle.plot(ns, [s["reopen_s"] for s in sizes], marker="o", label="reopen (wall)")
    middle.plot(ns, [s["reopen_cpu_s"] for s in sizes], marker="o", label="reopen (CPU)")
    middle.set_ylabel("seconds")
    middle.set_title("Reopen in a fresh process")
    middle.legend(fontsize=7)
    right.plot(ns, [s["disk_mib"] for s in sizes], marker="o", label="disk MiB")
    right.plot(ns, [s["rss_store_mib"] for s in sizes], marker="o", label="RSS of the open store, MiB")
    right.set_title("Disk and memory")
    right.legend(fontsize=7)
    for ax in (left, middle, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("memories")
        ax.grid(True, which="both", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
