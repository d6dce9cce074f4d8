"""How much two tellings of one structure agree, before any ranking (issue 31, session 22).

For every story set of a story file (`stories.json` and the sets of the same shape), the base story is mapped
onto its literal retelling (the same structure in other words) and onto its true analog (the same structure in
another setting) with the mapper (`map_episodes`), and the mapped event pairs are counted:
- `class`: the share of mapped pairs whose two events have the same action class, other than `other`;
- `sign`: the share whose two events have the same outcome sign (both unsigned counts as the same, as in
  session 22's first count);
- `endings`: sets whose two stories both end in a signed event (the last sentence holds one, not a goal,
  condition or purpose), and of those, how many with the same sign;
- `control`: the same counts for the base mapped onto the next set's true analog, another structure (the mapper
  pairs events by class and sign, so more classed events raise every agreement a little: what a telling of the
  same structure adds is the difference);
- `coverage`: over the base, literal and true stories' events, the share with a class other than `other`, and
  the share with a sign.
An extraction that makes tellings agree raises `class` and `sign` for the literal retelling first; the true analog
is the harder case. Nothing here ranks, so a split run here is not a run of the ranking benchmark, but the
held-out half and the fresh set are still read only for a final candidate (`--split`).

    python -m benchmarks.analogy.agreement [--stories FILE ...] [--split NAME ...] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.analogy.episode_graph import Episode, Event

HERE = Path(__file__).resolve().parent
DEFAULT_FILES = ("stories.json", "stories_extra.json", "stories_new.json", "stories_fresh.json")
OTHERS = ("literal", "true")
# The control: the base mapped onto the next set's true analog (same file and split), another structure. The mapper
# chooses its pairs by class and sign, so a mapped pair agrees more often wherever more events are classed; the
# control says how much of an agreement comes from that alone.
CONTROL = "control"


@dataclass(slots=True)
class Counts:
    """Agreement counted over mapped event pairs, story endings and events."""

    pairs: int = 0
    same_class: int = 0
    same_sign: int = 0
    sets: int = 0
    endings_signed: int = 0  # both stories end in a signed event
    endings_same: int = 0  # ... with the same sign
    events: int = 0  # events of the stories counted for coverage
    classed: int = 0
    signed: int = 0
    seen: set[int] = field(default_factory=set)  # ids of episodes already counted for coverage

    def as_dict(self) -> dict[str, Any]:
        def share(n: int, d: int) -> float:
            return round(n / d, 3) if d else 0.0

        return {"sets": self.sets, "pairs": self.pairs, "class": share(self.same_class, self.pairs),
                "sign": share(self.same_sign, self.pairs), "endings_signed": self.endings_signed,
                "endings_same": self.endings_same, "events": self.events,
                "coverage_class": share(self.classed, self.events), "coverage_sign": share(self.signed, self.events)}


def ending_sign(ep: Episode) -> int:
    """The sign of the last signed event told in the last sentence (not a goal, condition or purpose), else 0."""
    last = len(ep.sentences) - 1
    signs = [e.sign for e in ep.events if e.sentence == last and e.sign and not e.mode]
    return signs[-1] if signs else 0


def count_pairs(counts: Counts, pairs: Iterable[tuple[Event, Event]]) -> None:
    """Add mapped event pairs to `counts`: a pair agrees on class when both events have the same class other
    than `other`, on sign when both have the same sign (0 included)."""
    for a, b in pairs:
        counts.pairs += 1
        counts.same_class += a.action == b.action and a.action != "other"
        counts.same_sign += a.sign == b.sign


def count_events(counts: Counts, ep: Episode) -> None:
    """Add an episode's events to the coverage counts (each episode once)."""
    if id(ep) in counts.seen:
        return
    counts.seen.add(id(ep))
    counts.events += len(ep.events)
    counts.classed += sum(e.action != "other" for e in ep.events)
    counts.signed += sum(e.sign != 0 for e in ep.events)


