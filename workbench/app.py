"""The hebbs workbench: `streamlit run workbench/app.py` (the store is `HEBBS_DATA_DIR`, default ./hebbs-data)."""

from __future__ import annotations

import streamlit as st

from workbench.session import data_dir, get_engine

st.set_page_config(page_title="hebbs workbench", page_icon="🧠", layout="wide")

PAGES = [
    st.Page("pages/recall_lab.py", title="Recall lab", icon=":material/tune:", default=True),
    st.Page("pages/timeline.py", title="Timeline", icon=":material/timeline:"),
    st.Page("pages/causal_graph.py", title="Causal graph", icon=":material/hub:"),
    st.Page("pages/analogies.py", title="Analogies", icon=":material/compare_arrows:"),
    st.Page("pages/memories.py", title="Memories", icon=":material/table_rows:"),
    st.Page("pages/ingest.py", title="Ingest", icon=":material/upload_file:"),
]

page = st.navigation(PAGES)

with st.sidebar:
    st.caption(f"Store: `{data_dir().name}`")
    try:
        counts = get_engine(str(data_dir())).stats()
        st.caption(f"{counts['memories']} memories · {counts['edges']} edges · {counts['entities']} entities")
    except Exception as exc:  # the page itself shows the readable error
        st.caption(f"store unavailable: {type(exc).__name__}")

page.run()
