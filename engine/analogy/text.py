"""Structures for texts: parse with spaCy (batched), build the episode, and store it with its features.

A structure is the JSON object kept in the record store's `structure` column:
`{"version", "extractor", "graph", "features", "self"}` where `graph` is the episode, `features` the
MAC-stage vector and `self` the episode's self-match (the mapper's normaliser), computed once at write time,
and, for a text of two sentences or more read by an extractor given the engine's model, `plot`: its sentences'
embeddings with the text's setting taken out (engine/analogy/plot.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from engine.analogy.episode_graph import GRAPH_VERSION, Episode, merge
from engine.analogy.features import features_of
from engine.analogy.mapping import self_score
from engine.analogy.plot import Embed, Plot, decode_plot, encode_plot, plot_of, plots_meanwhile, plots_of_texts
from engine.analogy.roles import episode_of

# Stored structures kept parsed (`stored_episode`, by their JSON text): a few MiB.
STORED_EPISODE_CACHE = 4096
# Texts per spaCy `pipe` batch (here and in ingestion's analysis).
SPACY_BATCH_SIZE = 64

if TYPE_CHECKING:
    from spacy.tokens import Span

# Store meta key naming the extractor that wrote a store's structures, so cues are read the same way.
EXTRACTOR_META_KEY = "structure_extractor"


class StructureExtractor(Protocol):
    name: str

    def extract(self, texts: Sequence[str]) -> list[dict[str, Any]]:
        """One structure per text, each with at least a `features` list."""
        ...


def structure_of(ep: Episode, extractor: str = "episode", plot: dict[str, Any] | None = None) -> dict[str, Any]:
    """The structure JSON of an episode; `plot`: its text's plot as `encode_plot` keeps it."""
    structure = {
        "version": GRAPH_VERSION,
        "extractor": extractor,
        "graph": ep.to_json(),
        "features": features_of(ep),
        "self": round(self_score(ep), 4),
    }
    if plot is not None:
        structure["plot"] = plot
    return structure


def structure_of_span(span: Span) -> dict[str, Any]:
    """The structure of one parsed sentence or clause (used by document ingestion)."""
    return structure_of(episode_of(span))


def merged_structure(structures: Sequence[dict[str, Any]], vectors: np.ndarray | None = None) -> dict[str, Any]:
    """A whole document as one episode: its propositions' episodes in order; its plot from the propositions'
    embeddings (`vectors`, one row each, in order: no model call)."""
    plot = plot_of(vectors) if vectors is not None else None
    entry = encode_plot(plot, len(vectors)) if plot is not None and vectors is not None else None
    return structure_of(merge([Episode.from_json(s.get("graph")) for s in structures]), plot=entry)


def episode(structure: dict[str, Any]) -> Episode:
    return Episode.from_json(structure.get("graph"))


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    """A stored structure read for mapping: its episode, MAC features and self-match. Shared between
    recalls: nothing may change it."""

    episode: Episode
    features: tuple[str, ...]
    self_score: float | None
    plot: Plot | None = None


@lru_cache(maxsize=STORED_EPISODE_CACHE)
def stored_episode(text: str) -> StoredEpisode | None:
    """A structure's JSON text (as the record store keeps it) parsed, once per distinct text: analogical
    recall maps the same memories' episodes cue after cue, and parsing the JSON and building the episode
    cost more than mapping it. Keyed by the text itself, so a changed structure is a new entry. None for an
    empty structure (nothing to map)."""
    structure = json.loads(text)
    if not structure:
        return None
    raw_self = structure.get("self")
    return StoredEpisode(episode(structure), tuple(structure.get("features", [])),
                         None if raw_self is None else float(raw_self), decode_plot(structure.get("plot")))


class EpisodeExtractor:
    """Episode graphs from spaCy's parse. spaCy is loaded on the first call; texts are parsed in batches.
    Given `embed` (the engine's model), texts of two sentences or more also get their plot: one model call for
    every sentence of the batch."""

    name = "episode"

    def __init__(self, batch_size: int = SPACY_BATCH_SIZE, embed: Embed | None = None) -> None:
        self.batch_size = batch_size
        self.embed = embed

    def extract(self, texts: Sequence[str]) -> list[dict[str, Any]]:
        from engine.ingest.nlp import load

        nlp = load()
        # One text (a recall's cue, a single remember): `nlp(text)` gives the same Doc as `nlp.pipe([text])`
        # byte for byte, without the batching generators around each component (0.2 ms of a cue's 7-8).
        # A single text (a recall's cue) has its plot embedded on a side thread while spaCy parses it.
        plotted = plots_meanwhile(texts, self.embed) if self.embed is not None and len(texts) == 1 else None
        docs = [nlp(texts[0])] if len(texts) == 1 else list(nlp.pipe(list(texts), batch_size=self.batch_size))
        plots: list[dict[str, Any] | None] = [None] * len(docs)
        if plotted is not None:
            plots = plotted()
        elif self.embed is not None:
            plots = plots_of_texts(texts, self.embed)
        return [structure_of(episode_of(doc), plot=plot) for doc, plot in zip(docs, plots, strict=True)]

