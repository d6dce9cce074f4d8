"""The Insights page in a real headless Chromium (the checks of tests/workbench/test_browser.py), over a store of
its own: three topics and a contradicting pair. Reflect shows each insight with its sources; confirming the
candidate makes the recall lab mark the two results that contradict each other."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import sync_playwright

from engine import MemoryEngine
from engine.embedding import Embedder
from tests.reflect.test_reflect import TOPICS
from tests.workbench.test_browser import (  # noqa: F401 (the chromium fixture)
    CHROMIUM_ARGS,
    DESKTOP,
    RUN_TIMEOUT_MS,
    Browser,
    Server,
    assert_healthy,
    chromium,
    open_page,
    settle,
    watch,
    workbench_app,
)

pytestmark = pytest.mark.browser
OLDER = "The Helix firmware update was approved by QA."
NEWER = "The Helix firmware update was not approved by QA."


@pytest.fixture(scope="module")
def server(chromium: str, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:  # noqa: F811
    store = tmp_path_factory.mktemp("insights") / "data"
    with MemoryEngine(store, embedder=embedder) as engine:
        for topic, texts in TOPICS.items():
            for text in texts:
                engine.remember(text, entity_id=topic)
        ids = {key: engine.remember(text, entity_id="helix").id for key, text in (("older", OLDER), ("newer", NEWER))}
    with workbench_app(store, tmp_path_factory.getbasetemp() / "streamlit-insights.log") as (url, log_path):
        yield Server(url, "", log_path, ids)


@pytest.fixture(scope="module")
def browser(chromium: str, server: Server) -> Iterator[Browser]:  # noqa: F811
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        state = Browser(instance.new_page(viewport=DESKTOP))
        watch(state, state.page, server)
        yield state
        instance.close()


def test_insights_with_their_sources_and_a_contradiction_marked(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, "insights", "Contradictions to review")
    assert page.get_by_text("No insights yet").is_visible()
    page.get_by_role("button", name="Reflect now").click()
    page.get_by_text("new insight(s) from").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    first = page.locator(".st-key-ins_0")
    assert "memories about" in first.inner_text()
    first.get_by_text("Sources", exact=True).click()
    sources = page.locator(".st-key-ins_sources_0")
    sources.wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    # the candidate found on write, confirmed with its button
    assert page.get_by_text(f"newer: {NEWER}").is_visible()
    assert_healthy(browser, "insights")
    page.get_by_role("button", name="Contradiction", exact=True).click()
    page.get_by_text(f"newer: {NEWER}").wait_for(state="detached", timeout=RUN_TIMEOUT_MS)
    settle(page)
    page = open_page(browser, server, "", "Type a cue above")
    cue = page.get_by_label("Cue", exact=True)
    cue.fill("Was the Helix firmware update approved by QA?")
    cue.press("Enter")
    page.get_by_text("These results contradict each other").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    warning = page.locator(".st-key-lab_contradictions").inner_text()
    assert "#1 and #2" in warning  # the two sides are the two best matches of that cue
    assert_healthy(browser, "recall_lab_contradictions")
