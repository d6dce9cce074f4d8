"""Precision and recall of the offline contradiction checks on the labelled pairs (pairs.tsv).

Each pair is labelled contradiction, revision or compatible and belongs to the tune or the held-out half
(fixed by a hash of its text before the checks were written; the checks are tuned on `tune` only).
Run: `python -m benchmarks.contradictions.evaluate [--json PATH]`.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from engine.contradictions import detect_pairs

PAIRS = Path(__file__).with_name("pairs.tsv")
LABELS = ("contradiction", "revision")


@dataclass(frozen=True)
class Pair:
    id: str
    split: str
    label: str
    domain: str
    a: str
    b: str


def load_pairs(path: Path = PAIRS) -> list[Pair]:
    with path.open(encoding="utf-8") as f:
        return [Pair(**row) for row in csv.DictReader(f, delimiter="\t")]


def score(pairs: list[Pair]) -> dict[str, object]:
    """Per-label and any-candidate precision / recall, with the confusion counts."""
    findings = detect_pairs([(p.a, p.b) for p in pairs])
    predicted = [f.verdict if f is not None else "compatible" for f in findings]
    confusion = Counter(f"{p.label}->{guess}" for p, guess in zip(pairs, predicted, strict=True))
    out: dict[str, object] = {"pairs": len(pairs), "confusion": dict(sorted(confusion.items()))}
    for label in LABELS:
        tp = sum(1 for p, g in zip(pairs, predicted, strict=True) if p.label == label and g == label)
        fp = sum(1 for p, g in zip(pairs, predicted, strict=True) if p.label != label and g == label)
        fn = sum(1 for p, g in zip(pairs, predicted, strict=True) if p.label == label and g != label)
        out[label] = _pr(tp, fp, fn)
    tp = sum(1 for p, g in zip(pairs, predicted, strict=True) if p.label != "compatible" and g != "compatible")
    fp = sum(1 for p, g in zip(pairs, predicted, strict=True) if p.label == "compatible" and g != "compatible")
    fn = sum(1 for p, g in zip(pairs, predicted, strict=True) if p.label != "compatible" and g == "compatible")
    out["candidate"] = _pr(tp, fp, fn)
    out["errors"] = [
        {"id": p.id, "label": p.label, "predicted": g, "a": p.a, "b": p.b,
         "why": f.detail if f is not None else None}
        for p, g, f in zip(pairs, predicted, findings, strict=True) if g != p.label
    ]
    return out


def _pr(tp: int, fp: int, fn: int) -> dict[str, float]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "tp": tp, "fp": fp, "fn": fn}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--split", choices=("tune", "heldout", "both"), default="both")
    parser.add_argument("--errors", action="store_true", help="print every misclassified pair")
    args = parser.parse_args()
    pairs = load_pairs()
    results = {split: score([p for p in pairs if p.split == split]) for split in ("tune", "heldout")
               if args.split in (split, "both")}
    for split, result in results.items():
        print(f"{split}: {result['pairs']} pairs")
        for key in ("candidate", *LABELS):
            r = result[key]
            assert isinstance(r, dict)
            print(f"  {key:13} precision {r['precision']:.3f} recall {r['recall']:.3f}")
        if args.errors:
            for error in result["errors"]:  # type: ignore[union-attr]
                print(f"    {error}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
