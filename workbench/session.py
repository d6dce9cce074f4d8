"""The engine the pages talk to (one per data directory, cached), and readable errors instead of tracebacks."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import streamlit as st

from engine import HebbsError, MemoryEngine, config
from engine.embedding import Embedder, create_embedder
from engine.store.opening import default_database
from engine.tenancy import default_tenant
from workbench.views import md_escape

log = logging.getLogger(__name__)
T = TypeVar("T")

# The sample corpus shipped with the repository (absent from a plain wheel install).
SAMPLE_DATA_DIR = Path(__file__).resolve().parent.parent / "sample_data"

RECALLING = "Recalling…"
WARM_UP_DELAY_S = 3.0  # after the first page run: time to draw it before the model loads in the background
LOADING_MODEL = "Loading the embedding model (once per server start, about 10 s on a CPU), then recalling…"
EMPTY_STORE_MESSAGE = (
    "No memories yet: index the sample data on the **Ingest** page (or run `make run`), "
    "or add a memory on the **Memories** page."
)


@st.cache_resource(show_spinner=False)
def get_embedder(model: str) -> Embedder:
    """One embedding model per process, shared by every engine and session (backend from the config)."""
    return create_embedder(model=model)


@st.cache_resource(show_spinner="Opening the memory store…")
def get_engine(data_dir: str) -> MemoryEngine:
    """The facade over one data directory (or, with `HEBBS_DATABASE_URL`, the shared PostgreSQL store), shared
    by every session of this server: the memories of the tenant `HEBBS_TENANT` names (default `default`)."""
    database = default_database()
    return MemoryEngine(None if database else data_dir, database=database, tenant=default_tenant(),
                        embedder=get_embedder(config.default_embedding_model()))


@st.cache_resource(show_spinner=False)
def warm_up(model: str) -> threading.Event:
    """Load the embedding model and open the store's vector index in the background once the server opens
    a store, so the first recall waits for neither (the first page waits for none: its counts come from the
    record store); the returned event is set when the model is loaded (or failed: the recall then shows why)."""
    ready = threading.Event()
    embedder = get_embedder(model)

    def load() -> None:
        try:
            get_engine(str(data_dir())).open_vector_index_meanwhile()  # its own thread; Chroma's import is long
            embedder.encode(["warm up"])
        except Exception:
            log.exception("the embedding model did not load in the background")
        finally:
            ready.set()

    # A little later, so that loading (CPU- and GIL-heavy) does not slow the first page while it is drawn.
    timer = threading.Timer(WARM_UP_DELAY_S, load)
    timer.name, timer.daemon = "hebbs-model-warm-up", True
    timer.start()
    return ready


def recalling() -> str:
    """The spinner's words for a recall: it says so when the model is still loading."""
    return RECALLING if warm_up(config.default_embedding_model()).is_set() else LOADING_MODEL


def data_dir() -> Path:
    """The data directory the workbench opens: `HEBBS_DATA_DIR`, else `./hebbs-data`."""
    return config.default_data_dir().resolve()


def current_engine() -> MemoryEngine:
    """The engine for this app's data directory; stops the page with a readable error if it cannot open."""
    engine = attempt(get_engine, str(data_dir()), action="Could not open the memory store")
    if engine is None:
        st.stop()
    return engine


def show_error(exc: BaseException, action: str = "") -> None:
    """Show an error as one readable line (never a traceback); unexpected ones are also logged."""
    prefix = f"{action}: " if action else ""
    if isinstance(exc, HebbsError):
        st.error(prefix + md_escape(str(exc)), icon=":material/error:")
    else:
        log.exception("unexpected error in the workbench", exc_info=exc)
        st.error(f"{prefix}unexpected {type(exc).__name__}: {md_escape(str(exc))}", icon=":material/error:")


@contextmanager
def engine_errors(action: str = "") -> Iterator[None]:
    """Run a block, turning any engine error into a readable message."""
    try:
        yield
    except Exception as exc:  # streamlit's stop/rerun are BaseExceptions and pass through
        show_error(exc, action)


def attempt(fn: Callable[..., T], *args: Any, action: str = "", **kwargs: Any) -> T | None:
    """Call `fn`; on error show a readable message and return None."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        show_error(exc, action)
        return None


def memory_count(engine: MemoryEngine) -> int:
    """How many memories the store holds (0 shows the empty state).

    Read from the record store alone: `stats()` would also open the vector index (importing Chroma takes
    about 3 s), which pages that only list memories, like the Timeline, never need.
    """
    page = attempt(engine.list_page, limit=1, action="Could not read the store")
    return page.total if page is not None else 0


def require_memories(engine: MemoryEngine) -> None:
    """Stop the page with a pointer to what to do next when the store is empty."""
    if memory_count(engine) == 0:
        st.info(EMPTY_STORE_MESSAGE, icon=":material/lightbulb:")
        st.page_link("screens/ingest.py", label="Go to Ingest", icon=":material/upload_file:")
        st.stop()


def memory_label(memory_id: str, content: str, width: int = 70) -> str:
    """A one-line label for pickers: the start of the content and a short id."""
    text = " ".join(content.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{text}  ·  {memory_id[-8:]}"


def show_table(frame: Any, key: str, **kwargs: Any) -> None:
    """A read-only table inside a keyed container (display tables carry no key of their own)."""
    with st.container(key=key):
        st.dataframe(frame, hide_index=True, width="stretch", **kwargs)
