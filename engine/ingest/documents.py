"""Finding and reading documents: Markdown (with YAML frontmatter), plain text, JSON chat transcripts
(conversations, read by `engine.ingest.conversations`).

A document becomes a list of blocks (paragraphs, list items, chat messages), each with the heading path
above it. Anything that cannot be read as such (unreadable, binary, empty, huge, malformed) is reported
as `Skipped` with a reason instead of raising, so one bad file never stops a run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from engine import config
from engine.ingest.conversations import Conversation, NotAConversation, read_conversation
from engine.ingest.dates import parse_datetime
from engine.ingest.summary import Skipped

# README files describe a folder; they are not part of its story.
INGEST_SKIPPED_NAMES = ("readme.md", "readme.markdown", "readme.txt", "readme")

_FILENAME_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_KEY_VALUE = re.compile(r"^([A-Za-z][\w /-]{0,40}):\s+(.+)$")
_TERMINAL = (".", "!", "?", ":", ";", '"', "”", ")")
MAX_BLOCK_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Block:
    """A paragraph, list item or chat message: the unit sentences are split from."""

    text: str
    heading_path: tuple[str, ...] = ()
    speaker: str | None = None
    time: datetime | None = None  # a chat message's own time


@dataclass
class SourceDocument:
    path: Path
    source: str  # identity across runs: the resolved path
    display: str  # what users see: relative to the folder they indexed
    format: str  # markdown | text | chat
    title: str
    blocks: list[Block]
    content_hash: str
    date: datetime  # the document's date: frontmatter, header, file name, first message, else mtime
    date_source: str
    entity_id: str | None = None  # frontmatter `entity_id:` overrides extraction
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The document as one text (the `document` memory's content)."""
        parts = [self.title] if self.title else []
        for b in self.blocks:
            parts.append(f"{b.speaker}: {b.text}" if b.speaker else b.text)
        return "\n\n".join(parts)


def discover(paths: Sequence[str | Path]) -> tuple[list[tuple[Path, str]], list[Skipped], list[Path]]:
    """Files to index as (path, display path), files skipped up front, and the folders walked.

    Folders are walked recursively; hidden entries, unsupported extensions and README files are passed
    over. A file named explicitly with an unsupported type is reported as skipped.
    """
    found: dict[Path, str] = {}
    skipped: list[Skipped] = []
    roots: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            root = path.resolve()
            roots.append(root)
            for file in _walk(root):
                display = f"{root.name}/{file.relative_to(root).as_posix()}"
                if file.is_symlink() and not _inside(file, root):
                    # Links are never followed out of an indexed folder: it could expose any readable file.
                    skipped.append(Skipped(display, "a link to outside the indexed folder (not followed)"))
                    continue
                found.setdefault(file, display)
        elif path.is_file() or path.is_symlink():
            display = path.name
            if path.name.lower() in INGEST_SKIPPED_NAMES:
                skipped.append(Skipped(display, "README files describe a folder and are not indexed"))
            elif path.suffix.lower() not in config.INGEST_EXTENSIONS:
                skipped.append(Skipped(display, f"unsupported file type {path.suffix or '(none)'}"))
            else:
                found.setdefault(path.resolve() if path.exists() else path.absolute(), display)
        else:
            skipped.append(Skipped(str(raw), "no such file or folder"))
    return sorted(found.items()), skipped, roots


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a link loop
        return False


