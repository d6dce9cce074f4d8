"""Contradiction candidates for every write, reviewed by an agent (the SDK's contradiction_prepare / commit).

Each new statement with an entity is checked once, after its write commits and off the write path (the
write marks it pending; engine/contradictions/follow.py runs the check before candidates are read, or when
the engine is idle). It is compared with its nearest neighbours of the same entity written before it
(cosine of the stored embeddings over `MIN_SIMILARITY`, the `NEIGHBOURS` nearest among the entity's newest
`ENTITY_WINDOW` memories): only those pairs are parsed and checked (`engine.contradictions.detect`), so a
memory that resembles nothing of its entity costs one small matrix product. A finding is stored as pending
with its reason and confidence; nothing else changes until an agent commits a verdict:
contradiction -> `contradicts` edges both ways; revision -> `revised_from` from the newer to the older;
dismiss -> the candidate is dropped. A recall whose results hold both sides of a confirmed contradiction
says so in each side's strategy details (`contradicts`: the other side's id).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from engine import ids
from engine.api.reviews import ContradictionCommitRequest, ContradictionCommitResponse, ContradictionsResponse
from engine.errors import ValidationError
from engine.ingest.keywords import STOPWORDS, stem
from engine.models import Edge, EdgeType, Memory, MemoryKind, RecallResult, StrategyDetail
from engine.store.interface import Storage
from engine.store.rows import PendingPair

MIN_SIMILARITY = 0.4  # below the least similar candidate pair of the labelled set's tune half (0.47)
# Before any parse, the two texts must share this Jaccard overlap of their content-word stems: every check
# needs the same subject and much the same content (the tune half's found pairs share 0.167 and more).
# Two propositions of the same indexed document are not compared (see `_same_document`).
MIN_WORD_OVERLAP = 0.15
NEIGHBOURS = 5
ENTITY_WINDOW = 500
_WORDS = re.compile(r"[a-z0-9]+")
CHECKED_KINDS = frozenset({MemoryKind.EPISODE, MemoryKind.PROPOSITION})  # statements, not documents or insights


class ContradictionReview:
    def __init__(self, store: Storage, add_edges: Callable[[Sequence[Edge]], None]) -> None:
        self.store = store
        self._add_edges = add_edges

    # --- after a write (engine/contradictions/follow.py runs it) ---------------------------------------
    def check(self, checked: Sequence[str], now: datetime) -> int:
        """Find and store candidates for memories whose check is pending, given in the order written; their
        pending marks are cleared in the transaction that stores the candidates. Each is compared with the
        memories of its entity written before it: those not waiting for a check themselves, and those before
        it in `checked`. Returns how many candidates were proposed."""
        written = self.store.get_many(checked)
        vectors = self.store.embeddings([i for i in checked if i in written])
        by_entity: dict[str, list[tuple[str, np.ndarray]]] = defaultdict(list)
        for memory_id in checked:
            memory = written.get(memory_id)
            if memory is not None and memory.entity_id and memory.kind in CHECKED_KINDS and memory_id in vectors:
                by_entity[memory.entity_id].append((memory_id, vectors[memory_id]))
        pairs: list[tuple[str, str, float]] = []
        for entity, new in by_entity.items():
            pairs.extend(self._near_pairs(entity, new))
        memories = self.store.get_many(sorted({i for a, b, _ in pairs for i in (a, b)}))
        pairs = [(a, b, s) for a, b, s in pairs if a in memories and b in memories
                 and memories[a].kind in CHECKED_KINDS and memories[b].kind in CHECKED_KINDS
                 and not _same_document(memories[a], memories[b])
                 and word_overlap(memories[a].content, memories[b].content) >= MIN_WORD_OVERLAP]
        proposed: list[PendingPair] = []
        if pairs:
            from engine.contradictions import detect_pairs

            findings = detect_pairs([(memories[a].content, memories[b].content) for a, b, _ in pairs])
            micros = int(now.timestamp() * 1_000_000)
            proposed = [
                PendingPair(ids.new_id(micros // 1000), a, b, f.verdict, f.reason, f.confidence, round(s, 4),
                            f.detail, micros)
                for (a, b, s), f in zip(pairs, findings, strict=True) if f is not None
            ]
        self.store.propose_contradictions(proposed, checked)
        return len(proposed)

    def _near_pairs(self, entity: str, new: list[tuple[str, np.ndarray]]) -> list[tuple[str, str, float]]:
        """(older, newer, cosine) for each new memory and its nearest older neighbours of the entity: among
        its newest `ENTITY_WINDOW` memories, those already checked, and those of `new` before it."""
        window = sorted(self.store.ids_of_entity(entity), reverse=True)[:ENTITY_WINDOW]  # ids sort by time
        waiting = self.store.checks_pending_among(window) | {i for i, _ in new}  # written after, or in `new`
        others = self.store.embeddings([i for i in window if i not in waiting])
        pool_ids = [*others, *(i for i, _ in new)]
        if len(pool_ids) < 2:
            return []
        pool = np.stack([*others.values(), *(v for _, v in new)]).astype(np.float32)
        out: list[tuple[str, str, float]] = []
        for position, (memory_id, vector) in enumerate(new):
            cosines = pool @ vector.astype(np.float32)
            cosines[len(others) + position:] = -1.0  # the memory itself and those of `new` written after it
            for j in np.argsort(-cosines)[:NEIGHBOURS]:
                if cosines[j] < MIN_SIMILARITY:
                    break
                out.append((pool_ids[int(j)], memory_id, float(cosines[j])))
        return out

    # --- review --------------------------------------------------------------------------------------
    def prepare(self, limit: int) -> ContradictionsResponse:
        pending = self.store.pending_contradictions(limit)
        contents = self.store.get_many(sorted({i for p in pending for i in (p.memory_a, p.memory_b)}))
        return ContradictionsResponse(tuple(p for p in pending if p.memory_a in contents and p.memory_b in contents),
                                      {i: m.content for i, m in contents.items()})

    def commit(self, request: ContradictionCommitRequest) -> ContradictionCommitResponse:
        """Apply every verdict or none: unknown pending ids are refused before anything is written."""
        wanted = [v.pending_id for v in request.verdicts]
        found = self.store.pending_contradictions_by_id(wanted)
        missing = [i for i in wanted if i not in found]
        if missing:
            raise ValidationError(f"no pending contradiction with id {', '.join(missing[:5])} (already reviewed, "
                                  "or one side was forgotten); contradiction_prepare lists the pending ones")
        edges: list[Edge] = []
        counts = {"contradiction": 0, "revision": 0, "dismiss": 0}
        for verdict in request.verdicts:
            pair = found[verdict.pending_id]
            counts[verdict.verdict] += 1
            attrs = {"reviewed": True, "reason": pair.reason, **({"reasoning": verdict.reasoning}
                                                               if verdict.reasoning else {})}
            if verdict.verdict == "contradiction":
                edges += [Edge(pair.memory_a, pair.memory_b, EdgeType.CONTRADICTS, verdict.confidence, attrs),
                          Edge(pair.memory_b, pair.memory_a, EdgeType.CONTRADICTS, verdict.confidence, attrs)]
            elif verdict.verdict == "revision":
                edges.append(Edge(pair.memory_b, pair.memory_a, EdgeType.REVISED_FROM, verdict.confidence, attrs))
        if edges:
            self._add_edges(edges)
        self.store.resolve_contradictions(wanted)
        return ContradictionCommitResponse(counts["contradiction"], counts["revision"], counts["dismiss"])


def _same_document(a: Memory, b: Memory) -> bool:
    """Two propositions of one indexed document: one account, whose later sentences narrate ("moved the date
    forward", "opened on ... instead") rather than revise or contradict the earlier ones."""
    source = a.context.get("source")
    return bool(source) and source == b.context.get("source")


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of two texts' content-word stems: the cheap test that spares most pairs a parse."""
    x, y = _stems(a), _stems(b)
    return len(x & y) / len(x | y) if x or y else 0.0


def _stems(text: str) -> set[str]:
    return {stem(w) for w in _WORDS.findall(text.lower()) if w not in STOPWORDS}


def mark_contradictions(store: Storage, results: Sequence[RecallResult]) -> tuple[RecallResult, ...]:
    """Results whose list also holds the other side of a `contradicts` edge name it in every strategy detail."""
    if len(results) < 2:
        return tuple(results)
    against: dict[str, list[str]] = defaultdict(list)
    for edge in store.edges_among([r.memory.id for r in results]):
        if edge.type == EdgeType.CONTRADICTS and edge.target not in against[edge.source]:
            against[edge.source].append(edge.target)
    if not against:
        return tuple(results)
    return tuple(
        RecallResult(r.memory, r.score, r.signals, tuple(
            StrategyDetail(d.strategy, d.relevance, {**d.fields, "contradicts": sorted(against[r.memory.id])})
            for d in r.strategy_details))
        if r.memory.id in against else r
        for r in results
    )
