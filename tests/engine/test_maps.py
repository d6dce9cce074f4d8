"""Filling the page tables of the segments' memory maps ahead of the recalls (engine/index/maps.py): the pages
become resident in this process without changing a byte, only for maps, never when turned off or too large, and
a reopened store's segments are filled on the background thread."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from engine import MemoryEngine, config
from engine.clock import ManualClock
from engine.embedding import Embedder
from engine.index import candidate_segment, lexical_segment, maps
from tests.engine.test_candidate_segment import _fill

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")


def _resident_kib(path: Path) -> int:
    """Resident KiB of this process's maps of `path` (its page-table entries, from /proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
            inside = len(head) >= 6 and head[-1] == str(path)
        elif inside and line.startswith("Rss:"):
            total += int(head[1])
    return total


def _mapped_file(tmp_path: Path, name: str = "a.npy", mib: int = 4) -> tuple[Path, np.ndarray, np.ndarray]:
    values = np.random.default_rng(7).random(mib * 131072).astype(np.float64)
    path = tmp_path / name
    np.save(path, values)
    return path, values, np.load(path, mmap_mode="r").view(np.ndarray)


@linux_only
@pytest.mark.parametrize("with_madvise", [True, False], ids=["madvise", "one-read-a-page"])
def test_populate_makes_a_map_resident_without_changing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_madvise: bool
) -> None:
    if not with_madvise:
        monkeypatch.setattr(maps, "_MADVISE", None)
    path, values, mapped = _mapped_file(tmp_path)
    assert _resident_kib(path) < 1024  # a fresh map: nothing touched yet
    assert maps.populate([mapped]) == mapped.nbytes
    assert _resident_kib(path) >= 4 * 1024
    assert np.array_equal(mapped, values)


def test_only_maps_are_populated(tmp_path: Path) -> None:
    _, values, mapped = _mapped_file(tmp_path, mib=1)
    assert maps.populate([values, values[:10]]) == 0
    assert maps.populate([values, mapped[:1000]]) == 8000  # a view of a map is a map


@linux_only
def test_populate_later_fills_on_the_background_thread(tmp_path: Path) -> None:
    path, _, mapped = _mapped_file(tmp_path)
    assert maps.populate_later([mapped])
    assert maps.wait_idle(30)
    assert _resident_kib(path) >= 4 * 1024


def test_populate_later_declines_when_off_or_too_large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, values, mapped = _mapped_file(tmp_path, mib=1)
    assert not maps.populate_later([values])  # nothing mapped: nothing to do
    monkeypatch.setattr(config, "POPULATE_MAPS", False)
    assert not maps.populate_later([mapped])
    monkeypatch.setattr(config, "POPULATE_MAPS", True)
    monkeypatch.setattr(config, "POPULATE_MAPS_MAX_FRACTION", 1e-12)
    assert not maps.fits_in_memory(mapped.nbytes)
    assert not maps.populate_later([mapped])


def test_a_containers_memory_limit_bounds_what_is_filled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit = tmp_path / "memory.max"
    monkeypatch.setattr(maps, "CGROUP_MEMORY_MAX", limit)
    limit.write_text("max\n")  # unlimited: the machine's memory bounds it
    assert maps.fits_in_memory(1 << 20)
    limit.write_text(f"{4 << 20}\n")  # 4 MiB: a quarter of it is 1 MiB
    assert maps.fits_in_memory(1 << 20) and not maps.fits_in_memory((1 << 20) + 1)


def test_a_reopened_store_hands_its_segments_maps_to_be_filled(
    data_dir: Path, embedder: Embedder, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(A store this small is resident after any read, 64 KiB are mapped around each fault: the wiring is what
    is checked here, the filling above.)"""
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        _fill(engine, 30)
        before = [r.memory.id for r in engine.recall("webhook invoice")]
    handed: list[np.ndarray] = []
    for module in (candidate_segment, lexical_segment):
        monkeypatch.setattr(module, "populate_later", lambda arrays: handed.extend(arrays) or True)
    with MemoryEngine(data_dir, embedder=embedder, clock=clock) as engine:
        assert [r.memory.id for r in engine.recall("webhook invoice")] == before
        segment = engine._indexes.candidates().segment  # noqa: SLF001
        postings = engine._indexes.lexical_postings()._segment  # noqa: SLF001
        assert postings is not None
        wanted = [*segment.blocks, segment.ids, segment.sorted_ids, segment.adj_rows,
                  postings.tables["memory_text"].rows, postings.tables["window_text"].counts]
        assert all(any(a is w for a in handed) for w in wanted)
