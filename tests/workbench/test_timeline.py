"""Timeline: entities over time, time-range selection, and the details and edges of a selected memory."""

from __future__ import annotations

import json
from datetime import date

from streamlit.testing.v1 import AppTest

from tests.workbench.conftest import XSS, MakeApp, Store
from tests.workbench.helpers import table


def figure(at: AppTest) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def points(at: AppTest) -> list[str]:
    """Memory ids plotted on the timeline."""
    return [c[0] for trace in figure(at)["data"] for c in trace["customdata"]]


def test_defaults_to_the_most_recently_active_entities(
    make_app: MakeApp, seeded_store: Store
) -> None:
    path, ids = seeded_store
    at = make_app(path, "timeline")
    assert at.multiselect(key="timeline_entities").value == ["atlas-launch", "cloudvault", "globex"]
    assert at.selectbox(key="timeline_memory").value == ids["xss"]  # the newest memory
    assert set(points(at)) >= {ids["atlas_plan"], ids["cv_dpa"], ids["globex_lost"]}


def test_pick_entities_and_a_time_range(
    make_app: MakeApp, seeded_store: Store
) -> None:
    path, ids = seeded_store
    at = make_app(path, "timeline")
    at.multiselect(key="timeline_entities").set_value(["ledgerly"]).run()
    ledgerly = {ids[k] for k in ("ledgerly_creds", "ledgerly_outage", "ledgerly_storm", "ledgerly_pm")}
    assert set(points(at)) == ledgerly
    at.date_input(key="timeline_dates").set_value((date(2026, 1, 1), date(2026, 1, 31))).run()
    assert set(points(at)) == {ids["ledgerly_creds"], ids["ledgerly_outage"]}
    assert not at.exception and not at.error
    # importance is size, kind is colour (one trace per kind)
    traces = [t for t in figure(at)["data"] if t.get("showlegend") is not False]  # not the selection ring
    assert {t["name"] for t in traces} == {"episode"}
    assert sorted(traces[0]["marker"]["size"]) == [8 + 30 * 0.5, 8 + 30 * 0.9]


def test_selecting_a_memory_shows_its_details_and_edges(
    make_app: MakeApp, seeded_store: Store
) -> None:
    path, ids = seeded_store
    at = make_app(path, "timeline")
    at.multiselect(key="timeline_entities").set_value(["ledgerly"]).run()
    at.selectbox(key="timeline_memory").set_value(ids["ledgerly_outage"]).run()
    assert any("could not reach the database" in t.value for t in at.text)
    edges = table(at, "timeline_edges")
    assert list(edges["type"]) == ["caused_by"]
    assert list(edges["other_id"]) == [ids["ledgerly_creds"]]
    fields = table(at, "timeline_fields")
    assert dict(zip(fields["field"], fields["value"], strict=True))["entity_id"] == "ledgerly"


def test_a_click_on_the_chart_selects_the_memory(
    make_app: MakeApp, seeded_store: Store
) -> None:
    path, ids = seeded_store
    at = make_app(path, "timeline")
    at.session_state["timeline_chart"] = {
        "selection": {"points": [{"customdata": [ids["atlas_crash"], "", "", 0.9]}], "point_indices": [0],
                      "box": [], "lasso": []}
    }
    at.run()
    assert at.selectbox(key="timeline_memory").value == ids["atlas_crash"]
    assert any("checkout crashed" in t.value for t in at.text)


def test_untrusted_content_reaches_the_chart_escaped(
    make_app: MakeApp, seeded_store: Store
) -> None:
    path, _ = seeded_store
    at = make_app(path, "timeline")
    spec = at.get("plotly_chart")[0].proto.spec
    assert "&lt;img src=x onerror=alert(1)&gt;" in spec
    assert XSS not in spec
    assert any(t.value == XSS for t in at.text)  # the details show it verbatim, as text
