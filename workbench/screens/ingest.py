"""Ingest: index uploaded files or the sample data, with a progress bar and the indexing summary."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from engine import HebbsError, MemoryEngine, config
from engine.uploads import UPLOADS_DIRNAME
from workbench import views
from workbench.session import SAMPLE_DATA_DIR, attempt, current_engine, show_table

ENTITIES_HELP = ("Entities with memories: the timelines you can open (the same count everywhere in the workbench). "
                 "An indexing run also recognises names that no memory is filed under; those are not counted.")

ACCEPTED = [extension.lstrip(".") for extension in config.INGEST_EXTENSIONS]


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
    st.session_state.pop("ingest_outcomes", None)


def file_outcome(name: str, summary: dict[str, Any]) -> dict[str, str]:
    """One uploaded file's outcome from its own indexing summary: indexed, unchanged or skipped (and why)."""
    skipped = summary.get("skipped") or []
    if skipped:
        reasons = "; ".join(str(s.get("reason", s)) if isinstance(s, dict) else str(s) for s in skipped)
        return {"file": name, "outcome": "skipped", "detail": reasons}
    if summary.get("documents_indexed"):
        if summary.get("conversations"):  # a JSON chat: one memory per message
            return {"file": name, "outcome": "indexed",
                    "detail": f"conversation: {summary.get('messages_added', 0)} messages added, "
                              f"{summary.get('messages_kept', 0)} kept"}
        return {"file": name, "outcome": "indexed",
                "detail": f"{summary.get('propositions_added', 0)} memories added, "
                          f"{summary.get('propositions_kept', 0)} kept"}
    if summary.get("documents_unchanged"):
        return {"file": name, "outcome": "unchanged", "detail": "same content as when it was last indexed"}
    return {"file": name, "outcome": "skipped", "detail": "nothing to index in this file"}


def index_files(engine: MemoryEngine, paths: Sequence[Path]) -> None:
    """Index uploaded files one at a time: a progress line per file, then each file's outcome."""
    bar = st.progress(0.0, text="Indexing the uploaded files…")
    outcomes: list[dict[str, str]] = []
    for i, path in enumerate(paths):
        bar.progress(i / len(paths), text=f"Indexing {path.name} ({i + 1} of {len(paths)})…")
        try:
            summary = views.summary_dict(engine.ingest([str(path)]))
        except HebbsError as exc:
            outcomes.append({"file": path.name, "outcome": "skipped", "detail": str(exc)})
            continue
        outcomes.append(file_outcome(path.name, summary))
    bar.progress(1.0, text=f"Done: {len(paths)} file(s).")
    st.session_state["ingest_outcomes"] = outcomes
    st.session_state.pop("ingest_summary", None)


def show_outcomes(outcomes: list[dict[str, str]]) -> None:
    """Counts by outcome, a warning with the reason for each skipped file, and the full table."""
    counts = {k: sum(1 for o in outcomes if o["outcome"] == k) for k in ("indexed", "unchanged", "skipped")}
    st.subheader("Uploaded files")
    st.markdown(" · ".join(f"**{n}** {k}" for k, n in counts.items()))
    for o in outcomes:
        if o["outcome"] == "skipped":
            st.warning(f"Skipped {views.md_escape(o['file'])}: {views.md_escape(o['detail'])}",
                       icon=":material/warning:")
    show_table(pd.DataFrame(outcomes, columns=["file", "outcome", "detail"]), "ingest_outcomes_table")


def upload_section(engine: MemoryEngine) -> None:
    files = st.sidebar.file_uploader("Upload files", type=ACCEPTED, accept_multiple_files=True, key="ingest_files",
                                     help="Markdown (with optional YAML front matter), plain text, or JSON chat "
                                          "transcripts (one memory per message; sessions, speakers and "
                                          "times kept).")
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
        index_files(engine, paths)


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
            col.metric(name.replace("_", " "), value, help=ENTITIES_HELP if name == "entities" else None)
    summary = st.session_state.get("ingest_summary")
    outcomes = st.session_state.get("ingest_outcomes")
    if outcomes:
        show_outcomes(outcomes)
    elif summary is not None:
        st.subheader(f"Indexing summary: {st.session_state.get('ingest_what', '')}")
        for item in summary.get("skipped") or []:
            if isinstance(item, dict):
                st.warning(f"Skipped {views.md_escape(str(item.get('path')))}: "
                           f"{views.md_escape(str(item.get('reason')))}", icon=":material/warning:")
        numbers = {k: v for k, v in summary.items() if isinstance(v, int | float) and not isinstance(v, bool)
                   and k != "entities"}
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
