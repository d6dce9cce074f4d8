"""Reading documents: Markdown with frontmatter, plain text, chat transcripts, and every kind of bad input."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine import config
from engine.ingest.conversations import Conversation
from engine.ingest.documents import SourceDocument, discover, read_document
from engine.ingest.summary import Skipped

Write = Callable[[str, str | bytes], Path]


def read(path: Path) -> SourceDocument:
    doc = read_document(path, path.name)
    assert isinstance(doc, SourceDocument), doc
    return doc


def test_markdown_frontmatter_headings_and_lists(write: Write) -> None:
    path = write(
        "plan.md",
        "---\ntitle: Launch plan\ndate: 2026-01-28\nentity_id: atlas\ntags: [launches, mobile]\n---\n"
        "# Atlas plan\n\n## Background\n\nAtlas is a travel app.\nIt is built by **Brightpath**.\n\n"
        "### Risks\n\n- QA was cut to four days.\n- The [beta](http://example.org) was cancelled.\n\n"
        "```\ncode is skipped\n```\n## Next\n\nNina will decide.\n",
    )
    doc = read(path)
    assert doc.title == "Launch plan"
    assert doc.date == datetime(2026, 1, 28, tzinfo=UTC) and doc.date_source == "frontmatter"
    assert doc.entity_id == "atlas"
    assert doc.metadata["tags"] == ["launches", "mobile"]
    texts = [(b.text, b.heading_path) for b in doc.blocks]
    assert texts == [
        ("Atlas is a travel app. It is built by Brightpath.", ("Atlas plan", "Background")),
        ("QA was cut to four days.", ("Atlas plan", "Background", "Risks")),
        ("The beta was cancelled.", ("Atlas plan", "Background", "Risks")),
        ("Nina will decide.", ("Atlas plan", "Next")),
    ]


def test_plain_text_title_header_date_and_headings(write: Write) -> None:
    path = write(
        "note.txt",
        "Incident review\nDate: 2026-03-10\nAuthor: Ines Carvalho\n\nSummary\nThe site failed.\nIt recovered.\n\n"
        "Root cause\nA record was wrong.\n",
    )
    doc = read(path)
    assert doc.title == "Incident review"
    assert doc.metadata["author"] == "Ines Carvalho"
    assert doc.date == datetime(2026, 3, 10, tzinfo=UTC) and doc.date_source == "header"
    assert [(b.text, b.heading_path) for b in doc.blocks] == [
        ("The site failed. It recovered.", ("Summary",)),
        ("A record was wrong.", ("Root cause",)),
    ]


def test_chat_transcript_speakers_and_times(write: Write) -> None:
    path = write(
        "2026-03-21-triage.json",
        '[{"speaker": "Dana", "text": "Morning.", "time": "2026-03-21T08:30:00Z"},'
        ' {"speaker": "Rahul", "text": "No time on this one."},'
        ' {"speaker": "Sofia", "text": "  ", "time": "2026-03-21T08:40:00Z"},'
        ' {"speaker": "Sofia", "text": "Paused.", "time": "2026-03-21T08:41:00Z"}]',
    )
    conv = read_document(path, path.name)
    assert isinstance(conv, Conversation)
    assert conv.format == "conversation" and conv.title == "Triage" and conv.shape == "messages"
    assert [(m.speaker, m.text, m.at, m.time_source) for m in conv.messages] == [
        ("Dana", "Morning.", datetime(2026, 3, 21, 8, 30, tzinfo=UTC), "message"),
        ("Rahul", "No time on this one.", datetime(2026, 3, 21, 8, 30, 1, tzinfo=UTC), "previous message"),
        ("Sofia", "Paused.", datetime(2026, 3, 21, 8, 41, tzinfo=UTC), "message"),
    ]
    assert conv.date == datetime(2026, 3, 21, 8, 30, tzinfo=UTC)


def test_an_explicit_readme_is_skipped_with_a_reason(write: Write) -> None:
    _, skipped, _ = discover([write("README.md", "# About")])
    assert skipped == [Skipped("README.md", "README files describe a folder and are not indexed")]


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.md", "   \n\n", "empty file"),
        ("blob.txt", b"abc\x00\x01\x02", "binary file"),
        ("latin.txt", "caf\xe9 cr\xe8me".encode("latin-1"), "not UTF-8 text"),
        ("broken.json", '[{"speaker": "A", "text": "x"', "invalid JSON"),
        ("object.json", '{"speaker": "A"}', "not a chat transcript"),
        ("only-frontmatter.md", "---\ntitle: x\n---\n", "no text to index"),
    ],
)
def test_bad_files_become_skipped_lines(write: Write, name: str, content: str | bytes, reason: str) -> None:
    path = write(name, content)
    result = read_document(path, name)
    assert isinstance(result, Skipped)
    assert result.reason.startswith(reason)


def test_huge_and_unreadable_files_are_skipped(write: Write, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "INGEST_MAX_FILE_BYTES", 1024)
    big = write("big.txt", "word " * 1000)
    result = read_document(big, "big.txt")
    assert isinstance(result, Skipped) and result.reason.startswith("too large (0.0 MB")
    dangling = big.parent / "gone.md"
    dangling.symlink_to(big.parent / "nowhere.md")
    result = read_document(dangling, "gone.md")
    assert isinstance(result, Skipped) and result.reason.startswith("unreadable")


def test_a_huge_paragraph_is_cut_at_sentence_ends(write: Write) -> None:
    sentence = "The nightly job wrote one more archive to the storage network. "
    doc = read(write("log.txt", "Log\n\n" + sentence * 1000))
    assert len(doc.blocks) > 1
    assert all(len(b.text) <= 20_000 and b.text.endswith("network.") for b in doc.blocks)
    assert sum(b.text.count("archive") for b in doc.blocks) == 1000
