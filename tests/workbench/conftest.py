"""Workbench fixtures: stores the app opens through `HEBBS_DATA_DIR`, and AppTest drivers.

The stores are opened with the workbench's own cached `get_engine`, so the app and the tests share one
engine (and one embedding model) per store for the whole session.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine import EdgeSpec, EdgeType, MemoryEngine, NewMemory, config
from workbench.session import get_embedder, get_engine

APP = Path(__file__).resolve().parents[2] / "workbench" / "app.py"
APP_TIMEOUT = 120  # seconds: the first run may load the embedding model
XSS = "<img src=x onerror=alert(1)>"

Store = tuple[Path, dict[str, str]]  # a data directory and the ids of its seed memories, by key
MakeApp = Callable[..., AppTest]

PAGES = {
    "recall_lab": "screens/recall_lab.py",
    "calibration": "screens/calibration.py",
    "timeline": "screens/timeline.py",
    "causal_graph": "screens/causal_graph.py",
    "analogies": "screens/analogies.py",
    "insights": "screens/insights.py",
    "memories": "screens/memories.py",
    "ingest": "screens/ingest.py",
}

# (key, content, entity, created_at, importance, [(target key, edge type, confidence)], kind)
SEED: list[tuple[str, str, str | None, str, float, list[tuple[str, str, float]], str]] = [
    ("atlas_plan", "Atlas launch plan: ship on February 10, two weeks ahead of the original date.",
     "atlas-launch", "2026-01-28T10:00:00Z", 0.6, [], "episode"),
    ("atlas_skip", "To hit the early date the Atlas team skipped the load testing phase.",
     "atlas-launch", "2026-02-03T10:00:00Z", 0.7, [("atlas_plan", "caused_by", 0.9)], "episode"),
    ("atlas_crash", "Atlas launched and checkout crashed under the launch-day traffic spike.",
     "atlas-launch", "2026-02-10T10:00:00Z", 0.9, [("atlas_skip", "caused_by", 0.9)], "episode"),
    ("atlas_refunds", "Customers filed hundreds of complaints and asked for refunds after the Atlas outage.",
     "atlas-launch", "2026-02-12T10:00:00Z", 0.7, [("atlas_crash", "caused_by", 0.8)], "episode"),
    ("atlas_postmortem", "Atlas postmortem: the rushed launch without load tests caused the outage.",
     "atlas-launch", "2026-02-18T10:00:00Z", 0.8,
     [("atlas_crash", "caused_by", 0.9), ("atlas_skip", "related_to", 0.7)], "document"),
    ("atlas_relaunch", "The Atlas relaunch succeeded after a full load-testing cycle.",
     "atlas-launch", "2026-07-01T10:00:00Z", 0.6, [("atlas_postmortem", "caused_by", 0.8)], "episode"),
    ("helix_release", "Helix thermostat firmware was released without QA sign-off to meet the holiday deadline.",
     "helix-thermostat", "2026-03-01T10:00:00Z", 0.6, [], "episode"),
    ("helix_bug", "A firmware bug made Helix thermostats overheat in cold weather.",
     "helix-thermostat", "2026-03-08T10:00:00Z", 0.7, [("helix_release", "caused_by", 0.8)], "episode"),
    ("helix_recall", "Helix thermostats were recalled after the overheating reports.",
     "helix-thermostat", "2026-03-12T10:00:00Z", 0.9, [("helix_bug", "caused_by", 0.9)], "episode"),
    ("ledgerly_creds", "Ledgerly rotated database credentials but missed updating the payments service config.",
     "ledgerly", "2026-01-10T10:00:00Z", 0.5, [], "episode"),
    ("ledgerly_outage", "Ledgerly payments outage: the payments service could not reach the database for hours.",
     "ledgerly", "2026-01-12T10:00:00Z", 0.9, [("ledgerly_creds", "caused_by", 0.9)], "episode"),
    ("ledgerly_storm", "A webhook retry storm overloaded the Ledgerly API.",
     "ledgerly", "2026-04-14T10:00:00Z", 0.7, [], "episode"),
    ("ledgerly_pm", "Ledgerly postmortem: retries without backoff caused the webhook storm.",
     "ledgerly", "2026-04-16T10:00:00Z", 0.8, [("ledgerly_storm", "caused_by", 0.9)], "document"),
    ("acme_discovery", "Discovery call with Acme Corp: they need single sign-on and audit logs.",
     "acme-corp", "2026-01-20T10:00:00Z", 0.5, [], "episode"),
    ("acme_pricing", "Acme Corp pricing call: they asked for a twenty percent discount.",
     "acme-corp", "2026-02-03T15:00:00Z", 0.6, [("acme_discovery", "followed_by", 1.0)], "episode"),
    ("acme_won", "Acme Corp signed a two-year contract; the deal was won.",
     "acme-corp", "2026-04-29T10:00:00Z", 0.8, [("acme_pricing", "caused_by", 0.7)], "episode"),
    ("globex_lost", "The Globex deal was lost: they chose a cheaper competitor.",
     "globex", "2026-05-13T10:00:00Z", 0.6, [], "episode"),
    ("cv_dpa", "Meridian signed a data processing agreement with CloudVault.",
     "cloudvault", "2026-01-15T10:00:00Z", 0.6, [], "document"),
    ("cv_change", "CloudVault moved backups to a new subprocessor without notice.",
     "cloudvault", "2026-03-02T10:00:00Z", 0.7, [], "episode"),
    ("cv_breach", "The unannounced subprocessor change breached the data processing agreement.",
     "cloudvault", "2026-03-20T10:00:00Z", 0.9, [("cv_change", "caused_by", 0.9), ("cv_dpa", "related_to", 0.8)],
     "episode"),
    ("cv_board", "The board was told about the vendor breach risk.",
     "cloudvault", "2026-04-03T10:00:00Z", 0.7, [("cv_breach", "caused_by", 0.8)], "episode"),
    ("cv_amended", "Meridian and CloudVault signed an amended data processing agreement.",
     "cloudvault", "2026-05-19T10:00:00Z", 0.8, [("cv_board", "caused_by", 0.7)], "document"),
    ("lesson", "Lesson learned: never skip testing to meet a deadline.",
     None, "2026-06-12T10:00:00Z", 0.9, [("atlas_postmortem", "related_to", 0.6)], "insight"),
    ("pipeline", "Quarterly pipeline review: three deals in negotiation, one at risk.",
     None, "2026-04-15T10:00:00Z", 0.4, [], "document"),
]


def seed(engine: MemoryEngine) -> dict[str, str]:
    """Remember the seed memories, a batch per edge depth so edges point back; returns key -> memory id."""
    level: dict[str, int] = {}
    for key, *_, edges, _kind in SEED:
        level[key] = 1 + max((level[target] for target, _, _ in edges), default=-1)
    ids: dict[str, str] = {}
    for depth in sorted(set(level.values())):
        batch = [row for row in SEED if level[row[0]] == depth]
        items = [
            NewMemory(content, importance, None, entity, kind, created,
                      tuple(EdgeSpec(ids[t], EdgeType(e), c) for t, e, c in edges))
            for _key, content, entity, created, importance, edges, kind in batch
        ]
        for row, memory in zip(batch, engine.remember_many(items), strict=True):
            ids[row[0]] = memory.id
    return ids


def add_xss_memory(engine: MemoryEngine) -> str:
    """The newest memory of the store: untrusted content, on an existing entity, with an edge into the graph."""
    recent = engine.list_memories(limit=200)
    anchor = next((m for m in recent if m.entity_id), recent[0] if recent else None)
    entity = anchor.entity_id if anchor and anchor.entity_id else "atlas-launch"
    edges = [(anchor.id, "caused_by", 0.8)] if anchor else []
    # clearly the newest (its own spot on the timeline), whatever the machine's clock says
    now = datetime.now(UTC)
    created = max(now, recent[0].created_at + timedelta(days=14)) if recent else now
    memory = engine.remember(XSS, entity_id=entity, importance=0.9, created_at=created, edges=edges)
    return memory.id


def open_engine(path: Path) -> MemoryEngine:
    """The engine the app will open for `path` (shared through the workbench's resource cache)."""
    return get_engine(str(path.resolve()))


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The seed memories plus the XSS memory, for the page and browser tests that click through a store.

    The seed (not the whole of sample_data/) keeps the session fast; `make run` shows the sample data.
    """
    path = tmp_path_factory.mktemp("sample") / "data"
    engine = open_engine(path)
    ids = seed(engine)
    ids["xss"] = add_xss_memory(engine)
    return path, ids


@pytest.fixture(scope="session")
def seeded_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The known seed memories plus the XSS memory, for read-only tests that assert on exact content."""
    path = tmp_path_factory.mktemp("seeded") / "data"
    engine = open_engine(path)
    ids = seed(engine)
    ids["xss"] = add_xss_memory(engine)
    return path, ids


@pytest.fixture
def empty_store(tmp_path: Path) -> Path:
    return tmp_path / "empty"


@pytest.fixture(scope="session")
def seed_template(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The seed memories, written once per session into a store that is then closed: scratch stores copy it
    (a copy of a closed store is the same store, at a small part of the cost of writing the seed again)."""
    path = tmp_path_factory.mktemp("seed-template") / "data"
    with MemoryEngine(path, embedder=get_embedder(config.default_embedding_model())) as engine:
        ids = seed(engine)
    return path, ids


@pytest.fixture
def scratch_store(tmp_path: Path, seed_template: Store) -> Store:
    """A small seeded store a test may change: its own copy of the seed."""
    template, ids = seed_template
    path = tmp_path / "scratch"
    shutil.copytree(template, path)
    return path, dict(ids)


@pytest.fixture
def make_app(monkeypatch: pytest.MonkeyPatch) -> MakeApp:
    """Build an AppTest of the workbench over a store, optionally on a given page, already run once."""

    def build(store: Path, page: str | None = None) -> AppTest:
        monkeypatch.setenv("HEBBS_DATA_DIR", str(store))
        at = AppTest.from_file(str(APP), default_timeout=APP_TIMEOUT)
        at.run()
        if page is not None and page != "recall_lab":
            at.switch_page(PAGES[page]).run()
        return at

    return build