def _walk(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or name.lower() in INGEST_SKIPPED_NAMES:
                continue
            if Path(name).suffix.lower() in config.INGEST_EXTENSIONS:
                yield Path(dirpath) / name


def read_document(path: Path, display: str) -> SourceDocument | Conversation | Skipped:
    """Read and segment one file (a JSON chat transcript is a `Conversation`), or say why it cannot be indexed."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the read forever; devices, sockets: no text
            return Skipped(display, "not a regular file")
        size = info.st_size
        if size > config.INGEST_MAX_FILE_BYTES:
            limit = config.INGEST_MAX_FILE_BYTES / 1024 / 1024
            return Skipped(display, f"too large ({size / 1024 / 1024:.1f} MB; the limit is {limit:g} MB)")
        raw = path.read_bytes()
        mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError as exc:
        return Skipped(display, f"unreadable ({exc.strerror or exc})")
    if b"\x00" in raw[:8192]:
        return Skipped(display, "binary file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return Skipped(display, "not UTF-8 text")
    if not text.strip():
        return Skipped(display, "empty file")
    content_hash = hashlib.sha256(raw).hexdigest()
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            return _read_chat(path, display, text, content_hash, mtime)
        if suffix in (".md", ".markdown"):
            doc = _read_markdown(path, display, text, content_hash, mtime)
        else:
            doc = _read_text(path, display, text, content_hash, mtime)
    except _Unusable as exc:
        return Skipped(display, str(exc))
    except (RecursionError, ValueError) as exc:  # e.g. JSON nested 100,000 deep: skip the file, not the run
        return Skipped(display, f"cannot be parsed ({type(exc).__name__})")
    doc.blocks = [piece for block in doc.blocks for piece in _bounded(block)]
    if not any(b.text.strip() for b in doc.blocks):
        return Skipped(display, "no text to index")
    return doc


def _bounded(block: Block, limit: int = MAX_BLOCK_CHARS) -> list[Block]:
    """A block cut at sentence ends (or spaces) into pieces the parser takes in one go: a paragraph with no
    line breaks can be a whole log file."""
    pieces: list[Block] = []
    text = block.text
    while len(text) > limit:
        cut = max(text.rfind(". ", 0, limit), text.rfind("? ", 0, limit), text.rfind("! ", 0, limit))
        cut = cut + 1 if cut > limit // 2 else (text.rfind(" ", 0, limit) if text.rfind(" ", 0, limit) > 0 else limit)
        pieces.append(Block(text[:cut].strip(), block.heading_path, block.speaker, block.time))
        text = text[cut:].strip()
    pieces.append(Block(text, block.heading_path, block.speaker, block.time))
    return [p for p in pieces if p.text]


class _Unusable(Exception):
    """A file that parses but is not a document we can index (e.g. JSON that is not a transcript)."""


# --- dates ------------------------------------------------------------------------------------------------
def _document_date(path: Path, declared: object, mtime: datetime, declared_source: str) -> tuple[datetime, str]:
    parsed = parse_datetime(declared)
    if parsed is not None:
        return parsed.astimezone(UTC), declared_source
    match = _FILENAME_DATE.match(path.name)
    if match:
        found = parse_datetime(match.group(1))
        if found is not None:
            return found, "file name"
    return mtime, "file modification time"


# --- markdown ---------------------------------------------------------------------------------------------
# libyaml's safe loader when PyYAML was built with it (the same data as the pure-Python one, several times faster)
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """YAML frontmatter between `---` lines at the very top, and the body after it."""
    if not text.startswith("---"):
        return {}, text
    lines = text.splitlines(keepends=True)
    if lines[0].strip() != "---":
        return {}, text
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            try:
                meta = yaml.load("".join(lines[1:i]), Loader=_YAML_LOADER)  # noqa: S506 - a safe loader
            except yaml.YAMLError:
                return {}, text
            return (meta if isinstance(meta, dict) else {}), "".join(lines[i + 1 :])
    return {}, text


def clean_inline(text: str) -> str:
    """Markdown inline syntax removed: links keep their text, emphasis and code marks go."""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    text = text.replace("`", "")
    return " ".join(text.split())


def _read_markdown(path: Path, display: str, text: str, content_hash: str, mtime: datetime) -> SourceDocument:
    meta, body = split_frontmatter(text)
    blocks: list[Block] = []
    headings: list[tuple[int, str]] = []
    paragraph: list[str] = []
    title = str(meta.get("title") or "").strip()
    in_fence = False

    def flush() -> None:
        if paragraph:
            joined = clean_inline(" ".join(paragraph))
            if joined:
                blocks.append(Block(joined, tuple(h for _, h in headings)))
            paragraph.clear()

    for line in body.splitlines():
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            level, name = len(heading.group(1)), clean_inline(heading.group(2))
            headings = [(lv, h) for lv, h in headings if lv < level] + [(level, name)]
            if level == 1 and not title:
                title = name
            continue
        stripped = line.strip()
        if not stripped or _RULE.match(line) or stripped.startswith("|"):
            flush()
            continue
        item = _LIST_ITEM.match(line)
        if item:
            flush()
            paragraph.append(item.group(1))
            continue
        paragraph.append(stripped.lstrip("> ").strip())
    flush()
    when, source = _document_date(path, meta.get("date"), mtime, "frontmatter")
    entity = meta.get("entity_id")
    return SourceDocument(
        path=path,
        source=str(path),
        display=display,
        format="markdown",
        title=title or path.stem,
        blocks=blocks,
        content_hash=content_hash,
        date=when,
        date_source=source,
        entity_id=str(entity).strip() if entity not in (None, "") else None,
        metadata={k: v for k, v in meta.items() if isinstance(v, str | int | float | list)},
    )


# --- plain text -------------------------------------------------------------------------------------------
def _is_heading_line(line: str) -> bool:
    words = line.split()
    return 0 < len(words) <= 8 and not line.rstrip().endswith(_TERMINAL)


def _read_text(path: Path, display: str, text: str, content_hash: str, mtime: datetime) -> SourceDocument:
    paragraphs: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    paragraphs = [p for p in paragraphs if p]
    title, metadata = "", {}
    declared: object = None
    if paragraphs:
        head = paragraphs[0]
        if head and len(head[0].split()) <= 15 and not head[0].endswith((".", "!", "?")):
            title = head.pop(0)
        # Header lines right under the title: "Date: 2026-04-02", "Author: ...", or a byline without a period.
        while head and (_KEY_VALUE.match(head[0]) or not head[0].endswith((".", "!", "?"))):
            line = head.pop(0)
            kv = _KEY_VALUE.match(line)
            if kv:
                metadata[kv.group(1).strip().lower()] = kv.group(2).strip()
            else:
                metadata.setdefault("byline", line)
            if declared is None:
                declared = metadata.get("date") or _first_iso_date(line)
        if declared is None:
            for line in head[:2]:
                declared = _first_iso_date(line)
                if declared:
                    break
    blocks: list[Block] = []
    heading: tuple[str, ...] = ()
    for para in paragraphs:
        lines = list(para)
        if len(lines) > 1 and _is_heading_line(lines[0]):
            heading = (lines.pop(0),)
        elif len(lines) == 1 and _is_heading_line(lines[0]) and para is not paragraphs[-1]:
            heading = (lines[0],)
            continue
        current: list[str] = []
        for line in lines:
            item = _LIST_ITEM.match(line)
            if item:
                if current:
                    blocks.append(Block(" ".join(current), heading))
                    current = []
                blocks.append(Block(item.group(1).strip(), heading))
            else:
                current.append(line)
        if current:
            blocks.append(Block(" ".join(current), heading))
    when, source = _document_date(path, declared, mtime, "header")
    return SourceDocument(
        path=path,
        source=str(path),
        display=display,
        format="text",
        title=title or path.stem,
        blocks=blocks,
        content_hash=content_hash,
        date=when,
        date_source=source,
        metadata=metadata,
    )


def _first_iso_date(line: str) -> str | None:
    match = re.search(r"\b\d{4}-\d{2}-\d{2}\b", line)
    return match.group(0) if match else None


# --- chat transcripts -------------------------------------------------------------------------------------
def _read_chat(path: Path, display: str, text: str, content_hash: str, mtime: datetime) -> Conversation:
    """A JSON chat transcript, read as a conversation (see `engine.ingest.conversations`)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Unusable(f"invalid JSON ({exc.msg} at line {exc.lineno})") from None
    fallback, source = _document_date(path, None, mtime, "document")
    try:
        return read_conversation(data, path=path, display=display, content_hash=content_hash, fallback=fallback,
                                 fallback_source=source)
    except NotAConversation as exc:
        raise _Unusable(str(exc)) from None
