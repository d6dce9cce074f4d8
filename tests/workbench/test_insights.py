"""Insights page: reflect on a store, each insight with its sources; contradiction candidates take a verdict,
and the recall lab marks a confirmed pair found together."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.reflect.test_reflect import TOPICS
from tests.workbench.conftest import MakeApp, Store, open_engine
from tests.workbench.helpers import plain, recall, table

OLDER = "The Helix firmware update was approved by QA."
NEWER = "The Helix firmware update was not approved by QA."


def success(at: AppTest) -> str:
    return " ".join(plain(str(s.value)) for s in at.success)


def texts(at: AppTest) -> list[str]:
    return [str(t.value) for t in at.text]


def test_reflect_shows_each_insight_with_its_sources(make_app: MakeApp, scratch_store: Store) -> None:
    path, _ = scratch_store
    engine = open_engine(path)
    for topic, memories in TOPICS.items():
        for text in memories:
            engine.remember(text, entity_id=f"ui-{topic}")
    at = make_app(path, "insights")
    at.selectbox(key="ins_scope").set_value("ui-garden").run()
    at.button(key="ins_reflect").click().run()
    assert not at.exception
    assert "1 new insight(s) from 4 memories" in success(at)
    insight = at.get_by_key("ins_0")
    assert insight.text[0].value.startswith("4 memories about ui-garden")
    sources = table(at, "ins_sources_0")
    assert sorted(sources["content"]) == sorted(TOPICS["garden"])
    at.button(key="ins_reflect").click().run()
    assert "0 new insight(s) from 4 memories in 1 topic(s); 1 unchanged" in success(at)


def test_a_confirmed_contradiction_is_marked_in_the_recall_lab(make_app: MakeApp, scratch_store: Store) -> None:
    path, _ = scratch_store
    engine = open_engine(path)
    older = engine.remember(OLDER, entity_id="helix-thermostat")
    newer = engine.remember(NEWER, entity_id="helix-thermostat")
    at = make_app(path, "insights")
    shown = texts(at)
    assert f"older: {OLDER}" in shown and f"newer: {NEWER}" in shown
    button = next(b for b in at.button if b.key and b.key.endswith("_contradiction"))
    button.click().run()
    assert f"newer: {NEWER}" not in texts(at)  # reviewed: no longer pending
    contradicts = {(e.source, e.target) for e in engine.edges_of(older.id) if e.type.value == "contradicts"}
    assert contradicts == {(older.id, newer.id), (newer.id, older.id)}
    at.switch_page("screens/recall_lab.py").run()
    at = recall(at, "Was the Helix firmware update approved by QA?", lab_top_k=5)
    warning = at.get_by_key("lab_contradictions").warning[0].value
    ranks = table(at, "lab_table")
    marked = ranks[ranks["contradicts"] != ""]
    assert set(marked["id"]) == {older.id, newer.id}
    assert all(f"#{int(r)}" in warning for r in marked["rank"])
