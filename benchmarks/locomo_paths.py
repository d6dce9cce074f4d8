"""LoCoMo on the path users run: the default recall, default weights, every recall counted, a live clock.

The relevance-only figures (benchmarks/locomo_eval.py) ask each question with `retrieve` (nothing counted) and
weights 1/0/0/0. Users run `hebbs recall "question"` / `MemoryEngine.recall(question)`: the default preset
(engine/recall/presets.py DEFAULT_PRESET), the default weights 0.5/0.2/0.2/0.1, and every memory a recall
returns gets access_count + 1, which the next recall's reinforcement reads. Here each conversation's questions
are asked in the file's order, one after another, on one store, through `MemoryEngine.recall(cue, top_k=k)`,
with the clock standing `days` after the last session (recency is live: at +1 day the last weeks' turns are
recent, at +30 days none is). Each path starts from a copy of the freshly imported store (no earlier path's
counts).

The CLI path (`cli_path`): what a user types, `hebbs index conversation.json` then `hebbs recall "question"
--format json` once per question, each in a fresh process (the CLI's defaults: the default preset and weights,
top_k 10, every recall counted, the machine's real clock, so years after LoCoMo's sessions), for the first
`CLI_QUESTIONS` questions of the first conversation of each half; the model embeds the questions (no cache).

Reported beside turn-level R@k (the paper's measure): session-level hit@k, whether any session that holds an
evidence turn appears among the top k (other systems publish session-level figures). R@k and hit@k are read off
the top_k list for every k <= top_k.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks import locomo
from benchmarks.paths import REPO_ROOT
from benchmarks.progress import bar
from engine import MemoryEngine
from engine.clock import ManualClock


@dataclass(frozen=True)
class UserPath:
    days: int  # the clock: the conversation's last session + this many days
    top_k: int

    @property
    def name(self) -> str:
        return f"default, counted, +{self.days} day{'s' if self.days != 1 else ''}, top_k {self.top_k}"


PATHS = tuple(UserPath(days, top_k) for days in (1, 30) for top_k in (10, 50))


@dataclass
class Score:
    conversation: str
    category: int
    recall: dict[int, float]  # k -> turn-level R@k
    hit: dict[int, float]  # k -> session-level hit@k (1.0 / 0.0)


def session_hit(retrieved: Sequence[str], evidence: Sequence[str]) -> float:
    """1.0 when a session holding an evidence turn is among `retrieved` (dia ids, already cut to k); a question
    without evidence counts as 1, as in R@k."""
    if not evidence:
        return 1.0
    wanted = {e.split(":")[0] for e in evidence}
    return 1.0 if any(d.split(":")[0] in wanted for d in retrieved) else 0.0


def score(conv: str, category: int, got: Sequence[str], evidence: Sequence[str], top_k: int) -> Score:
    ks = [k for k in locomo.KS if k <= top_k]
    return Score(conv, category, {k: locomo.recall_at_k(got[:k], evidence) for k in ks},
                 {k: session_hit(got[:k], evidence) for k in ks})


def run(
    convs: Sequence[locomo.Conversation], embedder: Any, paths: Sequence[UserPath] = PATHS
) -> dict[str, list[Score]]:
    """Every path over every conversation: import once, then each path on its own copy of the store."""
    out: dict[str, list[Score]] = {p.name: [] for p in paths}
    if not convs:
        return out
    work = Path(tempfile.mkdtemp(prefix="hebbs-locomo-paths-"))
    total = sum(len(c.questions) for c in convs) * len(paths)
    try:
        with bar(f"LoCoMo, the path users run: {len(convs)} conversations x {len(paths)} paths", total) as update:
            done = 0
            for conv in convs:
                base = work / conv.sample_id
                with MemoryEngine(base, embedder=embedder, clock=ManualClock(conv.last_time)) as engine:
                    dia_of = locomo.import_conversation(engine, conv)
                for path in paths:
                    copy = work / f"{conv.sample_id}-{path.days}-{path.top_k}"
                    shutil.copytree(base, copy)
                    clock = ManualClock(conv.last_time + timedelta(days=path.days))
                    with MemoryEngine(copy, embedder=embedder, clock=clock) as engine:
                        for q in conv.questions:
                            got = [dia_of.get(r.memory.id, "") for r in engine.recall(q.question, top_k=path.top_k)]
                            out[path.name].append(score(conv.sample_id, q.category, got, q.evidence, path.top_k))
                            done += 1
                            if done % 50 == 0:
                                update(done, total)
                    shutil.rmtree(copy, ignore_errors=True)
            update(total, total)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


CLI_QUESTIONS = 40
CLI_PATH = f"CLI: `hebbs recall QUESTION`, counted, today's clock, top_k 10 (first {CLI_QUESTIONS} questions, one " \
    "conversation per half)"
CLI_BASELINE = "recommended, relevance-only weights, uncounted (`retrieve`), on the CLI path's questions"


def _hebbs(data_dir: Path, *args: str) -> str:
    """One `hebbs` command in a fresh interpreter (this tree's code), its standard output."""
    env = {**os.environ, "HEBBS_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPO_ROOT)}
    command = [str(Path(sys.executable).parent / "hebbs"), *args]
    return subprocess.run(command, cwd=REPO_ROOT, env=env, check=True, capture_output=True, text=True).stdout


def cli_conversations(convs: Sequence[locomo.Conversation]) -> list[locomo.Conversation]:
    """The conversations the CLI path asks: the first of each half that is there."""
    firsts = [next((c for c in convs if c.sample_id in half), None) for half in (locomo.TUNE, locomo.HELDOUT)]
    return [c for c in firsts if c is not None]


def on_cli_questions(scores: Sequence[Any], convs: Sequence[locomo.Conversation], questions: int) -> list[Any]:
    """Of another path's scores (each conversation's in its question order), those of the questions the CLI path
    asks: the same questions, so the CLI's figures can be read against that path's."""
    chosen = {c.sample_id for c in cli_conversations(convs)}
    taken: dict[str, int] = {}
    out = []
    for s in scores:
        if s.conversation in chosen and taken.get(s.conversation, 0) < questions:
            taken[s.conversation] = taken.get(s.conversation, 0) + 1
            out.append(s)
    return out


def cli_path(convs: Sequence[locomo.Conversation], questions: int = CLI_QUESTIONS) -> dict[str, list[Score]]:
    """The first conversation of each half, indexed with `hebbs index` and asked with `hebbs recall` (see above)."""
    chosen = cli_conversations(convs)
    out: list[Score] = []
    work = Path(tempfile.mkdtemp(prefix="hebbs-locomo-cli-"))
    try:
        with bar(f"LoCoMo through the CLI: {len(chosen)} conversations x {questions} questions",
                 questions * len(chosen)) as update:
            for n, conv in enumerate(chosen):
                source = work / f"{conv.sample_id}.json"
                source.write_text(json.dumps(locomo.conversation_json(conv)), encoding="utf-8")
                data = work / f"{conv.sample_id}-data"
                _hebbs(data, "index", str(source))
                for m, q in enumerate(conv.questions[:questions]):
                    answer = json.loads(_hebbs(data, "recall", q.question, "--format", "json"))
                    got = [str(r["memory"]["context"].get("message_id", "")) for r in answer["results"]]
                    out.append(score(conv.sample_id, q.category, got, q.evidence, 10))
                    update(n * questions + m + 1, questions * len(chosen))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {CLI_PATH: out}


def aggregate(scores: Sequence[Any], only: Sequence[str] | None = None) -> dict[str, Any]:
    """R@k and hit@k (fractions) overall, and R@10 per category, for the k every chosen question has."""
    chosen = [s for s in scores if only is None or s.conversation in only]
    out: dict[str, Any] = {"questions": len(chosen)}
    for k in locomo.KS:
        out[f"R@{k}"] = _mean([s.recall.get(k) for s in chosen])
        out[f"hit@{k}"] = _mean([s.hit.get(k) for s in chosen])
    out["R@10 by category"] = {f"{cat} {label}": _mean([s.recall.get(10) for s in chosen if s.category == cat])
                               for cat, label in locomo.CATEGORIES.items()}
    return out


def _mean(values: Sequence[float | None]) -> float | None:
    """The mean, rounded; None when there is nothing or a question lacks the figure (k above its top_k)."""
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 4) if known and len(known) == len(values) else None


def report(scores: dict[str, list[Any]]) -> dict[str, Any]:
    """Each path's figures on the tuning half, the held-out half and all ten."""
    return {name: {"tune": aggregate(s, locomo.TUNE), "heldout": aggregate(s, locomo.HELDOUT), "all": aggregate(s)}
            for name, s in scores.items()}
