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

Kept with the memory's structure (`encode_plot`): the sentences' own embeddings as float16, about 0.8 KB a sentence;
at most `PLOT_MAX_SENTENCES` sentences, spread evenly over a longer text.
"""

from __future__ import annotations

import base64
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


class Plot(NamedTuple):
    """A text's sentences as unit embeddings (`said`) and the same centred on their mean, unit length (`centred`;
    a row equal to the mean stays 0)."""

    said: np.ndarray
    centred: np.ndarray


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 1e-9)


def plot_of(vectors: np.ndarray) -> Plot | None:
    """The plot of a text whose sentences have these embeddings (one row each, in order; at most
    `PLOT_MAX_SENTENCES` kept, evenly spread); None under `PLOT_MIN_SENTENCES` rows."""
    if len(vectors) < PLOT_MIN_SENTENCES:
        return None
    said = _unit(np.asarray(vectors, dtype=np.float32)[kept_sentences(len(vectors))])
    return Plot(said, _unit(said - said.mean(axis=0)))


def kept_sentences(count: int) -> np.ndarray:
    """Which of `count` sentences a plot keeps (all up to `PLOT_MAX_SENTENCES`, else evenly spread)."""
    if count <= PLOT_MAX_SENTENCES:
        return np.arange(count)
    return np.unique(np.linspace(0, count - 1, PLOT_MAX_SENTENCES).round().astype(np.int64))


def plots_of_texts(sentences: Sequence[Sequence[str]], embed: Embed) -> list[Plot | None]:
    """Each text's plot from its sentences' texts: one model call for every kept sentence of every text that has a
    plot (texts of one sentence need none)."""
    kept = [[said[n] for n in kept_sentences(len(said))] if len(said) >= PLOT_MIN_SENTENCES else []
            for said in sentences]
    flat = [text for said in kept for text in said]
    out: list[Plot | None] = [None] * len(sentences)
    if not flat:
        return out
    vectors = np.asarray(embed(flat))
    start = 0
    for n, said in enumerate(kept):
        if said:
            out[n] = plot_of(vectors[start : start + len(said)])
            start += len(said)
    return out


def encode_plot(plot: Plot, sentences: int) -> dict[str, Any]:
    """A plot as the structure JSON keeps it: its sentences' embeddings as float16 in base64, the width, and how many
    sentences the text has (the kept rows' places follow from it, `kept_sentences`)."""
    data = plot.said.astype(np.float16)
    return {"dim": int(data.shape[1]), "sentences": int(sentences),
            "float16": base64.b64encode(data.tobytes()).decode()}


def decode_plot(stored: Any) -> Plot | None:
    """`encode_plot`'s entry back as a plot; None for a missing or malformed entry (never an error: a structure
    that cannot be read maps as one without a plot)."""
    if not isinstance(stored, dict):
        return None
    try:
        dim = int(stored["dim"])
        raw = np.frombuffer(base64.b64decode(stored["float16"]), dtype=np.float16)
    except (KeyError, TypeError, ValueError):
        return None
    if dim <= 0 or len(raw) % dim:
        return None
    return plot_of(raw.reshape(-1, dim).astype(np.float32))


def plot_sentences(stored: Any) -> int:
    """How many sentences the text of a stored plot has (0 without one)."""
    try:
        return int(stored["sentences"]) if isinstance(stored, dict) else 0
    except (KeyError, TypeError, ValueError):
        return 0


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


def plot_similarity(cue: Plot | None, other: Plot | None) -> float:
    """The in-order alignment's total over the geometric mean of the two lengths, in [0, 1]; 0 without two plots of
    one width."""
    if cue is None or other is None or cue.said.shape[1] != other.said.shape[1]:
        return 0.0
    _, best = _table(cue, other)
    return float(best[-1, -1] / np.sqrt(len(cue.said) * len(other.said)))


def plot_match(cue: Plot | None, other: Plot | None) -> PlotMatch:
    """`plot_similarity` with the aligned pairs, for showing which sentence maps to which."""
    score = plot_similarity(cue, other)
    if not score or cue is None or other is None:
        return PlotMatch(0.0, ())
    gain, best = _table(cue, other)
    pairs = []
    i, j = len(cue.said), len(other.said)
    while i > 0 and j > 0:
        if best[i, j] == best[i - 1, j]:
            i -= 1
        elif best[i, j] == best[i, j - 1]:
            j -= 1
        else:
            pairs.append((i - 1, j - 1, round(float(gain[i - 1, j - 1]), 4)))
            i, j = i - 1, j - 1
    return PlotMatch(score, tuple(reversed(pairs)))