def count_set(counts: Counts, base: Episode, other: Episode) -> None:
    """One story set's base mapped onto one other telling."""
    from engine.analogy.mapping import map_episodes

    mapping = map_episodes(base, other)
    by_id = {e.id: e for e in base.events}
    other_by_id = {e.id: e for e in other.events}
    count_pairs(counts, ((by_id[x], other_by_id[y]) for x, y, _ in mapping.events))
    counts.sets += 1
    a, b = ending_sign(base), ending_sign(other)
    counts.endings_signed += bool(a and b)
    counts.endings_same += bool(a and a == b)
    count_events(counts, base)
    count_events(counts, other)


def agreement(sets: Sequence[dict[str, str]], episodes: dict[str, Episode]) -> dict[str, dict[str, Counts]]:
    """split -> base vs literal / true / control -> counts, over `sets` whose texts `episodes` holds."""
    out: dict[str, dict[str, Counts]] = {}
    by_split: dict[str, list[dict[str, str]]] = {}
    for s in sets:
        by_split.setdefault(s.get("split", ""), []).append(s)
    for split, group in by_split.items():
        by_other = out.setdefault(split, {o: Counts() for o in (*OTHERS, CONTROL)})
        for n, s in enumerate(group):
            for other in OTHERS:
                count_set(by_other[other], episodes[s["base"]], episodes[s[other]])
            if len(group) > 1:
                count_set(by_other[CONTROL], episodes[s["base"]], episodes[group[(n + 1) % len(group)]["true"]])
    return out


def episodes_of(texts: Sequence[str]) -> tuple[dict[str, Episode], float]:
    """Each distinct text's episode as the engine extracts it, and the extraction's seconds (parse included)."""
    from engine.analogy.text import EpisodeExtractor, episode

    unique = list(dict.fromkeys(texts))
    extractor = EpisodeExtractor()
    extractor.extract(unique[:1])  # load the models outside the timing
    start = time.perf_counter()
    structures = extractor.extract(unique)
    return {t: episode(s) for t, s in zip(unique, structures, strict=True)}, time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stories", type=Path, nargs="+", default=[HERE / f for f in DEFAULT_FILES])
    ap.add_argument("--split", nargs="+", help="only these splits (dev, heldout, extra, new, fresh)")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    report: dict[str, Any] = {}
    total = {o: Counts() for o in (*OTHERS, CONTROL)}
    for path in args.stories:
        sets = [s for s in json.loads(path.read_text())["stories"] if not args.split or s["split"] in args.split]
        if not sets:
            continue
        episodes, seconds = episodes_of([s[k] for s in sets for k in ("base", *OTHERS)])
        for split, by_other in agreement(sets, episodes).items():
            for o, c in by_other.items():
                _add(total[o], c)
            _print(f"{path.stem}:{split}", by_other, report)
        print(f"{path.stem}: {len(episodes)} texts extracted, {1000 * seconds / len(episodes):.2f} ms a text "
              f"(parse included)", file=sys.stderr)
    _print("all", total, report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


def _add(total: Counts, c: Counts) -> None:
    for name in ("pairs", "same_class", "same_sign", "sets", "endings_signed", "endings_same", "events", "classed",
                 "signed"):
        setattr(total, name, getattr(total, name) + getattr(c, name))


def _print(name: str, by_other: dict[str, Counts], report: dict[str, Any]) -> None:
    row = {o: c.as_dict() for o, c in by_other.items()}
    report[name] = row
    for o, d in row.items():
        print(f"{name} base vs {o}: {d['sets']} sets, {d['pairs']} mapped pairs, same class "
              f"{d['class']:.0%}, same sign {d['sign']:.0%}; endings signed {d['endings_signed']}, alike "
              f"{d['endings_same']}; events {d['events']}, classed {d['coverage_class']:.1%}, signed "
              f"{d['coverage_sign']:.1%}")


if __name__ == "__main__":
    raise SystemExit(main())
