"""Fusion as columns over the pool gives what fusion per candidate and per signal gave.

`reference_frame` below is the former fusion (each signal a dict id -> value, each column filled per candidate
with dict reads, the window neighbours and episodes gathered from per-recall adjacency sets), kept as the plain,
obviously correct version. Random pools on a real `CandidateTable` (episodes, entities, followed_by chains,
revisions excluded, hits on forgotten memories, tied relevances, missing signals, no cue embedding, an unnamed
cue), under every preset and with windows and smoothing on and off, must give the same pool, signals, z-scores,
neighbours and episodes, the same fused ids and relevances and the same details; the store path (no table) must
give what the table gives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np
import pytest

from engine.api.requests import build_request
from engine.index.candidates import CandidateTable
from engine.models import Strategy, StrategyDetail
from engine.recall import calibration_fit, fusion, strategies
from engine.recall.presets import PLAIN_FUSION, PRESETS, FusionSettings
from engine.recall.strategies import Hit, RecallInputs
from engine.store.rows import NO_EPISODE, CandidateColumns, FusionRow

WIDTH = 12
NAMES = ["melanie", "caroline", "jon_smith", "gina"]


def _zscores(column: np.ndarray) -> np.ndarray:
    std = float(column.std())
    return np.zeros(len(column)) if std == 0.0 else (column - float(column.mean())) / std


def reference_frame(inp: RecallInputs, hit_lists: Mapping[Strategy, list[Hit]], windows: bool, entities: bool,
                    unnamed: bool, smoothing: bool) -> fusion.FusionFrame:
    """The former per-candidate fusion (window members summed in id order, as the columnar one does)."""
    found = list(dict.fromkeys(h.id for hits in hit_lists.values() for h in hits))
    if not found:
        return fusion.EMPTY_FRAME
    adjacent = inp.followed_by(found)
    extra = sorted({n for i in found for n in adjacent.get(i, ()) if n not in inp.excluded} - set(found))
    windows = windows and Strategy.SIMILARITY in hit_lists
    if extra and (smoothing or windows):
        for i, linked in inp.followed_by(extra).items():
            adjacent.setdefault(i, set()).update(linked)
    pool = list(dict.fromkeys([*found, *extra]))
    outside: list[str] = []
    if windows and inp.cue_embedding is not None:
        members = set(pool)
        outside = sorted({n for i in pool for n in adjacent.get(i, ()) if n not in members} - inp.excluded)
    rows = inp.rows([*pool, *outside])
    pool = [i for i in pool if i in rows]
    if not pool:
        return fusion.EMPTY_FRAME
    cosine: dict[str, float] = {}
    window_cosine: dict[str, float] = {}
    unnamed_cosine: dict[str, float] = {}
    unnamed = unnamed and Strategy.SIMILARITY in hit_lists
    if inp.cue_embedding is not None:
        ids = [i for i in [*pool, *(outside if windows else ())] if i in rows]
        matrix = inp.embeddings(ids, rows)
        cos = matrix @ inp.cue_embedding.astype(np.float32)
        cosine = {i: float(cos[n]) for n, i in enumerate(pool)}
        if unnamed:
            unnamed_cosine = cosine
            if inp.unnamed_embedding is not None:
                plain = matrix @ inp.unnamed_embedding.astype(np.float32)
                unnamed_cosine = {i: float(plain[n]) for n, i in enumerate(pool)}
        if windows:
            at = {i: n for n, i in enumerate(ids)}
            for i in pool:
                members = [i, *(n for n in sorted(adjacent.get(i, ())) if n in at and rows[n][0] == rows[i][0])]
                summed = matrix[at[members[0]]].copy()
                for n in members[1:]:
                    summed = summed + matrix[at[n]]
                norm = np.linalg.norm(summed[None, :], axis=1)[0]  # float32, as the window's sum
                dot = sum(float(cos[at[n]]) for n in members)
                window_cosine[i] = dot / float(norm) if norm > 0 else 0.0
    signals: dict[str, dict[str, float]] = {}
    for strategy, hits in hit_lists.items():
        if strategy == Strategy.SIMILARITY:
            signals["similarity"] = dict(cosine) if cosine else {h.id: h.relevance for h in hits}
            if window_cosine:
                signals["similarity_window"] = window_cosine
            if unnamed_cosine:
                signals["similarity_unnamed"] = dict(unnamed_cosine)
        elif strategy == Strategy.LEXICAL:
            signals["lexical"] = {h.id: float(h.detail.fields.get("bm25", 0.0)) for h in hits}
            signals["lexical_window"] = {h.id: float(h.detail.fields.get("window_bm25", 0.0)) for h in hits}
        elif strategy in (Strategy.CAUSAL, Strategy.TEMPORAL) and cosine:
            signals[strategy.value] = {h.id: max(0.0, cosine.get(h.id, 0.0)) * h.relevance for h in hits}
        else:
            signals[strategy.value] = {h.id: h.relevance for h in hits}
    if entities and Strategy.LEXICAL in hit_lists:
        signals["entity_named"] = fusion.entity_named(inp, {i: rows[i].entity_id for i in pool})
    columns = []
    for name, values in signals.items():
        absent_is_zero = name.startswith("lexical") or name == "entity_named"
        missing = 0.0 if absent_is_zero or not values else min(values.values())
        columns.append(np.array([values.get(i, missing) for i in pool], dtype=np.float64))
    raw = np.column_stack(columns) if columns else np.zeros((len(pool), 0))
    z = np.column_stack([_zscores(c) for c in columns]) if columns else raw
    width = 1
    if smoothing:
        row = {i: n for n, i in enumerate(pool)}
        near = [[row[n] for n in sorted(adjacent.get(i, ())) if n in row and rows[n][0] == rows[i][0]] for i in pool]
        width = max(1, max(len(r) for r in near))
        neighbours = np.full((len(pool), width), -1, dtype=np.int64)
        for n, r in enumerate(near):
            neighbours[n, : len(r)] = r
        episodes = {k: g for g, k in enumerate(dict.fromkeys(rows[i][0] for i in pool))}
        group = np.array([episodes[rows[i][0]] for i in pool], dtype=np.int64)
        grouped = np.array([rows[i][0] != NO_EPISODE for i in pool], dtype=bool)
    else:
        neighbours = np.full((len(pool), 1), -1, dtype=np.int64)
        group, grouped = np.zeros(len(pool), dtype=np.int64), np.zeros(len(pool), dtype=bool)
    by_id = np.array([sorted(pool).index(i) for i in pool], dtype=np.int64)
    return fusion.FusionFrame(tuple(pool), tuple(signals), raw, z, neighbours, group, grouped, by_id)


def _z(smoothed: np.ndarray, n: int) -> float:
    """Row n's smoothed score in standard deviations over the pool (0 when the pool's scores are all equal)."""
    spread = float(np.std(smoothed))
    return (float(smoothed[n]) - float(np.mean(smoothed))) / spread if spread > 1e-12 else 0.0


def reference_fuse(inp: RecallInputs, hit_lists: Mapping[Strategy, list[Hit]], settings: FusionSettings,
                   limit: int) -> list[tuple[str, float, tuple[StrategyDetail, ...]]]:
    """The former `fuse`: the best `limit`, every one's details built from every hit."""
    table = reference_frame(inp, hit_lists, settings.weight("similarity_window") > 0,
                            settings.weight("entity_named") > 0, settings.weight("similarity_unnamed") > 0,
                            settings.smooths)
    if not table.pool:
        return []
    smoothed = table.scores(settings)
    kept = table.top(smoothed, limit)
    row = {table.pool[n]: n for n in kept}
    details: dict[str, list[StrategyDetail]] = {}
    shared = ("entity_named",)
    own_of = {Strategy.SIMILARITY: ("similarity", "similarity_window", "similarity_unnamed"),
              Strategy.LEXICAL: ("lexical", "lexical_window")}
    for strategy, hits in hit_lists.items():
        names = [s for s in (*own_of.get(strategy, (strategy.value,)), *shared) if s in table.signals]
        for h in hits:
            n = row.get(h.id)
            if n is None:
                continue
            fields: dict[str, object] = {f"z_{s}": round(float(table.z[n, table.signals.index(s)]), 4) for s in names}
            if strategy == Strategy.SIMILARITY and "similarity_window" in names:
                fields["window_similarity"] = round(float(table.raw[n, table.signals.index("similarity_window")]), 4)
            if strategy == Strategy.SIMILARITY and "similarity_unnamed" in names:
                fields["unnamed_similarity"] = round(float(table.raw[n, table.signals.index("similarity_unnamed")]), 4)
            fields["fused"] = round(float(smoothed[n]), 4)
            fields["fused_z"] = round(_z(smoothed, n), 4)
            details.setdefault(h.id, []).append(
                StrategyDetail(h.detail.strategy, h.detail.relevance, {**h.detail.fields, **fields}))
    label = next(iter(hit_lists), Strategy.SIMILARITY)
    out = []
    for n in kept:
        x, z = float(smoothed[n]), _z(smoothed, n)
        relevance = 1.0 / (1.0 + math.exp(-(calibration_fit.SLOPE * z + calibration_fit.INTERCEPT)))
        context = StrategyDetail(label, relevance, {"context_neighbour": True, "fused": round(x, 4),
                                                    "fused_z": round(z, 4)})
        out.append((table.pool[n], float(relevance), tuple(details.get(table.pool[n], ())) or (context,)))
    return out


