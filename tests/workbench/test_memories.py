"""Memories: filter the table, add a memory with edges, revise one, forget one after a confirmation."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.errors import MemoryNotFoundError
from engine.models import MemoryKind
from tests.workbench.conftest import MakeApp, Store, open_engine
from tests.workbench.helpers import plain, table


def shown_ids(at: AppTest) -> list[str]:
    return list(at.dataframe[0].value["id"])  # the memories table is the page's only top-level dataframe


@pytest.fixture
def page(make_app: MakeApp, scratch_store: Store) -> tuple[AppTest, dict]:
    path, ids = scratch_store
    return make_app(path, "memories"), ids


def test_filters(page: tuple[AppTest, dict]) -> None:
    at, ids = page
    assert len(shown_ids(at)) == 24
    at.selectbox(key="mem_entity").set_value("ledgerly").run()
    ledgerly = ("ledgerly_creds", "ledgerly_outage", "ledgerly_storm", "ledgerly_pm")
    assert set(shown_ids(at)) == {ids[k] for k in ledgerly}
    at.slider(key="mem_min_importance").set_value(0.8).run()
    assert set(shown_ids(at)) == {ids["ledgerly_outage"], ids["ledgerly_pm"]}
    at.selectbox(key="mem_entity").set_value("(all)")
    at.slider(key="mem_min_importance").set_value(0.0)
    at.selectbox(key="mem_kind").set_value("insight").run()
    assert shown_ids(at) == [ids["lesson"]]
    at.selectbox(key="mem_kind").set_value("(all)")
    at.date_input(key="mem_dates").set_value((date(2026, 7, 1),)).run()
    assert shown_ids(at) == [ids["atlas_relaunch"]]
    assert not at.exception and not at.error


def test_add_a_memory_with_edges(page: tuple[AppTest, dict], scratch_store: Store) -> None:
    at, ids = page
    at.text_area(key="mem_add_content").set_value("Atlas support hired two extra agents after the refunds.")
    at.text_input(key="mem_add_entity").set_value("atlas-launch")
    at.multiselect(key="mem_add_targets").set_value([ids["atlas_refunds"], ids["atlas_crash"]])
    at.selectbox(key="mem_add_edge_type").set_value("caused_by")
    at.slider(key="mem_add_confidence").set_value(0.8)
    at.button(key="mem_add_submit").click().run()
    assert not at.exception and not at.error
    # two edges at once: nothing is stored until the list of targets is confirmed
    assert "2 edges" in at.warning[0].value and not at.success
    listed = [t.value for t in at.text if t.value.startswith("→")]
    assert [line[-8:] for line in listed] == [ids["atlas_refunds"][-8:], ids["atlas_crash"][-8:]]
    assert len(shown_ids(at)) == 24
    at.button(key="mem_add_confirm").click().run()
    assert "Added memory" in at.success[0].value
    new_id = at.selectbox(key="mem_selected").value
    assert new_id not in ids.values()
    assert shown_ids(at)[0] == new_id  # newest first
    edges = table(at, "mem_edges")
    assert set(edges["other_id"]) == {ids["atlas_refunds"], ids["atlas_crash"]}
    assert set(edges["type"]) == {"caused_by"} and set(edges["confidence"]) == {0.8}
    stored = open_engine(scratch_store[0]).get(new_id)
    assert stored.entity_id == "atlas-launch" and stored.content.startswith("Atlas support hired")
    assert at.text_area(key="mem_add_content").value == ""  # the form is cleared for the next one


def test_going_back_from_the_edge_confirmation_adds_nothing(page: tuple[AppTest, dict]) -> None:
    at, ids = page
    at.text_area(key="mem_add_content").set_value("A memory that should not be stored.")
    at.multiselect(key="mem_add_targets").set_value([ids["helix_bug"], ids["helix_recall"], ids["helix_release"]])
    at.button(key="mem_add_submit").click().run()
    assert "3 edges" in at.warning[0].value
    at.button(key="mem_add_back").click().run()
    assert not at.exception and not at.error and not at.success and not at.warning
    assert len(shown_ids(at)) == 24
    assert at.text_area(key="mem_add_content").value == "A memory that should not be stored."  # kept to edit
    assert len(at.multiselect(key="mem_add_targets").value) == 3


def test_adding_invalid_context_is_a_readable_error(page: tuple[AppTest, dict]) -> None:
    at, _ = page
    at.text_area(key="mem_add_content").set_value("Something happened.")
    at.text_input(key="mem_add_context").set_value("{not json")
    at.button(key="mem_add_submit").click().run()
    assert not at.exception
    assert "context is not valid JSON" in plain(at.error[0].value)
    assert len(shown_ids(at)) == 24
    assert at.text_area(key="mem_add_content").value == "Something happened."  # nothing lost


def test_revise_a_memory(page: tuple[AppTest, dict], scratch_store: Store) -> None:
    at, ids = page
    engine = open_engine(scratch_store[0])
    at.selectbox(key="mem_selected").set_value(ids["acme_won"]).run()
    assert (at.text_area(key="mem_revise_content").value or "").startswith("Acme Corp signed")
    at.text_area(key="mem_revise_content").set_value("Acme Corp signed a three-year contract; the deal was won.")
    at.slider(key="mem_revise_importance").set_value(0.95)
    at.button(key="mem_revise_submit").click().run()
    assert not at.exception and not at.error
    assert "Revised" in at.success[0].value
    revised = engine.get(ids["acme_won"])
    assert revised.content.startswith("Acme Corp signed a three-year") and revised.importance == 0.95
    assert len(engine.list_memories(kind=MemoryKind.REVISION)) == 1
    assert (at.text_area(key="mem_revise_content").value or "").startswith("Acme Corp signed a three-year")


def test_forget_asks_for_a_confirmation(page: tuple[AppTest, dict], scratch_store: Store) -> None:
    at, ids = page
    engine = open_engine(scratch_store[0])
    target = ids["globex_lost"]
    at.selectbox(key="mem_selected").set_value(target).run()
    at.button(key="mem_forget").click().run()
    assert "cannot be undone" in at.warning[0].value
    assert engine.get(target)  # nothing forgotten yet
    at.button(key="mem_forget_cancel").click().run()
    assert not at.warning and engine.get(target)

    at.button(key="mem_forget").click().run()
    at.button(key="mem_forget_confirm").click().run()
    assert not at.exception and not at.error
    assert "Forgot" in at.success[0].value
    with pytest.raises(MemoryNotFoundError):
        engine.get(target)
    assert target not in shown_ids(at)
    assert len(shown_ids(at)) == 23


def test_a_row_click_selects_the_memory(page: tuple[AppTest, dict]) -> None:
    at, _ = page
    row = 3
    at.session_state["mem_table_grid"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert at.selectbox(key="mem_selected").value == shown_ids(at)[row]


def test_add_a_memory_to_an_empty_store(make_app: MakeApp, empty_store: Path) -> None:
    at = make_app(empty_store, "memories")
    at.text_area(key="mem_add_content").set_value("The very first memory.")
    at.button(key="mem_add_submit").click().run()
    assert not at.exception and not at.error
    assert len(shown_ids(at)) == 1


def test_search_the_content_and_one_match_reads_right(page: tuple[AppTest, dict]) -> None:
    at, ids = page
    at.text_input(key="mem_search").set_value("THERMOSTATS").run()  # case is ignored
    assert set(shown_ids(at)) == {ids["helix_bug"], ids["helix_recall"]}
    assert at.query_params.get("search") in (["THERMOSTATS"], "THERMOSTATS")
    at.text_input(key="mem_search").set_value("retry storm").run()
    assert shown_ids(at) == [ids["ledgerly_storm"]]
    caption = next(c.value for c in at.caption if "match" in c.value)
    assert caption.startswith("1 match ") and "matches" not in caption


def test_the_history_tab_lists_earlier_states(page: tuple[AppTest, dict], scratch_store: Store) -> None:
    at, ids = page
    at.selectbox(key="mem_selected").set_value(ids["acme_won"]).run()
    assert "Never revised" in " ".join(c.value for c in at.caption)
    open_engine(scratch_store[0]).revise(ids["acme_won"], content="Acme Corp signed a three-year contract.")
    at.run()
    history = table(at, "mem_history")
    assert list(history["state"]) == ["current", "revision 1"]
    assert history["content"].iloc[1].startswith("Acme Corp signed a two-year contract")


def test_a_link_to_a_memory_opens_it_even_off_the_page(make_app: MakeApp, scratch_store: Store,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path, ids = scratch_store
    monkeypatch.setenv("HEBBS_DATA_DIR", str(path))
    from tests.workbench.conftest import APP, APP_TIMEOUT

    at = AppTest.from_file(str(APP), default_timeout=APP_TIMEOUT)
    at.query_params.update({"memory": ids["atlas_plan"], "rows": "10"})  # the plan is not among the newest 10
    at.switch_page("screens/memories.py").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="mem_selected").value == ids["atlas_plan"]
    fields = dict(zip(*table(at, "mem_fields").to_dict("list").values(), strict=True))
    assert "+00:00" not in fields["created_at"]
