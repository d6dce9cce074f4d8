"""Imported by the crash tests' fork server: spaCy is loaded once there, so each forked trial starts with the
model in memory (every write parses its text for the memory's structure) instead of loading it again."""

from engine.ingest.nlp import load

NLP = load()
