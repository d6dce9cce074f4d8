"""What the CLI prints: always valid UTF-8, and human output that cannot drive the terminal.

Stored text is untrusted: content, entity ids and file names may hold escape sequences (ESC [ 2 J clears a
screen, OSC 8 forges links) or rich markup (`[red]`). Human output shows each control character as a
visible escape (`\\x1b`) and hands rich plain `Text`, never markup. JSON escapes control characters by
itself; a lone surrogate left by an older version of the store becomes U+FFFD instead of invalid UTF-8.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import unicodedata
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def ensure_utf8_streams() -> None:
    """stdout and stderr write UTF-8 and replace what cannot be encoded rather than crash half-way."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # A stream already written in another encoding keeps it.
            with contextlib.suppress(ValueError, OSError):
                reconfigure(encoding="utf-8", errors="replace")


def valid_unicode(text: str) -> str:
    """`text` with any lone surrogate replaced, so it encodes to valid UTF-8."""
    return _SURROGATE.sub(REPLACEMENT, text)


def json_text(payload: Any) -> str:
    """Indented JSON, non-ASCII kept readable, guaranteed to encode as valid UTF-8."""
    return valid_unicode(json.dumps(payload, ensure_ascii=False, indent=2))


def _visible(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: str, *, keep_newlines: bool = False) -> str:
    """`text` safe for a terminal: control and format characters (ESC, CR, BEL, bidi overrides, ...) shown
    as visible escapes; newlines kept only when asked."""
    out = []
    for char in valid_unicode(text):
        if keep_newlines and char == "\n":
            out.append(char)
        elif unicodedata.category(char) in ("Cc", "Cf") and char not in ("\u200d",):  # ZWJ keeps emoji whole
            out.append(_visible(char))
        else:
            out.append(char)
    return "".join(out)


def cell(value: object) -> Any:
    """A rich table cell: plain text, never interpreted as markup."""
    from rich.text import Text

    return Text(plain(str(value)))