class _Store:
    """The record store's two reads fusion makes without a candidate table, over the same rows and edges."""

    def __init__(self, rows: Mapping[str, FusionRow], edges: Sequence[tuple[str, str]]) -> None:
        self._rows, self._edges = rows, edges

    def fusion_rows(self, ids: Sequence[str], with_embeddings: bool) -> dict[str, FusionRow]:
        return {i: self._rows[i] if with_embeddings else self._rows[i]._replace(embedding=None)
                for i in ids if i in self._rows}

    def followed_by_neighbours(self, ids: Sequence[str]) -> dict[str, set[str]]:
        wanted, out = set(ids), {}
        for a, b in self._edges:
            if a in wanted or b in wanted:
                out.setdefault(a, set()).add(b)
                out.setdefault(b, set()).add(a)
        return out


def _table_caught_up(rng: np.random.Generator, rows: Mapping[str, FusionRow], edges: Sequence[tuple[str, str]]
                     ) -> CandidateTable:
    """The table of `rows` and `edges` reached by `catch_up` from an older store: some memories were written since
    (rows added after the segment's, some with an entity the segment never saw), some changed (moved rows)."""
    ids = list(rows)
    later = set(rng.choice(ids, size=len(ids) // 6, replace=False).tolist())
    changed = set(rng.choice([i for i in ids if i not in later], size=len(ids) // 8, replace=False).tolist())
    before = {i: r._replace(entity_id=str(rng.choice([*NAMES, "melanie_newcomer"])), episode='["old"]')
              if i in changed else r for i, r in rows.items() if i not in later}
    table = CandidateTable((1, 1), CandidateColumns(list(before), [r.episode for r in before.values()],
                                                    [r.entity_id for r in before.values()],
                                                    np.array([r.embedding for r in before.values()])),
                           [(a, b) for a, b in edges if a not in later and b not in later])
    for i, r in rows.items():  # the newly written: entities the segment has no string for too
        if i in later and rng.random() < 0.3:
            rows[i] = r._replace(entity_id=str(rng.choice(["gina_read", "zed", "smith"])))  # type: ignore[index]
    links: dict[str, set[str]] = {}
    for a, b in edges:
        links.setdefault(a, set()).add(b)
        links.setdefault(b, set()).add(a)
    news = sorted(later | changed)
    table.catch_up((2, 2), news, {i: rows[i] for i in news}, {i: links.get(i, set()) for i in news})
    return table


def _case(seed: int) -> tuple[RecallInputs, RecallInputs, dict[Strategy, list[Hit]]]:
    """Random memories, episodes and links; random hits of a random strategy mix (ties, forgotten ids)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    ids = [f"M{j:05d}" for j in rng.permutation(n)]
    episodes = [NO_EPISODE if rng.random() < 0.2 else f'["conv-{int(rng.integers(0, max(2, n // 15)))}"]'
                for _ in ids]
    entities = [None if rng.random() < 0.3 else str(rng.choice(NAMES)) for _ in ids]
    vectors = rng.normal(size=(n, WIDTH)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[rng.random(n) < 0.05] = vectors[0]  # identical embeddings: tied cosines
    edges = [(ids[j], ids[j + 1]) for j in range(n - 1) if rng.random() < 0.7]
    edges += [(ids[int(a)], ids[int(b)]) for a, b in rng.integers(0, n, size=(n // 10, 2)) if a != b]
    forgotten = set(rng.choice(ids, size=n // 20, replace=False).tolist())
    live = [j for j, i in enumerate(ids) if i not in forgotten]
    rows = {ids[j]: FusionRow(episodes[j], vectors[j], entities[j]) for j in live}
    table = _table_caught_up(rng, rows, edges) if seed % 2 else CandidateTable(
        (1, 1), CandidateColumns([ids[j] for j in live], [episodes[j] for j in live], [entities[j] for j in live],
                                 vectors[live]), edges)
    excluded = frozenset(rng.choice(ids, size=n // 25, replace=False).tolist())
    strategies = [s for s in Strategy if rng.random() < 0.6] or [Strategy.SIMILARITY]
    hit_lists: dict[Strategy, list[Hit]] = {}
    for strategy in strategies:
        chosen = rng.choice(ids, size=int(rng.integers(0, min(n, 60) + 1)), replace=False).tolist()
        relevance = rng.choice([0.1, 0.5, 0.5, 0.9], len(chosen)) if rng.random() < 0.5 else rng.random(len(chosen))
        hits = []
        for i, r in zip(chosen, relevance.tolist(), strict=True):
            fields: dict[str, object] = {"rank": len(hits)}
            if strategy == Strategy.LEXICAL:
                fields["bm25"] = float(rng.choice([0.0, 1.5, 3.0, rng.random() * 5]))
                if rng.random() < 0.7:
                    fields["window_bm25"] = float(rng.random() * 8)
            hits.append(Hit(i, float(r), StrategyDetail(strategy, float(r), fields)))
        hit_lists[strategy] = hits
    cue_text = " ".join(rng.choice(["what", "did", "melanie", "gina", "read", "smith", "paint"], 4).tolist())
    cue = None if rng.random() < 0.15 else rng.normal(size=WIDTH).astype(np.float32)
    plain = rng.normal(size=WIDTH).astype(np.float32) if cue is not None and rng.random() < 0.5 else None
    request = build_request(cue_text, strategies=["similarity", "lexical"])
    common = {"request": request, "cue_embedding": cue, "cue_parse": dict, "vectors": None, "timeline": None,
              "graph": None, "feature_index": None, "excluded": excluded, "unnamed_embedding": plain}
    with_table = RecallInputs(store=None, candidates=lambda: table, **common)  # type: ignore[arg-type]
    from_store = RecallInputs(store=_Store(rows, edges), **common)  # type: ignore[arg-type]
    return with_table, from_store, hit_lists


SETTINGS = [
    PLAIN_FUSION,
    *(p.fusion for p in PRESETS.values()),
    FusionSettings(MappingProxyType({"similarity_window": 1.0, "entity_named": 0.5, "similarity_unnamed": 0.7}),
                   neighbour_weight=0.3, episode_weight=0.2, episode_decay=0.5),
    FusionSettings(MappingProxyType({"similarity_window": 0.4, "temporal": 0.0}), episode_weight=0.4),
    FusionSettings(MappingProxyType({"similarity_window": 2.0, "lexical_window": 0.3}), neighbour_weight=0.5),
]


def _same_frame(a: fusion.FusionFrame, b: fusion.FusionFrame) -> None:
    assert a.pool == b.pool and a.signals == b.signals
    assert np.allclose(a.raw, b.raw, rtol=0, atol=1e-12) and np.allclose(a.z, b.z, rtol=0, atol=1e-12)
    for name in ("neighbours", "group", "grouped", "by_id"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def _same_details(got: list[tuple[StrategyDetail, ...]], expected: list[tuple[StrategyDetail, ...]]) -> None:
    """The same details; a context neighbour's relevance (numpy's exp here, `math.exp` in the reference) to float
    rounding, every other field exactly."""
    assert [[(d.strategy, d.fields) for d in ds] for ds in got] == [[(d.strategy, d.fields) for d in ds]
                                                                    for ds in expected]
    relevance = [d.relevance for ds in got for d in ds]
    assert np.allclose(relevance, [d.relevance for ds in expected for d in ds], rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_columnar_fusion_equals_the_per_candidate_fusion(seed: int) -> None:
    with_table, from_store, hit_lists = _case(seed)
    flags = [(w, e, u, s) for w in (True, False) for e in (True, False) for u in (True, False) for s in (True, False)]
    for windows, entities, unnamed, smoothing in flags[seed % 4 :: 4]:
        expected = reference_frame(with_table, hit_lists, windows, entities, unnamed, smoothing)
        for inp in (with_table, from_store):
            _same_frame(fusion.frame(inp, hit_lists, windows, entities, unnamed, smoothing), expected)
    for settings in SETTINGS:
        for limit in (5, 40, 1000):
            expected_fused = reference_fuse(with_table, hit_lists, settings, limit)
            for inp in (with_table, from_store):
                result = fusion.fused(inp, hit_lists, settings, limit)
                details = result.details(result.ids)
                assert list(result.ids) == [e[0] for e in expected_fused]
                assert np.allclose(result.relevance, [e[1] for e in expected_fused], rtol=0, atol=1e-12)
                _same_details([details[i] for i in result.ids], [e[2] for e in expected_fused])
                # Details on demand: any subset of the kept ids, each as the full list gives it.
                some = result.ids[::3]
                assert fusion.fused(inp, hit_lists, settings, limit).details(some) == {i: details[i] for i in some}


@pytest.mark.parametrize("seed", range(20))
def test_missing_from_is_setdiff1d(seed: int) -> None:
    """The pool's new neighbour rows: the distinct linked rows not among the hits' rows (which may hold -1 for a
    forgotten hit, and may be empty), sorted, as `np.setdiff1d` gave them."""
    rng = np.random.default_rng(seed)
    rows = rng.choice(1_000, int(rng.integers(0, 60)), replace=False).astype(np.int64)
    if seed % 3 == 0 and len(rows):
        rows[0] = -1
    linked = np.concatenate([rng.choice(rows, 40) if len(rows) else np.zeros(0, dtype=np.int64),
                             rng.integers(0, 1_000, int(rng.integers(0, 80)))]).astype(np.int64)
    linked = linked[linked >= 0]
    got = fusion._missing_from(linked, rows)  # noqa: SLF001
    assert got.dtype == np.int64 and np.array_equal(got, np.setdiff1d(linked, rows))


@pytest.mark.parametrize("seed", range(30))
def test_relevance_column_is_the_dict_column(seed: int) -> None:
    """A strategy's column as one array gives the bits of the former dict per hit: hits no longer in the pool,
    negative and zero cosines (never below 0), an empty strategy; and a strategy that returned an id twice or a
    relevance that is not a number goes through the dict itself."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 40))
    pool = [f"m{n:03d}" for n in range(size)]
    row = {memory_id: n for n, memory_id in enumerate(pool)}
    cosine = rng.normal(scale=0.5, size=size)
    cosine[rng.random(size) < 0.1] = 0.0
    ids = rng.choice([*pool, "gone1", "gone2", "gone3"], size=int(rng.integers(0, size + 3)),
                     replace=seed % 3 == 0).tolist()
    relevance = rng.choice([0.0, 0.25, 0.5, 1.0], len(ids)) if seed % 2 else rng.random(len(ids))
    if seed % 5 == 0 and len(ids):
        relevance[0] = np.nan
    hits = [Hit(i, float(r), StrategyDetail(Strategy.CAUSAL, float(r), {}))
            for i, r in zip(ids, relevance, strict=True)]
    for cos in (cosine, None):
        if cos is None:
            values = {h.id: h.relevance for h in hits}
        else:
            own = cos.tolist()
            values = {h.id: max(0.0, own[p] if (p := row.get(h.id)) is not None else 0.0) * h.relevance for h in hits}
        expected = fusion._column(values, row, size, False)  # noqa: SLF001
        got = fusion._relevance_column(hits, row, size, cos)  # noqa: SLF001
        assert got.dtype == np.float64 and got.tobytes() == expected.tobytes()


def _as_columns(hits: list[Hit], strategy: Strategy) -> strategies.HitColumns:
    """The hits as a `HitColumns` whose hits, when made, are these hits' equals."""
    fields = [h.detail.fields for h in hits]
    relevance = np.array([h.relevance for h in hits], dtype=np.float64)
    return strategies.HitColumns(strategy, [h.id for h in hits], relevance,
                                 lambda at: [dict(fields[n]) for n in at])


@pytest.mark.parametrize("seed", range(24))
def test_fusion_of_hit_columns_is_the_fusion_of_their_hits(seed: int) -> None:
    """A strategy's hits as columns (temporal and similarity return them) fuse as the list of their hits does:
    the same frame bit for bit, the same fused ids and relevances, the same details, any subset of them."""
    with_table, from_store, hit_lists = _case(seed)
    columns = {s: _as_columns(hits, s) for s, hits in hit_lists.items()}
    for inp in (with_table, from_store):
        for windows, smoothing in ((True, True), (False, False), (False, True)):
            a = fusion.frame(inp, hit_lists, windows, True, True, smoothing)
            b = fusion.frame(inp, columns, windows, True, True, smoothing)
            assert a.pool == b.pool and a.signals == b.signals
            for name in ("raw", "z", "neighbours", "group", "grouped", "by_id"):
                assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
        for settings in SETTINGS[:3]:
            for limit in (5, 1000):
                plain = fusion.fused(inp, hit_lists, settings, limit)
                fast = fusion.fused(inp, {s: _as_columns(h, s) for s, h in hit_lists.items()}, settings, limit)
                assert fast.ids == plain.ids and fast.relevance == plain.relevance
                assert fast.details(fast.ids) == plain.details(plain.ids)
                some = plain.ids[1::2]
                assert fast.details(some) == plain.details(some)


def test_hit_columns_read_as_the_list_of_their_hits() -> None:
    """Indexing, slicing, iterating, `at` (only the hits asked for are made, each once all are made) and equality
    with the list, both ways."""
    made: list[list[int]] = []

    def fields(at: list[int]) -> list[dict[str, object]]:
        made.append(list(at))
        return [{"rank": n, "timestamp": f"t{n}"} for n in at]

    ids = ["c", "a", "b", "a"]
    relevance = np.array([0.5, 0.25, 1.0, 0.0])
    expected = [Hit(i, r, StrategyDetail(Strategy.TEMPORAL, r, {"rank": n, "timestamp": f"t{n}"}))
                for n, (i, r) in enumerate(zip(ids, relevance.tolist(), strict=True))]
    columns = strategies.HitColumns(Strategy.TEMPORAL, ids, relevance, fields)
    assert len(columns) == 4 and columns.ids == ids and not made
    assert columns.at([2, 0]) == [expected[2], expected[0]] and made == [[2, 0]]
    assert columns.at([]) == []
    assert columns[1] == expected[1] and columns[-1] == expected[-1] and columns[1:3] == expected[1:3]
    assert list(columns) == expected and columns == expected and expected == columns
    assert columns.at([3])[0] is columns[3]  # made once, then read
    assert columns != expected[:3] and columns == strategies.HitColumns(Strategy.TEMPORAL, ids, relevance, fields)
    empty = strategies.HitColumns(Strategy.SIMILARITY, [], np.zeros(0), fields)
    assert not empty and list(empty) == [] and empty == []
