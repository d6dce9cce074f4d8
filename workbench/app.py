"""The hebbs workbench: `streamlit run workbench/app.py` (the store is `HEBBS_DATA_DIR`, default ./hebbs-data).

Pages live in workbench/screens/ (not pages/, which Streamlit would also discover on its own and which would
fight st.navigation). The sidebar's counts are drawn after the page ran, so they include its changes.
"""

from __future__ import annotations

import streamlit as st

from engine import config
from workbench import history, urlstate
from workbench.session import data_dir, get_engine, warm_up

st.set_page_config(page_title="hebbs workbench", page_icon="🧠", layout="wide")

PAGES = [
    st.Page("screens/recall_lab.py", title="Recall lab", icon=":material/tune:", default=True),
    st.Page("screens/calibration.py", title="Calibration", icon=":material/show_chart:"),
    st.Page("screens/timeline.py", title="Timeline", icon=":material/timeline:"),
    st.Page("screens/causal_graph.py", title="Causal graph", icon=":material/hub:"),
    st.Page("screens/analogies.py", title="Analogies", icon=":material/compare_arrows:"),
    st.Page("screens/insights.py", title="Insights", icon=":material/lightbulb:"),
    st.Page("screens/memories.py", title="Memories", icon=":material/table_rows:"),
    st.Page("screens/ingest.py", title="Ingest", icon=":material/upload_file:"),
]

page = st.navigation(PAGES, position="hidden")
st.session_state[urlstate.PAGE_PATH] = page.url_path


def navigation() -> None:
    """The pages as a row of links above the page (it wraps on a phone, no menu to open first). Each link
    carries the inputs its page last had, so switching back restores the view and its address at once."""
    with st.container(horizontal=True, gap="small", key="nav"):
        for p in PAGES:
            st.page_link(p, query_params=urlstate.link_query(p.url_path), width="content")


navigation()
history.one_entry_per_action()

with st.sidebar:
    st.caption(f"Store: `{data_dir().name}`")
    counts_slot = st.empty()


def show_counts() -> None:
    try:
        counts = get_engine(str(data_dir())).stats(vector_index=False)  # the record store's: no Chroma import
        counts_slot.caption(f"{counts['memories']} memories · {counts['edges']} edges · "
                            f"{counts['entities']} entities with memories")
    except Exception as exc:  # the page itself shows the readable error
        counts_slot.caption(f"store unavailable: {type(exc).__name__}")


try:
    page.run()
finally:  # also after a page stopped early (st.stop)
    show_counts()
    # After the first page is drawn (so it does not compete with it): load the embedding model in the
    # background, so the first recall rarely waits for it.
    try:
        warm_up(config.default_embedding_model())
    except Exception as exc:  # a recall shows the readable error; the page is drawn already
        counts_slot.caption(f"embedding model unavailable: {type(exc).__name__}")
