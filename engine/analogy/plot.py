"""Plots: what happens in a story, sentence by sentence, with its setting taken out.

A story's sentences are embedded (the engine's own model) and the story's mean sentence vector is subtracted
from each: what every sentence of one story shares (its domain, its characters, its objects) cancels, and what is
left is how each sentence differs from the rest of its story: the goal, the skipped step, the warning, the failure.
Two stories from different domains that tell the same plot have these centred vectors in the same order; a story
with the same words and another plot has them in another order or pointing elsewhere (docs/analogy.md, session 26).

`plot_similarity` aligns two plots in order: a monotone alignment that may skip sentences of either story, where a
pair of sentences counts the cosine of their centred vectors (when positive) discounted by how alike the two
sentences are as they were written (`SURFACE_DISCOUNT`): a sentence told again word for word is surface, not plot.
The best alignment's total over the geometric mean of the two lengths is in [0, 1]. A text of one sentence has no
plot (its centred vector is 0).

A text's sentences are found by spaCy's rule-based sentencizer (no model, about 0.5 ms a story), not by the parse, so
a cue's plot is embedded while spaCy parses it. Kept with the memory's structure (`encode_plot`): the sentences' own
embeddings as float16, about 0.8 KB a sentence, with each sentence's number and character span; at most
`PLOT_MAX_SENTENCES` sentences, spread evenly over a longer text.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

# A plot needs two sentences at least: one sentence centred on itself is the zero vector.
PLOT_MIN_SENTENCES = 2
# Longer texts keep this many sentences, evenly spread.
PLOT_MAX_SENTENCES = 32
# A pair's centred cosine is multiplied by (1 - the sentences' own cosine) ** SURFACE_DISCOUNT (chosen with the
# plot's weight on the story sets' dev split, docs/analogy.md, session 26).
SURFACE_DISCOUNT = 1.5

Embed = Callable[[list[str]], np.ndarray]
Span = tuple[int, int]


class Plot(NamedTuple):
    """A text's kept sentences as unit embeddings (`said`) and the same centred on their mean, unit length
    (`centred`; a row equal to the mean stays 0); each row's sentence number in the text (`places`) and character
    span (`spans`, empty when not known: a document's plot is made of its propositions)."""

    said: np.ndarray
    centred: np.ndarray
    places: tuple[int, ...]
    spans: tuple[Span, ...] = ()


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 1e-9)


def plot_of(vectors: np.ndarray, spans: Sequence[Span] = ()) -> Plot | None:
    """The plot of a text whose sentences have these embeddings (one row each, in order; at most
    `PLOT_MAX_SENTENCES` kept, evenly spread) and character spans (when known); None under `PLOT_MIN_SENTENCES`."""
    if len(vectors) < PLOT_MIN_SENTENCES:
        return None
    kept = kept_sentences(len(vectors))
    said = _unit(np.asarray(vectors, dtype=np.float32)[kept])
    places = tuple(kept.tolist())
    kept_spans = tuple((int(spans[n][0]), int(spans[n][1])) for n in places) if len(spans) == len(vectors) else ()
    return Plot(said, _unit(said - said.mean(axis=0)), places, kept_spans)


def kept_sentences(count: int) -> np.ndarray:
    """Which of `count` sentences a plot keeps (all up to `PLOT_MAX_SENTENCES`, else evenly spread)."""
    if count <= PLOT_MAX_SENTENCES:
        return np.arange(count)
    return np.unique(np.linspace(0, count - 1, PLOT_MAX_SENTENCES).round().astype(np.int64))


_SENTENCIZER: Any = None
_SENTENCIZER_LOCK = threading.Lock()


def sentences_of(text: str) -> list[tuple[str, Span]]:
    """A text's sentences (spaCy's rule-based sentencizer), stripped, with their character spans; blank ones left
    out."""
    global _SENTENCIZER
    with _SENTENCIZER_LOCK:  # one pipeline, its tokenizer's cache shared: one text at a time (0.5 ms a story)
        if _SENTENCIZER is None:
            import spacy

            nlp = spacy.blank("en")
            nlp.add_pipe("sentencizer")
            _SENTENCIZER = nlp
        doc = _SENTENCIZER(text)
    found = []
    for sent in doc.sents:
        said = sent.text.strip()
        if said:
            start = sent.start_char + sent.text.index(said)
            found.append((said, (start, start + len(said))))
    return found


def plots_of_texts(texts: Sequence[str], embed: Embed) -> list[dict[str, Any] | None]:
    """Each text's plot as the structure keeps it (`encode_plot`), None for a text of one sentence: one model call
    for the kept sentences of every text that has a plot."""
    return _embedded([sentences_of(text) for text in texts], embed)


def _embedded(found: list[list[tuple[str, Span]]], embed: Embed) -> list[dict[str, Any] | None]:
    """`plots_of_texts` of texts already split into sentences."""
    kept = [[said[n] for n in kept_sentences(len(said))] if len(said) >= PLOT_MIN_SENTENCES else [] for said in found]
    flat = [sentence for said in kept for sentence, _ in said]
    out: list[dict[str, Any] | None] = [None] * len(found)
    if not flat:
        return out
    vectors = np.asarray(embed(flat))
    start = 0
    for n, said in enumerate(kept):
        if said:
            plot = plot_of(vectors[start : start + len(said)], [span for _, span in said])
            if plot is not None:  # (kept rows are the text's places, not 0..k-1, when it was longer)
                places = tuple(kept_sentences(len(found[n])).tolist())
                out[n] = encode_plot(plot._replace(places=places), len(found[n]))
            start += len(said)
    return out


