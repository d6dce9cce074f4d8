"""Analogical structure: episode graphs (`graph`), their extraction from text (`roles`, `text`), the cheap
feature vector of the candidate stage (`features`) and SME-style structure mapping (`mapping`)."""

from engine.analogy.episode_graph import Episode
from engine.analogy.mapping import Mapping, map_episodes
from engine.analogy.text import EXTRACTOR_META_KEY, EpisodeExtractor, StructureExtractor

__all__ = ["EXTRACTOR_META_KEY", "Episode", "EpisodeExtractor", "Mapping", "StructureExtractor", "map_episodes"]
