"""Lexical recall, context windows, fusion that adds evidence, and presets, on the real engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import MemoryEngine
from engine.embedding import SentenceTransformerEmbedder
from engine.errors import InvalidRecallError
from engine.models import Memory
from engine.recall.lexical_query import match_expression, terms
from interfaces.cli.main import main

TURNS = [
    ("Maya: I finally adopted a dog from the shelter", 1),
    ("Leo: Oh nice, what breed?", 1),
    ("Maya: A golden retriever. We named him Biscuit", 1),
    ("Leo: I spent the weekend repairing my bicycle", 2),
    ("Maya: Did the brakes work afterwards?", 2),
    ("Leo: Yes, after I replaced the cable twice", 2),
    ("Maya: The new cafe on Pine Street opened today", 3),
    ("Leo: I heard they roast their own coffee", 3),
    ("Maya: The pastries were excellent too", 3),
    ("Leo: My sister starts university in September", 3),
    ("Maya: Which subject will she study?", 3),
    ("Leo: Marine biology, she loves the ocean", 3),
]


def _conversation(engine: MemoryEngine) -> list[Memory]:
    items = [{"content": text, "context": {"conversation": "c1", "session": s}} for text, s in TURNS]
    memories = engine.remember_many(items)
    engine.add_edges([(a.id, b.id, "followed_by") for a, b in zip(memories, memories[1:], strict=False)])
    return memories


def _lexical(engine: MemoryEngine, cue: str, top_k: int = 10) -> list[tuple[str, dict]]:
    return [
        (r.memory.content, next(d.to_dict() for d in r.strategy_details if d.strategy.value == "lexical"))
        for r in engine.recall(cue, strategies=["lexical"], top_k=top_k)
    ]


def test_cue_terms_drop_question_words_and_quote_every_term() -> None:
    assert terms("What did Maya's dog do on Tuesday?") == ["maya", "dog", "tuesday"]
    assert match_expression('what is "NEAR" OR -x*') == '"near" OR "x"'
    assert match_expression("what was it?") is None


def test_lexical_strategy_reports_bm25_and_stemmed_matches(engine: MemoryEngine) -> None:
    _conversation(engine)
    found = _lexical(engine, "repaired bicycles")
    content, detail = found[0]
    assert content.startswith("Leo: I spent the weekend repairing my bicycle")
    assert detail["bm25"] > 0 and set(detail["matched_terms"]) == {"repairing", "bicycle"}
    assert 0 < detail["relevance"] < 1


def test_matched_words_are_marked_for_the_results_with_a_lexical_detail_only(engine: MemoryEngine,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _conversation(engine)
    asked: list[str] = []
    store = engine._store  # noqa: SLF001 - which memories are marked is what is under test
    marks = store.lexical_marks

    def spied(match: str, texts: dict[str, str]) -> dict[str, str]:
        asked.extend(texts)
        return marks(match, texts)

    monkeypatch.setattr(store, "lexical_marks", spied)
    results = engine.recall("repaired bicycles", preset="recommended", top_k=len(TURNS))
    lexical = {r.memory.id: d.fields for r in results for d in r.strategy_details if d.strategy.value == "lexical"}
    assert lexical and len(lexical) < len(results)  # some results came by similarity alone
    assert sorted(asked) == sorted(lexical)
    assert all("matched_terms" in fields for fields in lexical.values())
    bicycle = next(r.memory.id for r in results if r.memory.content.startswith("Leo: I spent the weekend"))
    assert set(lexical[bicycle]["matched_terms"]) == {"repairing", "bicycle"}


def test_window_finds_a_turn_by_its_neighbours_words_within_its_session(engine: MemoryEngine) -> None:
    _conversation(engine)
    found = dict(_lexical(engine, "golden retriever"))
    # "what breed?" says nothing of retrievers; its window (the turns around it) does.
    breed = found["Leo: Oh nice, what breed?"]
    assert breed["bm25"] == 0 and breed["window_bm25"] > 0
    # The bicycle session is another episode: no window crosses into it.
    assert not any(c.startswith("Leo: I spent the weekend") for c in found)


def test_windows_follow_forget_and_revise(engine: MemoryEngine) -> None:
    memories = _conversation(engine)
    engine.forget([memories[2].id])
    assert _lexical(engine, "retriever") == []
    engine.revise(memories[4].id, content="Maya: Did the gears work afterwards?")
    assert _lexical(engine, "brakes") == []
    assert {c for c, _ in _lexical(engine, "gears")} >= {"Maya: Did the gears work afterwards?"}


def test_an_older_store_gets_its_text_index_on_open(data_dir: Path, embedder: SentenceTransformerEmbedder) -> None:
    with MemoryEngine(data_dir, embedder=embedder) as engine:
        _conversation(engine)
    import sqlite3

    conn = sqlite3.connect(data_dir / "records.sqlite3")
    conn.execute("DELETE FROM memory_text")
    conn.execute("DELETE FROM meta WHERE key = 'fulltext_version'")
    conn.commit()
    conn.close()
    with MemoryEngine(data_dir, embedder=embedder) as engine:
        assert [c for c, _ in _lexical(engine, "bicycle", 1)] == ["Leo: I spent the weekend repairing my bicycle"]


def test_fusion_adds_evidence_from_several_strategies(engine: MemoryEngine) -> None:
    _conversation(engine)
    fused = engine.recall("which dog did Maya adopt", strategies=["similarity", "lexical"], top_k=12)
    best = fused[0]
    assert best.memory.content == "Maya: I finally adopted a dog from the shelter"
    fields = {k: v for d in best.strategy_details for k, v in d.fields.items()}
    assert {d.strategy.value for d in best.strategy_details} == {"similarity", "lexical"}
    # The fused score is the sum of the per-query z-scores (weights 1 without a preset): evidence adds.
    assert fields["z_lexical"] > 0 and fields["z_similarity"] > 0
    total = fields["z_similarity"] + fields["z_lexical"] + fields["z_lexical_window"]
    assert fields["fused"] == pytest.approx(total, abs=1e-3)
    assert [r.signals.relevance for r in fused] == sorted((r.signals.relevance for r in fused), reverse=True)


def test_causal_neighbours_must_match_the_cue_in_a_mixed_recall(engine: MemoryEngine) -> None:
    a = engine.remember("The launch was rushed to meet the conference date")
    b = engine.remember("Testing was skipped to save a week", edges=[f"{a.id}:caused_by"])
    c = engine.remember("The office plants were watered on Friday", edges=[f"{b.id}:related_to"])
    results = engine.recall("a rushed launch failed because testing was skipped",
                            strategies=["similarity", "causal"], top_k=3, scoring_weights="1:0:0:0")
    relevance = {r.memory.id: r.signals.relevance for r in results}
    assert relevance[c.id] < relevance[b.id]


def test_presets_and_their_errors(engine: MemoryEngine) -> None:
    _conversation(engine)
    results = engine.recall("golden retriever Biscuit", preset="recommended", top_k=3)
    assert results[0].memory.content.startswith("Maya: A golden retriever")
    with pytest.raises(InvalidRecallError, match="unknown preset"):
        engine.recall("x", preset="best-ever")
    with pytest.raises(InvalidRecallError, match="neighbour_weight"):
        engine.recall("x", preset="recommended", fusion={"neighbour_weight": 2})


def test_cli_recall_defaults_to_the_recommended_preset(data_dir: Path, embedder: SentenceTransformerEmbedder) -> None:
    with MemoryEngine(data_dir, embedder=embedder) as engine:
        _conversation(engine)
    result = CliRunner().invoke(main, ["--data-dir", str(data_dir), "recall", "golden retriever", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    import json

    top = json.loads(result.stdout)["results"][0]
    assert {d["strategy"] for d in top["strategy_details"]} == {"similarity", "lexical"}
    bad = CliRunner().invoke(main, ["--data-dir", str(data_dir), "recall", "x", "--preset", "nope"])
    assert bad.exit_code == 2 and "unknown preset" in bad.stderr


def _window_similarity(engine: MemoryEngine, cue: str, content: str) -> float:
    from engine import build_request

    frame = engine.fusion_frame(build_request(cue, preset="recommended", top_k=12))
    row = next(n for n, i in enumerate(frame.pool) if engine.get(i).content == content)
    return float(frame.raw[row, frame.signals.index("similarity_window")])


def test_window_similarity_reads_the_neighbours_and_follows_forget(engine: MemoryEngine) -> None:
    memories = _conversation(engine)
    reply = "Maya: Did the brakes work afterwards?"
    # The reply says nothing of bicycles; its window (the repair before it) does.
    before = _window_similarity(engine, "repairing a bicycle", reply)
    own = float(engine.embedder.encode([reply])[0] @ engine.embedder.encode(["repairing a bicycle"])[0])
    assert before > own
    engine.forget([memories[3].id])  # the repair turn: the window must not remember it
    assert _window_similarity(engine, "repairing a bicycle", reply) < before
    results = engine.recall("repairing a bicycle", preset="recommended", top_k=3)
    sim = next(d for d in results[0].strategy_details if d.strategy.value == "similarity")
    assert "window_similarity" in sim.fields and "z_similarity_window" in sim.fields


def test_fusion_frame_scores_the_way_recall_ranks(engine: MemoryEngine) -> None:
    from engine import build_request
    from engine.recall.presets import PRESETS

    _conversation(engine)
    request = build_request("which cafe opened and what did they roast", preset="recommended", top_k=12,
                            scoring_weights="1:0:0:0")
    frame = engine.fusion_frame(request)
    ranked = [frame.pool[n] for n in frame.ranked(PRESETS["recommended"].fusion, 12)]
    assert [r.memory.id for r in engine.retrieve(request)] == ranked
    assert "similarity_window" in frame.signals and frame.z.shape == (len(frame.pool), len(frame.signals))


def test_entity_named_favours_what_the_named_speaker_said(engine: MemoryEngine) -> None:
    from engine import build_request

    items = [
        {"content": text, "entity_id": text.split(":")[0].lower(), "context": {"conversation": "c1", "session": s}}
        for text, s in TURNS
    ]
    memories = engine.remember_many(items)
    leo = {m.id for m in memories if m.entity_id == "leo"}
    cue = "What did Leo do at the weekend?"
    request = build_request(cue, preset="recommended", top_k=12, scoring_weights="1:0:0:0")
    frame = engine.fusion_frame(request)
    named = frame.raw[:, frame.signals.index("entity_named")]
    assert {i for i, v in zip(frame.pool, named, strict=True) if v == 1.0} == leo & set(frame.pool)
    assert set(named.tolist()) == {0.0, 1.0}
    top = engine.recall(cue, preset="recommended", top_k=3)
    assert top[0].memory.entity_id == "leo"
    assert all(d.fields["z_entity_named"] > 0 for d in top[0].strategy_details)
    # Without the cue naming anyone the signal says nothing (all zero, so every z-score is 0).
    quiet = engine.fusion_frame(build_request("the weekend", preset="recommended", top_k=12))
    assert not quiet.raw[:, quiet.signals.index("entity_named")].any()
