"""The calibration page in a real headless Chromium (the fixtures and checks of tests/workbench/test_browser.py):
a cue's pool on the calibration curve, and the ranking moving with a weight slider."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.workbench.test_browser import (  # noqa: F401 (fixtures)
    RUN_TIMEOUT_MS,
    Browser,
    Server,
    assert_healthy,
    browser,
    chromium,
    open_page,
    server,
    settle,
)

pytestmark = pytest.mark.browser


def _column(page: Page, name: str) -> list[str]:
    """One column of the ranking table, top row first (the grid's accessible copy of its cells)."""
    page.locator(".st-key-cal_ranking table td").first.wait_for(state="attached", timeout=RUN_TIMEOUT_MS)
    return list(page.evaluate(
        """(name) => { const t = document.querySelector('.st-key-cal_ranking table');
                   const at = [...t.querySelectorAll('th')].map(x => x.textContent.trim()).indexOf(name);
                   return [...t.querySelectorAll('tbody tr')]
                     .map(r => [...r.querySelectorAll('td, th')][at]).filter(c => c !== undefined)
                     .map(c => c.textContent.trim()); }""", name))


def test_calibration_page(browser: Browser, server: Server) -> None:  # noqa: F811
    page = open_page(browser, server, "calibration", "Type a cue in the sidebar")
    cue = page.get_by_label("Cue", exact=True)
    cue.fill("why did the Atlas launch crash")
    cue.press("Enter")
    page.get_by_text("Fused evidence → calibrated relevance").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    # the curve and the pool's points are drawn
    page.locator(".js-plotly-plot").first.wait_for(timeout=RUN_TIMEOUT_MS)
    traces = page.evaluate("() => document.querySelector('.js-plotly-plot').data.map(t => t.name)")
    assert traces[0] == "calibration" and "in top_k" in traces
    assert "Atlas" in _column(page, "content")[0]
    assert float(_column(page, "relevance part")[0]) > 0
    assert_healthy(browser, "calibration")
    # relevance to 0: the most important memory leads instead (the ranking follows the slider)
    slider = page.locator('.st-key-cal_w_relevance input[type="range"]')
    slider.focus()
    for _ in range(10):
        slider.press("ArrowLeft")
    page.wait_for_function("() => location.search.includes('relevance=0')", timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert float(slider.input_value()) == 0.0
    # once every shown relevance part is 0, the importance parts (recency is 0 here) are the score: in order
    importance = page.wait_for_function("""() => { const t = document.querySelector('.st-key-cal_ranking table');
        if (!t) { return null; }
        const heads = [...t.querySelectorAll('th')].map(x => x.textContent.trim());
        const rows = [...t.querySelectorAll('tbody tr')].map(r => [...r.querySelectorAll('td, th')]);
        const of = (name) => rows.map(r => r[heads.indexOf(name)]).filter(c => c !== undefined)
                                 .map(c => Number(c.textContent));
        const relevance = of('relevance part');
        return relevance.length >= 5 && relevance.every(x => x === 0) ? of('importance part') : null;
    }""", timeout=RUN_TIMEOUT_MS).json_value()
    assert len(importance) >= 5 and importance == sorted(importance, reverse=True)
    assert_healthy(browser, "calibration_no_relevance")
