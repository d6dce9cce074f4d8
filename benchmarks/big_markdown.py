"""One large generated Markdown file, indexed alone: does indexing stay linear in the file's size?

    python -m benchmarks.big_markdown [--megabytes 1.9] [--profile]

The file is deterministic (seeded): headed sections of plain prose naming people, organisations and dates
drawn from pools that grow with the file, as a long meeting log or wiki export would. It is indexed into a
fresh store with the per-file time budget lifted, and the time of each pipeline phase is printed; a
quarter-size file is timed too, so the ratio (about 4 when linear; CPU seconds too, which a busy machine
disturbs less than wall time) shows a superlinear part. `--profile` runs pyinstrument (install it
yourself; it is not a dependency).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

FIRST = ["Dana", "Sofia", "Marek", "Helen", "Tariq", "Ines", "Oskar", "Priya", "Lucas", "Amara", "Jonas", "Mei"]
LAST = ["Whitfield", "Lindqvist", "Novak", "Park", "Haddad", "Moreau", "Berg", "Iyer", "Costa", "Okafor"]
ORG_WORDS = ["Kestrel", "Meridian", "Nord", "Cloud", "Atlas", "Harbor", "Quartz", "Lumen", "Vector", "Cobalt"]
ORG_SUFFIX = ["Labs", "Analytics", "Systems", "Logistics", "Health", "Storage", "Group", "Partners"]
VERBS = ["approved", "reviewed", "signed", "cancelled", "postponed", "questioned", "renewed", "escalated"]
THINGS = ["the contract", "the budget", "the migration plan", "the audit report", "the launch", "the invoice",
          "the backup policy", "the hiring plan", "the security review", "the pricing change"]
REASONS = ["because the price fell", "after the outage", "since the deadline moved", "because legal asked",
           "after a customer complained", "because the numbers were wrong"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October"]


def generate(megabytes: float, seed: int = 14) -> str:
    """Markdown of about `megabytes` MB: sections of 3-6 paragraphs of 3-7 sentences."""
    rng = random.Random(seed)
    target = int(megabytes * 1024 * 1024)
    parts = ["# Operations log\n\n"]
    size = len(parts[0])
    section = 0
    while size < target:
        section += 1
        org = f"{rng.choice(ORG_WORDS)}{rng.randint(1, 4 + section // 20)} {rng.choice(ORG_SUFFIX)}"
        chunk = [f"## Week {section}: {org}\n\n"]
        for _ in range(rng.randint(3, 6)):
            sentences = []
            for _ in range(rng.randint(3, 7)):
                person = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
                when = f"{rng.randint(1, 28)} {rng.choice(MONTHS)} 2026"
                sentence = f"{person} {rng.choice(VERBS)} {rng.choice(THINGS)} with {org} on {when}"
                if rng.random() < 0.4:
                    sentence += f" {rng.choice(REASONS)}"
                sentences.append(sentence + ".")
            chunk.append(" ".join(sentences) + "\n\n")
        text = "".join(chunk)
        parts.append(text)
        size += len(text)
    return "".join(parts)


def index_once(megabytes: float, workdir: Path) -> dict[str, float]:
    """Index one generated file into a fresh store; the phases' seconds and the total."""
    from engine import MemoryEngine

    folder = workdir / f"docs-{megabytes}"
    folder.mkdir()
    (folder / "log.md").write_text(generate(megabytes), encoding="utf-8")
    with MemoryEngine(workdir / f"data-{megabytes}") as engine:
        started, cpu = time.perf_counter(), time.process_time()
        summary = engine.ingest([folder], file_seconds=0)
        total, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert summary.documents_indexed == 1, summary.skipped
    return {**summary.phase_seconds, "total": total, "cpu": cpu, "propositions": float(summary.propositions_added)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=float, default=1.9)
    parser.add_argument("--profile", action="store_true", help="profile the full-size run with pyinstrument")
    args = parser.parse_args()
    from engine.ingest.nlp import load

    load()
    with tempfile.TemporaryDirectory() as tmp:
        small = index_once(args.megabytes / 4, Path(tmp))
        if args.profile:
            from pyinstrument import Profiler  # type: ignore[import-not-found]

            with Profiler() as profiler:
                big = index_once(args.megabytes, Path(tmp))
            profiler.print(show_all=False)
        else:
            big = index_once(args.megabytes, Path(tmp))
    for name in sorted(set(small) | set(big)):
        print(f"{name:16} {small.get(name, 0):9.1f} {big.get(name, 0):9.1f}")
    print(f"ratio of totals (4 when linear): {big['total'] / small['total']:.1f}, "
          f"of CPU seconds: {big['cpu'] / small['cpu']:.1f}")


if __name__ == "__main__":
    main()
