"""The aligned-graphs view of a mapping, on structures the real extractor wrote."""

from __future__ import annotations

from typing import Any

from engine.analogy.mapping import map_episodes
from engine.analogy.text import EpisodeExtractor, episode
from engine.recall.strategies import describe_mapping
from workbench import analogy_view


def test_the_figure_links_every_mapped_event_and_participant(extract: Any) -> None:
    cue, memory = EpisodeExtractor().extract(["The captain ignored the storm warning, so the ship sank.",
                                              "The farmer ignored the frost warning, so the orchard died."])
    m = map_episodes(episode(cue), episode(memory))
    described = describe_mapping(m, episode(cue), episode(memory))
    assert described["relations"][0]["kind"] == "causes"
    figure = analogy_view.mapping_figure(cue, memory, described)
    assert analogy_view.mapped_links(figure) == len(m.events) + len(m.participants) >= 3
    labels = [t for trace in figure.data if trace.name and trace.name.endswith("events") for t in trace.text]
    assert "ignore[omit]" in labels and "die[fail,-]" in labels
