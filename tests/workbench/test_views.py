"""The view-model helpers: rankings, escaping, the graph page, the summary."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from engine import Edge, EdgeType, Memory, MemoryEngine, RecallResult, ScoringWeights
from engine.api.responses import NeighbourNode
from engine.errors import MemoryNotFoundError, ValidationError
from engine.models import MemoryKind, Signals, Strategy, StrategyDetail
from tests.workbench.conftest import Store, open_engine
from workbench import graph, views

XSS = "<img src=x onerror=alert(1)>"
NOW = datetime(2026, 3, 1, tzinfo=UTC)


def memory(memory_id: str, content: str = "something", importance: float = 0.5) -> Memory:
    return Memory(memory_id, content, importance, {}, "e", MemoryKind.EPISODE, NOW, NOW, None, 0)


def result(memory_id: str, relevance: float, importance: float, content: str = "something") -> RecallResult:
    signals = Signals(relevance, 0.0, importance, 0.0)
    detail = StrategyDetail(Strategy.SIMILARITY, relevance, {"distance": 1 - relevance})
    return RecallResult(memory(memory_id, content, importance), 0.0, signals, (detail,))


def test_rank_moves_and_arrows() -> None:
    results = [result("a", 0.9, 0.1), result("b", 0.5, 0.9), result("c", 0.1, 0.5)]
    baseline = MemoryEngine.rescore(results, ScoringWeights(1, 0, 0, 0))
    current = MemoryEngine.rescore(results, ScoringWeights(0, 0, 1, 0))
    assert [r.memory.id for r in current] == ["b", "c", "a"]
    moves = views.rank_moves(baseline, current)
    assert moves == {"b": 1, "c": 1, "a": -2}
    assert [views.arrow(moves[i]) for i in "bca"] == ["▲ 1", "▲ 1", "▼ 2"]
    assert views.arrow(0) == "="
    frame = views.results_frame(current, moves)
    assert list(frame["move"]) == ["▲ 1", "▲ 1", "▼ 2"]
    assert list(frame.columns[:2]) == ["rank", "score"]  # what ranks comes first, before the wide content


def test_contributions_add_up_to_the_score() -> None:
    weights = ScoringWeights(0.3, 0.5, 0.2, 0.0)
    ranked = MemoryEngine.rescore([result("a", 0.9, 0.1), result("b", 0.5, 0.9)], weights)
    frame = views.contributions_frame(ranked, weights)
    parts = frame[list(views.SIGNALS)].sum(axis=1)
    assert list(parts) == pytest.approx(list(frame["score"]))
    figure = views.contributions_figure(ranked, weights)
    assert [t.name for t in figure.data] == list(views.SIGNALS) and figure.layout.barmode == "stack"


def test_details_follow_the_ranking() -> None:
    results = [result("a", 0.9, 0.1), result("b", 0.5, 0.9)]
    table = views.details_table(results)
    ordered = views.details_in_rank_order(table, ["b", "a"])
    assert list(ordered["id"]) == ["b", "a"] and list(ordered["#"]) == [1, 2]


def test_markdown_and_plotly_escaping() -> None:
    nasty = "![x](http://example.com/p.png) **b** :red[x] $x$ <b>html</b> [link](javascript:alert(1))"
    escaped = views.md_escape(nasty)
    assert re.sub(r"\\(.)", r"\1", escaped) == nasty  # reads exactly as typed
    assert not re.search(r"(?<!\\)[\[\]()*!:$<>]", escaped)  # every markdown-special character escaped
    assert views.plotly_text(XSS) == "&lt;img src=x onerror=alert(1)&gt;"
    assert "<img" not in views.hover_text(XSS)


def neighbourhood() -> graph.Neighbourhood:
    seed, other = memory("s", XSS + ' & "quotes" </script><script>alert(2)</script>'), memory("o", "plain")
    nb = graph.Neighbourhood("s")
    nb.nodes["s"] = NeighbourNode(seed, 0, ("s",), None, None)
    nb.nodes["o"] = NeighbourNode(other, 1, ("s", "o"), "caused_by", "out")
    nb.edges.append(Edge("o", "s", EdgeType.CAUSED_BY, 0.9))
    return nb


def test_graph_page_escapes_every_text_and_needs_no_network() -> None:
    page = graph.graph_html(neighbourhood(), ("s", "o"))
    assert graph.external_resources(page) == []
    assert "<img" not in page
    assert page.count("</script>") == 2  # the two scripts of the page: content cannot close one early
    data = re.search(r"var rawNodes = (.*);\n", page)
    assert data is not None and "<" not in data.group(1)
    nodes = json.loads(data.group(1))
    seed = next(n for n in nodes if n["id"] == "s")
    assert seed["label"] == "&lt;img src=x onerror=alert(1)…"  # short (cut to LABEL_CHARS), escaped
    assert seed["title"].startswith("&lt;img src=x onerror=alert(1)&gt;")
    assert "<" not in seed["label"] + seed["title"]
    edge_data = re.search(r"var rawEdges = (.*);\n", page)
    assert edge_data is not None
    edges = json.loads(edge_data.group(1))
    assert edges[0]["width"] == 5  # on the highlighted path
    assert edges[0]["color"]["color"] == graph.EDGE_COLOURS["caused_by"]


def test_external_resources_are_detected() -> None:
    assert graph.external_resources('<script src="https://cdn.example.com/x.js"></script>')
    assert graph.external_resources("<link rel=stylesheet href=//cdn.example.com/x.css>")
    assert not graph.external_resources('<script>var u = "https://example.com";</script>')


def test_summary_dict_takes_any_shape() -> None:
    @dataclass
    class Summary:
        documents: int = 2
        skipped: list[str] = field(default_factory=lambda: ["a.txt"])

    class WithToDict:
        def to_dict(self) -> dict:
            return {"documents": 3, "when": NOW}

    assert views.summary_dict(Summary()) == {"documents": 2, "skipped": ["a.txt"]}
    assert views.summary_dict(WithToDict()) == {"documents": 3, "when": str(NOW)}
    assert views.summary_dict({"documents": 1}) == {"documents": 1}


def test_the_facade_reads_the_analogies_page_uses(scratch_store: Store) -> None:
    path, ids = scratch_store
    engine = open_engine(path)
    stored = engine.structure_of(ids["helix_release"])  # "released without QA sign-off to meet the deadline"
    assert "act:start" in stored["features"] and stored["graph"]["events"]
    cue = engine.analyze("We skipped testing to hit the deadline and the launch failed.")
    assert {"act:omit", "val:failure"} <= set(cue["features"])
    with pytest.raises(MemoryNotFoundError):
        engine.structure_of("no-such-id")
    with pytest.raises(ValidationError):
        engine.analyze("   ")


def test_a_larger_graph_labels_its_best_connected_memories() -> None:
    nb = graph.Neighbourhood("s")
    nb.nodes["s"] = NeighbourNode(memory("s", "seed"), 0, ("s",), None, None)
    for i in range(12):  # a hub h0 with many edges, and leaves
        key = f"h{i}"
        nb.nodes[key] = NeighbourNode(memory(key, f"memory {i}"), 1, ("s", key), "caused_by", "out")
    for i in range(1, 12):
        nb.edges.append(Edge(f"h{i}", "h0", EdgeType.CAUSED_BY, 0.9))
    nb.edges.append(Edge("h0", "s", EdgeType.CAUSED_BY, 0.9))
    nb.edges.append(Edge("h1", "s", EdgeType.RELATED_TO, 0.5))
    assert graph.best_connected(nb, 1) == {"h0"}
    assert graph.best_connected(nb, 2) == {"h0", "s"}  # a tie (two edges each): nearer the seed first
    page = graph.graph_html(nb)
    nodes = {n["id"]: n for n in json.loads(re.search(r"var rawNodes = (.*);\n", page).group(1))}  # type: ignore[union-attr]
    assert nodes["h0"]["alwaysLabel"] and nodes["s"]["alwaysLabel"]
    assert not nodes["h7"]["alwaysLabel"]  # a leaf: labelled on zoom or hover only


def test_sources_name_the_document_or_the_conversation() -> None:
    doc = dataclasses.replace(memory("d", "Atlas postmortem text"), kind=MemoryKind.DOCUMENT,
                              context={"title": "Atlas postmortem"})
    prop = dataclasses.replace(memory("p", "The launch skipped load tests."), kind=MemoryKind.PROPOSITION,
                               context={"title": "Atlas postmortem"})
    said = dataclasses.replace(memory("m", "I think we shipped too early"),
                               context={"format": "conversation", "title": "Team chat", "conversation": "c1",
                                        "session": 2, "speaker": "Caroline"})
    assert views.source_of(prop, doc) == views.Source("document “Atlas postmortem”", "memories?memory=d")
    assert views.source_of(said).label == "conversation “Team chat”, session 2, said by Caroline"
    assert views.source_of(memory("x", "typed in")).label == "added directly (episode)"


def test_example_cues_come_from_the_data() -> None:
    titled = dataclasses.replace(memory("d", "x"), context={"title": "Q3 planning notes"}, entity_id=None)
    with_entity = dataclasses.replace(memory("e", "y"), entity_id="acme-corp")
    assert views.example_cues([titled, with_entity, with_entity]) == ["Q3 planning notes",
                                                                        "What happened with acme-corp?"]


def test_fields_read_as_text_not_python() -> None:
    m = dataclasses.replace(memory("a", "z"), context={"source": "call", "n": 2})
    fields = dict(zip(*views.memory_fields_frame(m).to_dict("list").values(), strict=True))
    assert fields["context"] == '{"source": "call", "n": 2}'
    assert "+00:00" not in fields["created_at"] and fields["created_at"].endswith("UTC")
    assert fields["kind"] == "episode"
