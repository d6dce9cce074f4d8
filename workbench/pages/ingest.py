"""Ingest: index uploaded files or the sample data, with a progress bar and the indexing summary."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from engine import MemoryEngine, config
from workbench import views
from workbench.session import SAMPLE_DATA_DIR, attempt, current_engine

ACCEPTED = [extension.lstrip(".") for extension in config.INGEST_EXTENSIONS]
UPLOADS_DIRNAME = config.UPLOADS_DIRNAME


def index(engine: MemoryEngine, paths: Sequence[Path], what: str) -> None:
    """Index `paths` with a progress bar; keep the summary for display."""
    bar = st.progress(0.0, text=f"Indexing {what}…")

    def on_progress(phase: str, done: int, total: int) -> None:
        fraction = 1.0 if not total else min(1.0, max(0.0, done / total))
        bar.progress(fraction, text=f"Indexing {what}: {phase} {done} of {total}")

    summary = attempt(engine.ingest, [str(p) for p in paths], progress=on_progress, action="Indexing failed")
    if summary is None:
        bar.empty()
        return
    bar.progress(1.0, text=f"Indexed {what}.")
    st.session_state["ingest_summary"] = views.summary_dict(summary)
    st.session_state["ingest_what"] = what


def upload_section(engine: MemoryEngine) -> None:
    files = st.sidebar.file_uploader("Upload files", type=ACCEPTED, accept_multiple_files=True, key="ingest_files",
                                     help="Markdown (with optional YAML front matter), plain text, or JSON chat "
                                          "transcripts.")
    if st.sidebar.button("Index uploaded files", key="ingest_upload_run", disabled=not files, width="stretch"):
        # Uploads are kept under the data directory, one file per name: uploading a file again updates
        # its memories instead of adding a second copy (the index is idempotent per source file).
        folder = engine.data_dir / UPLOADS_DIRNAME
        paths = []
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for f in files or []:
                path = folder / Path(f.name).name
                path.write_bytes(f.getvalue())
                paths.append(path)
        except OSError as exc:
            st.error(f"Could not save the uploaded files: {exc}", icon=":material/error:")
            return
        index(engine, paths, f"{len(paths)} uploaded file(s)")


def sample_section(engine: MemoryEngine) -> None:
    if not SAMPLE_DATA_DIR.is_dir():
        st.sidebar.caption("The sample data folder is not part of this installation.")
        return
    count = sum(1 for p in SAMPLE_DATA_DIR.rglob("*") if p.is_file() and p.name != "README.md")
    st.sidebar.caption(f"Sample data: {count} fictional documents (legal, sales, launches, incidents).")
    if st.sidebar.button("Index the sample data", type="primary", key="ingest_sample_run", width="stretch"):
        index(engine, [SAMPLE_DATA_DIR], "the sample data")


def main() -> None:
    st.title("Ingest")
    engine = current_engine()
    sample_section(engine)
    upload_section(engine)
    stats = attempt(engine.stats, action="Could not read the store")
    if stats:
        cols = st.columns(len(stats))
        for col, (name, value) in zip(cols, stats.items(), strict=True):
            col.metric(name.replace("_", " "), value)
    summary = st.session_state.get("ingest_summary")
    if summary is not None:
        st.subheader(f"Indexing summary: {st.session_state.get('ingest_what', '')}")
        numbers = {k: v for k, v in summary.items() if isinstance(v, int | float) and not isinstance(v, bool)}
        if numbers:
            cols = st.columns(min(len(numbers), 6))
            for i, (name, number) in enumerate(numbers.items()):
                cols[i % len(cols)].metric(name.replace("_", " "), number)
        rest = {k: v for k, v in summary.items() if k not in numbers}
        if rest:
            st.json(rest, expanded=False)
    elif stats and stats.get("memories", 0) == 0:
        st.info("No memories yet: press **Index the sample data** in the sidebar, or upload your own files.",
                icon=":material/lightbulb:")
    else:
        st.info("Upload Markdown, text or JSON chat files in the sidebar and press **Index uploaded files**.",
                icon=":material/lightbulb:")


main()