def encode_plot(plot: Plot, sentences: int) -> dict[str, Any]:
    """A plot as the structure JSON keeps it: its sentences' embeddings as float16 in base64, the width, how many
    sentences the text has, and each kept sentence's number and character span (when known)."""
    data = plot.said.astype(np.float16)
    entry: dict[str, Any] = {"dim": int(data.shape[1]), "sentences": int(sentences), "places": list(plot.places),
                             "float16": base64.b64encode(data.tobytes()).decode()}
    if plot.spans:
        entry["spans"] = [list(span) for span in plot.spans]
    return entry


def decode_plot(stored: Any) -> Plot | None:
    """`encode_plot`'s entry back as a plot; None for a missing or malformed entry (never an error: a structure
    that cannot be read maps as one without a plot)."""
    if not isinstance(stored, dict):
        return None
    try:
        dim = int(stored["dim"])
        raw = np.frombuffer(base64.b64decode(stored["float16"]), dtype=np.float16)
        rows = len(raw) // dim if dim > 0 else 0
        places = tuple(int(n) for n in stored.get("places", range(rows)))
        spans = tuple((int(a), int(b)) for a, b in stored.get("spans", ()))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    if dim <= 0 or len(raw) % dim or rows < PLOT_MIN_SENTENCES or len(places) != rows or len(spans) not in (0, rows):
        return None
    plot = plot_of(raw.reshape(rows, dim).astype(np.float32))
    return plot._replace(places=places, spans=spans) if plot is not None else None


_SIDE: Any = None


def plots_meanwhile(texts: Sequence[str], embed: Embed) -> Callable[[], list[dict[str, Any] | None]]:
    """`plots_of_texts`, its model call begun on a thread of its own (the model releases the GIL), so a cue's plot is
    embedded while spaCy parses it: what to call for the answer. Texts of one sentence need no thread."""
    found = [sentences_of(text) for text in texts]
    if all(len(said) < PLOT_MIN_SENTENCES for said in found):
        return lambda: [None] * len(found)
    global _SIDE
    with _SENTENCIZER_LOCK:
        if _SIDE is None:
            from concurrent.futures import ThreadPoolExecutor

            _SIDE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hebbs-plot")
    return _SIDE.submit(_embedded, found, embed).result


class PlotMatch(NamedTuple):
    """How two plots line up: the score, and the aligned sentence pairs (cue row, other row, cosine)."""

    score: float
    pairs: tuple[tuple[int, int, float], ...]


def _table(cue: Plot, other: Plot) -> tuple[np.ndarray, np.ndarray]:
    """What each pair of sentences counts (their centred cosine, when positive, discounted by their own cosine) and
    the alignment's DP table: best[i, j] is the best total of an in-order alignment of the first i cue rows with the
    first j other rows."""
    surface = np.clip(cue.said @ other.said.T, 0.0, 1.0).astype(np.float64)
    gain = np.maximum(cue.centred @ other.centred.T, 0.0).astype(np.float64) * (1.0 - surface) ** SURFACE_DISCOUNT
    n, m = gain.shape
    best = np.zeros((n + 1, m + 1))
    for i in range(n):  # best[i+1, j+1] = max(best[i, j+1], best[i+1, j], best[i, j] + gain[i, j]): row by row
        step = np.maximum(best[i, 1:], best[i, :-1] + gain[i])
        best[i + 1, 1:] = np.maximum.accumulate(step)
    return gain, best


def _aligned(cue: Plot | None, other: Plot | None) -> tuple[float, np.ndarray, np.ndarray] | None:
    """The alignment's score (its total over the geometric mean of the two lengths), pair gains and DP table; None
    without two plots of one width."""
    if cue is None or other is None or cue.said.shape[1] != other.said.shape[1]:
        return None
    gain, best = _table(cue, other)
    return float(best[-1, -1] / np.sqrt(len(cue.said) * len(other.said))), gain, best


def plot_similarity(cue: Plot | None, other: Plot | None) -> float:
    """The in-order alignment's total over the geometric mean of the two lengths, in [0, 1]; 0 without two plots of
    one width."""
    aligned = _aligned(cue, other)
    return aligned[0] if aligned is not None else 0.0


def plot_match(cue: Plot | None, other: Plot | None) -> PlotMatch:
    """`plot_similarity` with the aligned pairs, for showing which sentence maps to which."""
    aligned = _aligned(cue, other)
    if aligned is None or not aligned[0]:
        return PlotMatch(0.0, ())
    score, gain, best = aligned
    pairs = []
    i, j = best.shape[0] - 1, best.shape[1] - 1
    while i > 0 and j > 0:
        if best[i, j] == best[i - 1, j]:
            i -= 1
        elif best[i, j] == best[i, j - 1]:
            j -= 1
        else:
            pairs.append((i - 1, j - 1, round(float(gain[i - 1, j - 1]), 4)))
            i, j = i - 1, j - 1
    return PlotMatch(score, tuple(reversed(pairs)))
