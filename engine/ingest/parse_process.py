"""spaCy in a process of its own (`config.PARSE_IN_PROCESS`): at ingest the parse of the next batch then runs
on the other core for real, where a thread's parse queues for the GIL with the drafting of the current batch.

The child loads the same pipeline (`engine.ingest.nlp.load`, the ISO-date tokenizer rule included), parses a
batch's blocks under the same per-document time budget, and sends each doc back as `Doc.to_bytes`; the parent
rebuilds them on its own vocabulary (`from_bytes`: about 0.18 s of CPU for the 281 sample blocks whose parse
takes 2.4 s). What is stored is the same as with the parse in this process (tests/ingest/test_overlap.py).
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from engine.ingest.budget import TimeBudget

if TYPE_CHECKING:
    from spacy.language import Language

_lock = threading.Lock()
_executor: ProcessPoolExecutor | None = None


def parse_blocks(nlp: Language, blocks: Sequence[Sequence[str]], budget: TimeBudget,
                 batch_size: int) -> Iterator[tuple[Any, tuple[int, int]]]:
    """spaCy's parse of every document's blocks, batched, each charged to its document's budget; a document
    over budget gets no more blocks (spaCy pulls them lazily)."""

    def texts() -> Iterator[tuple[str, tuple[int, int]]]:
        for d, doc_blocks in enumerate(blocks):
            for b, text in enumerate(doc_blocks):
                if d not in budget.over:
                    yield text, (d, b)

    mark = time.perf_counter()
    for doc, (d, b) in nlp.pipe(texts(), as_tuples=True, batch_size=batch_size):
        now = time.perf_counter()
        if not budget.charge(d, now - mark):
            yield doc, (d, b)
        mark = now


def _warm() -> None:
    """The child's initializer: load the pipeline once, before the first batch arrives."""
    from engine.ingest.nlp import load

    load()


def _parse_in_child(blocks: list[list[str]], budget: TimeBudget,
                    batch_size: int) -> tuple[list[tuple[bytes, tuple[int, int]]], TimeBudget]:
    from engine.ingest.nlp import load

    parsed = [(doc.to_bytes(), where) for doc, where in parse_blocks(load(), blocks, budget, batch_size)]
    return parsed, budget


def _pool() -> ProcessPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            # spawn, not fork: the parent runs onnxruntime and Chroma threads that a fork would copy mid-flight
            _executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_warm)
        return _executor


def start() -> None:
    """Start the child (it loads spaCy meanwhile), so its start-up overlaps the parent's."""
    _pool()


def _forget_broken() -> None:
    global _executor
    with _lock:
        broken, _executor = _executor, None
    if broken is not None:
        broken.shutdown(wait=False)


def stop() -> None:
    """Stop the child (it is started again when needed); also done at interpreter exit."""
    global _executor
    with _lock:
        if _executor is not None:
            _executor.shutdown(wait=True)
            _executor = None


def parse(blocks: list[list[str]], budget: TimeBudget, batch_size: int) -> list[tuple[Any, tuple[int, int]]]:
    """Each document's blocks (texts) parsed in the child process; `budget` gains what the child charged."""
    from spacy.tokens import Doc

    from engine.ingest.nlp import load

    sent = TimeBudget(budget.seconds, dict(budget.spent), set(budget.over))
    try:
        parsed, charged = _pool().submit(_parse_in_child, blocks, sent, batch_size).result()
    except BrokenProcessPool:
        # the child died (killed, out of memory): a new one parses the batch once more; if it dies too, the
        # error is the batch's (the pipeline then analyses its documents one by one)
        _forget_broken()
        try:
            parsed, charged = _pool().submit(_parse_in_child, blocks, sent, batch_size).result()
        except BrokenProcessPool:
            _forget_broken()
            raise
    budget.spent.update(charged.spent)
    budget.over |= charged.over
    vocab = load().vocab
    return [(Doc(vocab).from_bytes(data), where) for data, where in parsed]
