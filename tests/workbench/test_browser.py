"""End to end in a real headless Chromium: the workbench over an indexed store, every page, untrusted content.

Chromium is the Debian package (`scripts/install-browser.sh`), driven by Playwright through
`executable_path`; no browser is ever downloaded. Screenshots go to artifacts/screenshots/ (git-ignored).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Page, Request, Response, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from engine import MemoryEngine
from engine.embedding import Embedder
from tests.workbench.conftest import APP, XSS, Store

pytestmark = pytest.mark.browser

ROOT = APP.parents[1]
SCREENSHOTS = ROOT / "docs" / "workbench"  # docs/workbench.md shows them: they stay current with every run
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
START_TIMEOUT = 120  # seconds for the server to answer its health check
RUN_TIMEOUT_MS = 120_000  # a page run may load the embedding model
DOWNLOAD_ATTEMPT_MS = 30_000  # a table's CSV download, made on the click (a small frame): one attempt
# Opened at a sub-page URL, Streamlit's own front end first asks `/<page>/_stcore/health` and `host-config`
# whether the app is served under that path; the server answers 404 on purpose and the front end falls
# back to `/` (streamlit/streamlit#7074). Those two probes are expected; any other failed response is not.
BASE_PATH_PROBE = re.compile(r"^/[^/?]+/_stcore/(health|host-config)$")


def chromium_path() -> str:
    """The Debian chromium; skip (or fail, when CI requires the browser) if it is missing."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        message = "chromium is not installed (run scripts/install-browser.sh)"
        if os.environ.get("HEBBS_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    xss_id: str
    log: Path  # the server's stdout and stderr
    ids: dict[str, str] = field(default_factory=dict)  # the seed memories' ids by key


FOLLOW_UPS = 6


def add_follow_ups(store: Path, ids: dict[str, str], embedder: Embedder) -> dict[str, str]:
    """Follow-ups of the Atlas crash (each caused by it), so that the graph around it passes ten memories and
    the crash is its best-connected memory. Older than the untrusted memory, which stays the newest."""
    engine = MemoryEngine(store, embedder=embedder)
    try:
        added = {}
        for i in range(FOLLOW_UPS):
            memory = engine.remember(f"Atlas follow-up {i + 1}: action item {i + 1} from the checkout crash review.",
                                     entity_id="atlas-launch", importance=0.4,
                                     context={"source": "review", "item": i + 1},
                                     created_at=f"2026-02-{11 + i:02d}T12:00:00Z",
                                     edges=[(ids["atlas_crash"], "caused_by", 0.8)])
            added[f"follow_up_{i + 1}"] = memory.id
        return added
    finally:
        engine.close()


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_path()


@pytest.fixture(scope="module")
def server(chromium: str, sample_store: Store, embedder: Embedder,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`streamlit run workbench/app.py` on a free loopback port, over a copy of the seeded store."""
    path, ids = sample_store
    store = tmp_path_factory.mktemp("browser") / "data"
    shutil.copytree(path, store)  # the app gets its own copy: one process per embedded Chroma directory
    ids = {**ids, **add_follow_ups(store, ids, embedder)}
    with workbench_app(store, tmp_path_factory.getbasetemp() / "streamlit.log") as (url, log_path):
        yield Server(url, ids["xss"], log_path, ids)


@contextmanager
def workbench_app(store: Path, log_path: Path) -> Iterator[tuple[str, Path]]:
    """`streamlit run workbench/app.py` over `store` on a free loopback port, its output in `log_path`: yields
    (url, log path) once the app answers its health check; stopped on exit."""
    port = free_port()
    with log_path.open("w", buffering=1) as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=ROOT, env={**os.environ, "HEBBS_DATA_DIR": str(store)}, stdout=log, stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                        if response.read().decode().strip() == "ok":
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"streamlit did not start (exit code {proc.poll()}); see {log_path}")
                time.sleep(0.3)
            yield url, log_path
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()


@dataclass
class Browser:
    page: Page
    dialogs: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # responses of 400 and above (e.g. a 404 for a sub-page)


@pytest.fixture(scope="module")
def browser(chromium: str, server: Server) -> Iterator[Browser]:
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        state = Browser(instance.new_page(viewport=DESKTOP))
        watch(state, state.page, server)
        yield state
        instance.close()


@pytest.fixture(scope="module")
def phone(browser: Browser, server: Server) -> Iterator[Browser]:
    """A phone-sized tab (390x844, touch) in the same browser, watched the same way."""
    instance = browser.page.context.browser
    assert instance is not None
    context = instance.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    state = Browser(context.new_page())
    watch(state, state.page, server)
    yield state
    context.close()


def watch(state: Browser, page: Page, server: Server) -> None:
    """Record dialogs, requests that leave the machine and failed responses (all must stay empty)."""

    def on_dialog(dialog: Dialog) -> None:
        state.dialogs.append(dialog.message)
        dialog.dismiss()

    def on_request(request: Request) -> None:
        url = request.url
        if url.startswith(("http:", "https:", "ws:", "wss:")) and not url.startswith(
            (server.url, server.url.replace("http", "ws"))
        ):
            state.outside.append(url)

    def on_response(response: Response) -> None:
        if response.status >= 400 and not BASE_PATH_PROBE.match(response.url.removeprefix(server.url)):
            state.failed.append(f"{response.status} {response.url}")

    page.on("dialog", on_dialog)
    page.on("request", on_request)
    page.on("response", on_response)


def open_page(browser: Browser, server: Server, path: str, ready_text: str) -> Page:
    """Load a page, wait until the script has run and `ready_text` shows, and check for exception boxes."""
    page = browser.page
    page.goto(f"{server.url}/{path}")
    page.get_by_text(ready_text).first.wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    return page


def settle(page: Page) -> None:
    """Wait until the current script run has finished: Streamlit marks its state on the app element.

    A condition, never a fixed sleep: every action is followed by waiting for what it should show.
    """
    page.wait_for_function(
        """() => { const app = document.querySelector('[data-testid="stApp"]');
                   return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
                     && !document.querySelector('[data-testid="stStatusWidget"], [data-testid="stSkeleton"]'); }""",
        timeout=RUN_TIMEOUT_MS,
    )


def shown_as_text(page: Page) -> bool:
    """The untrusted content is on screen verbatim, as the text of an element (not parsed as markup)."""
    element = page.locator('[data-testid="stText"]').filter(has_text=XSS).first
    return element.is_visible() and element.text_content() == XSS


def assert_healthy(browser: Browser, name: str) -> None:
    """Save the page's screenshot for the docs, then `assert_clean`."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
    assert_clean(browser, name)


def assert_clean(browser: Browser, name: str) -> None:
    """No exception or error box, no injected markup, no dialog, no request off the machine, no failed
    response (but Streamlit's two base-path probes)."""
    page = browser.page
    assert page.locator('[data-testid="stException"]').count() == 0, name
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0, name
    assert page.locator('img[src="x"]').count() == 0, name
    assert browser.dialogs == [], name
    assert browser.outside == [], f"{name}: requests left the machine: {browser.outside[:5]}"
    assert browser.failed == [], f"{name}: failed responses: {browser.failed[:5]}"


def no_horizontal_scroll(page: Page) -> bool:
    return bool(page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1"))


def first_column(page: Page, key: str) -> str:
    """The header of the first column of the keyed table (the grid's accessible copy of its cells)."""
    header = page.locator(f".st-key-{key} [role='columnheader']").first
    header.wait_for(state="attached", timeout=RUN_TIMEOUT_MS)
    return (header.text_content() or "").strip()


def test_recall_lab(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, "", "Type a cue above")
    cue = page.get_by_label("Cue", exact=True)
    cue.fill("why did the launch fail")
    cue.press("Enter")  # Enter alone runs the recall
    page.get_by_text("Score breakdown").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.get_by_text("0.20·importance").is_visible()
    assert first_column(page, "lab_table") == "rank"  # rank and score first (pinned), then the content
    assert no_horizontal_scroll(page)
    with page.expect_download(timeout=RUN_TIMEOUT_MS) as download:  # made on click, with full contents
        page.locator(".st-key-lab_table_dl_csv button").click()
    text = Path(download.value.path()).read_text()
    assert text.startswith("rank,score,content,") and "launch" in text.lower()
    slider = page.locator('.st-key-lab_w_importance input[type="range"]')
    slider.focus()
    for _ in range(4):
        slider.press("ArrowRight")
    page.get_by_text("0.40·importance").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.get_by_text("Preset: custom").is_visible()
    assert_healthy(browser, "recall_lab")

    # the view is a link: reloading it (a new session) brings the inputs back from the URL
    page.wait_for_function("() => location.search.includes('importance=0.4')", timeout=RUN_TIMEOUT_MS)
    assert "cue=why+did+the+launch+fail" in page.url or "cue=why%20did%20the%20launch%20fail" in page.url
    page.reload()
    page.get_by_label("Cue", exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.get_by_label("Cue", exact=True).input_value() == "why did the launch fail"
    assert float(page.locator('.st-key-lab_w_importance input[type="range"]').input_value()) == 0.4

    # and so does a page switch inside the session
    page.get_by_role("link", name="Timeline").click()
    page.get_by_text("Selected memory").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    page.get_by_role("link", name="Recall lab").click()
    page.get_by_label("Cue", exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.get_by_label("Cue", exact=True).input_value() == "why did the launch fail"

    # quick slider moves (no waiting between them) do not queue up stale reruns: the page ends on the
    # last value, and every part of it agrees with it (a reload is a new session: recall again first)
    page.get_by_role("button", name="Recall", exact=True).click()
    page.get_by_text("0.40·importance").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    slider = page.locator('.st-key-lab_w_importance input[type="range"]')
    slider.focus()
    for key in ["ArrowRight"] * 6 + ["ArrowLeft"] * 2:
        slider.press(key)
    moved = time.monotonic()
    page.get_by_text("0.60·importance").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    print(f"quick slider moves settled {time.monotonic() - moved:.2f} s after the last one")
    assert float(slider.input_value()) == 0.6
    page.wait_for_function("() => location.search.includes('importance=0.6')", timeout=RUN_TIMEOUT_MS)
    assert page.get_by_text("0.40·importance").count() == 0


def test_temporal_recall_in_time_order(browser: Browser, server: Server) -> None:
    page = browser.page
    page.goto(f"{server.url}/?strategy=temporal&entity=atlas-launch&cue=atlas")
    page.get_by_label("Cue", exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.get_by_label("Entity", exact=True).count() == 1  # the link's strategy shows its parameters
    page.get_by_role("button", name="Recall", exact=True).click()
    page.get_by_text("Score breakdown").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    page.locator(".st-key-lab_table table td").first.wait_for(state="attached", timeout=RUN_TIMEOUT_MS)
    heads, rows = page.evaluate(
        """() => { const t = document.querySelector('.st-key-lab_table table');
                   const heads = [...t.querySelectorAll('th')].map(x => x.textContent.trim());
                   const rows = [...t.querySelectorAll('tbody tr')]
                     .map(r => [...r.querySelectorAll('td, th')].map(x => x.textContent.trim()));
                   return [heads, rows]; }"""
    )
    assert "created" in heads, heads
    column = heads.index("created")
    dates = [row[column] for row in rows if len(row) > column]
    assert len(dates) >= 2, dates
    assert dates == sorted(dates)
    assert_healthy(browser, "recall_lab_temporal")


def test_timeline(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, "timeline", "Selected memory")
    # the newest memory (the untrusted one) is selected: its content shows as text, verbatim
    assert shown_as_text(page)
    where = page.evaluate(
        """(id) => { const gd = document.querySelector('.js-plotly-plot');
             for (let t = 0; t < gd.data.length; t++) {
               const i = gd.data[t].customdata.findIndex(c => c[0] === id);
               if (i >= 0) { return [t, i]; } }
             return null; }""",
        server.xss_id,
    )
    assert where is not None
    trace, index = where
    point = page.locator(".js-plotly-plot .subplot.xy .scatterlayer .trace").nth(trace).locator("path.point").nth(index)
    point.hover(force=True)
    hover = page.locator(".js-plotly-plot .hoverlayer .hovertext")
    hover.first.wait_for(timeout=10_000)
    hovered = hover.first.text_content() or ""
    assert XSS in hovered  # the hover box shows the content as text
    assert_healthy(browser, "timeline")


def test_causal_graph(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, "causal_graph", "Memories reached")
    frame_element = page.locator('iframe[title="Causal graph around the seed memory"]')
    frame_element.wait_for(timeout=RUN_TIMEOUT_MS)
    frame = frame_element.element_handle().content_frame()
    assert frame is not None
    frame.wait_for_selector('#mynetwork[data-ready="true"]', timeout=RUN_TIMEOUT_MS)
    assert frame.evaluate("window.hebbsNetwork.body.data.nodes.length") >= 2
    # the seed is the untrusted memory: its label is drawn as text, and its tooltip is a text node
    label = frame.evaluate("(id) => window.hebbsNetwork.body.nodes[id].labelModule.lines[0].blocks[0].text",
                           server.xss_id)
    assert label == XSS
    spot = frame.evaluate(
        "(id) => { const n = window.hebbsNetwork; return n.canvasToDOM(n.getPositions([id])[id]); }", server.xss_id
    )
    box = frame_element.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + spot["x"], box["y"] + spot["y"])
    tooltip = frame.locator("div.vis-tooltip")
    tooltip.wait_for(state="visible", timeout=10_000)
    assert tooltip.inner_text().startswith(XSS)
    assert frame.locator("div.vis-tooltip img").count() == 0
    assert frame.locator('img[src="x"]').count() == 0
    assert frame.evaluate("Array.from(document.scripts).filter(s => s.src).length") == 0  # all inline
    assert page.get_by_text("arrows run from cause to effect").is_visible()  # the legend
    # labels: a node that is neither the seed nor on a path shows its label while hovered
    other = frame.evaluate("(seed) => window.hebbsNetwork.body.data.nodes.getIds().find(i => i !== seed) || null",
                           server.xss_id)
    if other is not None:
        spot = frame.evaluate(
            "(id) => { const n = window.hebbsNetwork; return n.canvasToDOM(n.getPositions([id])[id]); }", other
        )
        page.mouse.move(box["x"] + spot["x"], box["y"] + spot["y"])
        frame.wait_for_function("(id) => window.hebbsNetwork.body.data.nodes.get(id).font.size > 0", arg=other,
                                timeout=10_000)
        # clicking that node makes it the seed: in this session (no page reload), and the link follows
        page.evaluate("() => { window.hebbsSameDocument = true; }")
        page.mouse.click(box["x"] + spot["x"], box["y"] + spot["y"])
        page.wait_for_function("(id) => new URLSearchParams(location.search).get('seed') === id", arg=other,
                               timeout=RUN_TIMEOUT_MS)
        settle(page)
        assert page.evaluate("() => window.hebbsSameDocument === true")
        frame = page.locator('iframe[title="Causal graph around the seed memory"]').element_handle().content_frame()
        assert frame is not None
        frame.wait_for_selector('#mynetwork[data-ready="true"]', timeout=RUN_TIMEOUT_MS)
        assert frame.evaluate("(id) => window.hebbsNetwork.body.nodes[id].options.shape", other) == "star"
    assert_healthy(browser, "causal_graph")


def test_analogies(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, "analogies", "Describe a situation")
    page.get_by_label("Cue", exact=True).fill("We rushed the launch and skipped testing, and it failed.")
    page.get_by_role("button", name="Find analogies").click()
    page.get_by_text("Structures side by side").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.get_by_text("The cue's structure:").is_visible()
    assert_healthy(browser, "analogies")


def test_memories(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, "memories", "newest first")
    # the newest memory is the untrusted one: first row of the table, selected, its content shown as text
    assert shown_as_text(page)
    table = page.locator('[data-testid="stDataFrame"]').first
    assert table.is_visible()
    cells = table.locator("td").filter(has_text=XSS)  # the grid's accessible copy of its cells
    cells.first.wait_for(state="attached", timeout=RUN_TIMEOUT_MS)
    assert cells.first.text_content() == XSS
    page.get_by_role("tab", name="Forget").click()
    page.get_by_role("button", name="Forget this memory…").click()
    page.get_by_text("This cannot be undone").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    page.get_by_role("button", name="Cancel").click()
    page.get_by_text("This cannot be undone").wait_for(state="detached", timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.get_by_role("button", name="Forget this memory…").is_visible()
    assert cells.first.text_content() == XSS  # still there: nothing was forgotten
    assert_healthy(browser, "memories")


def test_ingest(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, "ingest", "Index the sample data")
    assert page.get_by_text("memories").first.is_visible()
    # a file that cannot be indexed: its outcome and the reason show on the page (nothing is stored)
    page.locator('.st-key-ingest_files input[type="file"]').set_input_files(
        files=[{"name": "broken.json", "mimeType": "application/json", "buffer": b"{not json"}]
    )
    run = page.get_by_role("button", name="Index uploaded files")
    page.wait_for_function("() => { const b = [...document.querySelectorAll('button')]"
                           ".find(x => x.textContent.trim() === 'Index uploaded files'); return b && !b.disabled; }",
                           timeout=RUN_TIMEOUT_MS)
    settle(page)
    run.click()
    warning = page.locator('[data-testid="stAlertContentWarning"]').filter(has_text="Skipped broken.json")
    warning.first.wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    reason = (warning.first.text_content() or "").split("Skipped broken.json", 1)[1]
    assert "json" in reason.lower(), reason  # the reason itself, on the page, not three clicks deep
    assert page.get_by_text("0 indexed").count() + page.get_by_text("1 skipped").count() >= 1
    assert_healthy(browser, "ingest")


def test_sub_pages_open_directly_without_404(browser: Browser, server: Server) -> None:
    """Opening a sub-page's URL in a fresh tab serves the app, and the server logs no 404 for it."""
    before = server.log.read_text()
    for path, ready in (("timeline", "Selected memory"), ("memories", "newest first")):
        response = browser.page.goto(f"{server.url}/{path}")
        assert response is not None and response.status == 200, path
        browser.page.get_by_text(ready).first.wait_for(timeout=RUN_TIMEOUT_MS)
        settle(browser.page)
    added = server.log.read_text()[len(before):]
    assert re.search(r"\b404\b|Traceback|rror", added) is None, added[-2000:]  # the server logged no 404
    assert_healthy(browser, "memories")


# --- Workbench 3 (issue 32): each numbered item of the review, as a user meets it ---------------------------
QUIET_MS = 2500  # how long the page must stay idle to count as settled for good (not a pause: a condition)


def settled_for_good(page: Page, quiet_ms: int = QUIET_MS, timeout_ms: int = 90_000) -> int:
    """Wait until no script run has started or ended for `quiet_ms` (a page that reruns itself never gets
    there, and the wait fails); returns how many runs started since the watch began."""
    page.evaluate(
        """() => { if (window.hebbsRuns) { return; }
             const app = document.querySelector('[data-testid="stApp"]');
             window.hebbsRuns = { started: 0, last: performance.now() };
             new MutationObserver(() => {
               window.hebbsRuns.last = performance.now();
               if (app.getAttribute('data-test-script-state') === 'running') { window.hebbsRuns.started += 1; }
             }).observe(app, { attributes: true, attributeFilter: ['data-test-script-state'] }); }"""
    )
    page.wait_for_function(
        """(quiet) => { const app = document.querySelector('[data-testid="stApp"]');
             return app.getAttribute('data-test-script-state') === 'notRunning'
               && performance.now() - window.hebbsRuns.last >= quiet; }""",
        arg=quiet_ms, timeout=timeout_ms, polling=250,
    )
    return int(page.evaluate("() => window.hebbsRuns.started"))


def tick_row(page: Page, key: str, row: int) -> None:
    """Tick the selection box of row `row` (0-based) of the keyed selectable table, as a user does."""
    grid = page.locator(f".st-key-{key} [data-testid='stDataFrame']").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    header = 35
    page.mouse.click(box["x"] + 16, box["y"] + header + 72 * row + 36)


def table_rows(page: Page, key: str) -> tuple[list[str], list[list[str]]]:
    """The keyed table's headers and cell texts (the grid's accessible copy)."""
    page.locator(f".st-key-{key} table td").first.wait_for(state="attached", timeout=RUN_TIMEOUT_MS)
    heads, rows = page.evaluate(
        """(key) => { const t = document.querySelector('.st-key-' + key + ' table');
                   const heads = [...t.querySelectorAll('th')].map(x => x.textContent.trim());
                   const rows = [...t.querySelectorAll('tbody tr')]
                     .map(r => [...r.querySelectorAll('td, th')].map(x => x.textContent.trim()));
                   return [heads, rows]; }""",
        key,
    )
    return heads, rows


def column(page: Page, key: str, name: str) -> list[str]:
    """One column of a result table, every row, read from its CSV download (the grid draws on a canvas and
    its accessible copy holds only the cells in view).

    A click whose download never starts is clicked again, as a user would (once in CI, on a loaded machine,
    Streamlit's deferred download answered a click after two reruns with nothing for 120 s); a table that
    never downloads still fails after RUN_TIMEOUT_MS."""
    button = page.locator(f".st-key-{key}_dl_csv button")
    for _ in range(RUN_TIMEOUT_MS // DOWNLOAD_ATTEMPT_MS):
        try:
            with page.expect_download(timeout=DOWNLOAD_ATTEMPT_MS) as download:
                button.click()
            break
        except PlaywrightTimeout:
            continue
    else:
        pytest.fail(f"the {key} table's CSV download never started")
    with open(download.value.path(), newline="") as handle:
        return [row[name] for row in csv.DictReader(handle)]


def url_param(page: Page, name: str) -> str | None:
    return page.evaluate("(n) => new URLSearchParams(location.search).get(n)", name)


def test_ticking_a_row_settles_on_every_page_with_a_selectable_table(browser: Browser, server: Server) -> None:
    """Item 1: a ticked row of "Memories reached" made the graph reseed itself forever."""
    page = open_page(browser, server, f"causal_graph?seed={server.ids['atlas_refunds']}", "Memories reached")
    for _ in range(3):  # three ticks in a row, each from the graph the previous one opened
        ids = column(page, "graph_nodes", "id")
        chosen = ids[min(2, len(ids) - 1)]
        tick_row(page, "graph_nodes", min(2, len(ids) - 1))
        page.wait_for_function("(id) => new URLSearchParams(location.search).get('seed') === id", arg=chosen,
                               timeout=RUN_TIMEOUT_MS)
        settled_for_good(page)
        assert url_param(page, "seed") == chosen  # the seed stays where the tick put it
    page = open_page(browser, server, "memories", "newest first")
    ids = column(page, "mem_table", "id")
    tick_row(page, "mem_table", 3)
    page.wait_for_function("(id) => new URLSearchParams(location.search).get('memory') === id", arg=ids[3],
                           timeout=RUN_TIMEOUT_MS)
    settled_for_good(page)
    page = open_page(browser, server, "?cue=why+did+the+launch+fail", "Score breakdown")
    tick_row(page, "lab_table", 2)
    settled_for_good(page)
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    assert_healthy(browser, "memories")


def test_exploring_does_not_change_the_scores(browser: Browser, server: Server) -> None:
    """Item 2: each Recall press counted, so the same cue scored higher every time and ranks swapped."""
    page = open_page(browser, server, "?cue=the+launch+crashed+under+traffic", "Score breakdown")
    assert page.get_by_text("Explored, not counted").is_visible()
    before = list(zip(column(page, "lab_table", "id"), column(page, "lab_table", "score"), strict=True))
    for _ in range(2):
        page.get_by_role("button", name="Recall", exact=True).click()
        settled_for_good(page)
    after = list(zip(column(page, "lab_table", "id"), column(page, "lab_table", "score"), strict=True))
    assert after == before
    page.locator(".st-key-lab_count label").click()  # the switch: count one recall on purpose
    settle(page)
    page.get_by_role("button", name="Recall", exact=True).click()
    page.get_by_text("Counted as a real recall").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    page.locator(".st-key-lab_count label").click()
    settle(page)
    assert_clean(browser, "exploring")


def test_a_link_reopens_inputs_and_results(browser: Browser, server: Server) -> None:
    """Item 3: a shared link or a reload restored the cue but not the results; the stale banner only on a change."""
    page = open_page(browser, server, "?cue=Helix+thermostats+overheating&top_k=5", "Score breakdown")
    assert len(column(page, "lab_table", "id")) == 5
    assert "Helix" in column(page, "lab_table", "content")[0]
    assert page.get_by_text("The inputs changed").count() == 0
    page.reload()
    page.get_by_text("Score breakdown").wait_for(timeout=RUN_TIMEOUT_MS)
    settled_for_good(page)
    assert page.get_by_text("The inputs changed").count() == 0
    top_k = page.get_by_label("top_k")
    top_k.fill("7")
    top_k.press("Enter")
    page.get_by_text("The inputs changed").wait_for(timeout=RUN_TIMEOUT_MS)  # now they did
    settle(page)
    assert_clean(browser, "link")


def test_rank_and_score_come_first_and_say_where_results_came_from(browser: Browser, server: Server) -> None:
    """Items 4 and 5: the score was off-screen at 1280 px; results named no source and no strategy."""
    page = open_page(browser, server, "?cue=rushed+launch+postmortem&strategy=similarity&strategy=causal",
                     "Score breakdown")
    heads, _ = table_rows(page, "lab_table")  # the columns in view
    assert heads[:4] == ["rank", "score", "content", "source"], heads
    grid = page.locator(".st-key-lab_table [data-testid='stDataFrame']").first
    box = grid.bounding_box()
    assert box is not None and box["x"] + box["width"] <= DESKTOP["width"]  # the table, score included, fits
    sources = column(page, "lab_table", "source")
    assert any(s.startswith("document") for s in sources), sources
    assert all(s for s in sources)
    found_by = column(page, "lab_table", "found by")
    assert any("similarity" in f for f in found_by) and any("causal" in f for f in found_by)
    links = column(page, "lab_table", "open")
    assert all("memories?memory=" in link for link in links), links
    target = links[0].split("memories?memory=")[1]
    page.goto(f"{server.url}/memories?memory={target}")
    page.get_by_text("newest first").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert url_param(page, "memory") == target
    _, fields = table_rows(page, "mem_fields")
    assert ["id", target] in fields  # the source is the selected memory
    assert_healthy(browser, "recall_lab")


def test_the_graph_labels_its_hubs_and_offers_seeds_with_edges(browser: Browser, server: Server) -> None:
    """Item 6: past ten nodes only the seed was labelled; a seed from the lab could have no edges at all."""
    page = open_page(browser, server, f"causal_graph?seed={server.ids['atlas_refunds']}", "Memories reached")
    frame_element = page.locator('iframe[title="Causal graph around the seed memory"]')
    frame = frame_element.element_handle().content_frame()
    assert frame is not None
    frame.wait_for_selector('#mynetwork[data-ready="true"]', timeout=RUN_TIMEOUT_MS)
    assert frame.evaluate("window.hebbsNetwork.body.data.nodes.length") >= 10
    crash, leaf = server.ids["atlas_crash"], server.ids["follow_up_3"]
    size = "(id) => window.hebbsNetwork.body.data.nodes.get(id).font.size"
    assert frame.evaluate(size, crash) > 0  # the best-connected memory is labelled at the first zoom
    assert frame.evaluate(size, leaf) == 0  # a leaf is not (it would pile up)
    label = frame.evaluate("(id) => window.hebbsNetwork.body.nodes[id].labelModule.lines[0].blocks[0].text", crash)
    assert 0 < len(label) <= 28  # short; the tooltip holds the content
    box = frame_element.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    for _ in range(4):
        page.mouse.wheel(0, -400)
    frame.wait_for_function(f"(id) => ({size})(id) > 0", arg=leaf, timeout=10_000)  # zoomed in: labelled
    assert_healthy(browser, "causal_graph")

    # a recall whose best result has no edges: the graph starts from one that has
    page = open_page(browser, server, "?cue=Quarterly+pipeline+review+three+deals", "Score breakdown")
    assert column(page, "lab_table", "id")[0] == server.ids["pipeline"]
    page.get_by_role("link", name="Causal graph").click()
    page.get_by_text("Memories reached").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert url_param(page, "seed") != server.ids["pipeline"]
    assert page.get_by_text("This memory has no edges").count() == 0
    assert_clean(browser, "default seed")


def test_history_has_one_entry_per_page_switch(browser: Browser, server: Server) -> None:
    """Item 7: one page switch added three history entries; Back needed three presses. In a page of its own:
    browsers cap `history.length` at 50, which the shared page reaches after the other tests' navigations."""
    own = Browser(browser.page.context.browser.new_page(viewport=DESKTOP))  # type: ignore[union-attr]
    watch(own, own.page, server)
    try:
        _history_entries(own, server)
    finally:
        own.page.close()


def _history_entries(browser: Browser, server: Server) -> None:
    page = browser.page
    page.goto(f"{server.url}/?cue=atlas+launch")
    page.get_by_text("Score breakdown").first.wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    start = page.evaluate("history.length")
    page.get_by_role("link", name="Timeline").click()
    page.get_by_text("Selected memory").wait_for(timeout=RUN_TIMEOUT_MS)
    settled_for_good(page)
    timeline = page.url
    page.get_by_role("link", name="Memories").click()
    page.get_by_text("newest first").wait_for(timeout=RUN_TIMEOUT_MS)
    settled_for_good(page)
    assert page.evaluate("history.length") == start + 2
    page.go_back()
    page.get_by_text("Selected memory").wait_for(timeout=RUN_TIMEOUT_MS)
    settled_for_good(page)
    assert page.url == timeline
    page.go_back()
    page.get_by_text("Score breakdown").wait_for(timeout=RUN_TIMEOUT_MS)
    settled_for_good(page)
    assert "cue=atlas+launch" in page.url
    page.go_forward()
    page.get_by_text("Selected memory").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.url == timeline
    assert_clean(browser, "history")


def test_all_four_strategies_without_an_entity(browser: Browser, server: Server) -> None:
    """Item 8: all four strategies and no entity gave a red error under a hint that said otherwise."""
    strategies = "".join(f"&strategy={s}" for s in ("similarity", "temporal", "causal", "analogical"))
    page = open_page(browser, server, f"?cue=a+deal+that+was+lost{strategies}", "Score breakdown")
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    assert page.get_by_text("this recall leaves it out").is_visible()
    cue = page.get_by_label("Cue", exact=True)
    cue.fill("what happened in the atlas launch")
    cue.press("Enter")
    page.get_by_text("named in the cue").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert "temporal" in " ".join(column(page, "lab_table", "found by"))
    assert_clean(browser, "all four")


def test_a_phone_gets_one_usable_column(phone: Browser, server: Server) -> None:
    """Item 9: at 390x844 the controls hid behind a toggle, content was cut, scores unreachable, the seed
    drawn off the canvas."""
    page = open_page(phone, server, "", "This store")
    cue = page.get_by_label("Cue", exact=True)
    assert cue.is_visible()  # in the page, not behind the sidebar's toggle
    assert no_horizontal_scroll(page)
    cue.fill("why did the launch fail")
    cue.press("Enter")
    page.get_by_text("Score breakdown").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert no_horizontal_scroll(page)
    grid = page.locator(".st-key-lab_table [data-testid='stDataFrame']").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    assert first_column(page, "lab_table") == "rank"
    page.evaluate("() => window.scrollTo(0, 0)")
    assert_healthy(phone, "recall_lab_phone")
    page = open_page(phone, server, f"causal_graph?seed={server.ids['atlas_crash']}", "Memories reached")
    frame_element = page.locator('iframe[title="Causal graph around the seed memory"]')
    frame = frame_element.element_handle().content_frame()
    assert frame is not None
    frame.wait_for_selector('#mynetwork[data-ready="true"]', timeout=RUN_TIMEOUT_MS)
    spot = frame.evaluate(
        "(id) => { const n = window.hebbsNetwork; return n.canvasToDOM(n.getPositions([id])[id]); }",
        server.ids["atlas_crash"],
    )
    canvas = frame.evaluate("() => { const r = document.getElementById('mynetwork').getBoundingClientRect();"
                            " return {w: r.width, h: r.height}; }")
    assert 0 <= spot["x"] <= canvas["w"] and 0 <= spot["y"] <= canvas["h"], (spot, canvas)
    frame_element.scroll_into_view_if_needed()
    assert_healthy(phone, "causal_graph_phone")
    open_page(phone, server, "memories", "newest first")
    assert no_horizontal_scroll(phone.page)
    assert_healthy(phone, "memories_phone")


def test_the_first_screen_shows_the_store(browser: Browser, server: Server) -> None:
    """Item 10: the first screen was empty; Memories had no search and no history; a preset silently
    replaced the strategies."""
    page = open_page(browser, server, "", "This store")
    assert page.locator(".st-key-lab_store_counts [data-testid='stMetric']").count() >= 3
    assert page.locator(".st-key-lab_recent [data-testid='stDataFrame']").count() == 1
    example = page.locator(".st-key-lab_examples button").first
    shown = example.text_content() or ""
    example.click()
    page.get_by_text("Score breakdown").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    cue = page.get_by_label("Cue", exact=True).input_value()
    assert cue and cue in shown  # the example's cue, recalled
    page.locator(".st-key-lab_preset").click()
    page.get_by_role("option", name="recommended").click()
    page.get_by_text("replaces these strategies").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.locator(".st-key-lab_strategies input").first.is_disabled()
    page.locator(".st-key-lab_preset").click()
    page.get_by_role("option", name="none (the strategies above)").click()
    settle(page)

    page = open_page(browser, server, "memories?search=follow-up+1%3A", "newest first")
    assert page.get_by_text("1 match for “follow-up 1:”").is_visible()  # item 11: not "1 matches"
    page.get_by_role("tab", name="History").click()
    page.get_by_text("Never revised").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    page.get_by_role("tab", name="Details").click()
    settle(page)
    assert_clean(browser, "forget")
    fields = " ".join(" ".join(row) for row in table_rows(page, "mem_fields")[1])
    assert "+00:00" not in fields and "UTC" in fields  # item 11: readable times
    assert '"source": "review"' in fields and "'source'" not in fields  # the context as JSON, not a Python dict
    assert_clean(browser, "first screen")


def test_the_forget_confirmation_shows_on_its_own_tab(browser: Browser, server: Server) -> None:
    """Item 11: the forget confirmation once showed on the wrong tab."""
    page = open_page(browser, server, "memories", "newest first")
    page.get_by_role("tab", name="Forget").click()
    page.get_by_role("button", name="Forget this memory…").click()
    page.get_by_text("This cannot be undone").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.get_by_role("tab", name="Forget").get_attribute("aria-selected") == "true"
    assert page.get_by_text("This cannot be undone").is_visible()
    tick_row(page, "mem_table", 2)  # another memory: no confirmation carried over to it
    settled_for_good(page)
    assert page.get_by_text("This cannot be undone").count() == 0
    page.get_by_role("tab", name="Details").click()
    settle(page)
    assert_clean(browser, "forget")
