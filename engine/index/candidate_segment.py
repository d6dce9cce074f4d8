"""`CandidateSegment`: the candidate table's columns as files in the data dir, memory-mapped when opened.

Built from the record store on every open, the candidate table (engine/index/candidates.py) made reopening
cost a pass over every memory (about 7 s at 100,000 memories on a busy 2-core machine). A segment keeps
the same columns as flat arrays under `<data dir>/candidates/`, opened as memory maps: opening reads a small
JSON description and checks each file's CRC-32 (sequential reads through the operating system's cache, not
copies in the process); a recall touches only its candidates' pages.

Columns, by row number: the embedding (float32, in one or more *blocks*, each a file), the memory id (fixed
width bytes), whether the row is alive, the episode key and entity as codes into one string table, and the
row's `followed_by` neighbours (both directions) as a compressed sparse row (`adj_starts`, `adj_rows`:
row numbers). The live rows' ids, sorted, with their rows (`sorted_ids`, `sorted_rows`) answer id -> row
through a hash table over them (engine/index/id_hash.py, made on first use), vectorised; a few ids (`FEW_IDS`)
by a binary search. A row is never changed in place: a changed memory gets a new row and its old one is marked
dead when the next segment is written.

A segment is immutable and describes the store at one change number (`seq`). The table keeps the changes
since in memory and writes a new segment once they grow (`CandidateTable.saved_segment`): the embedding
blocks already on disk are shared with it and only the rows added since are written, as a new block (folded
with the last blocks when those are smaller, so there are few blocks); the per-row columns, a few dozen
bytes per memory, are written whole. The description names its files; `CURRENT` names the current
description (replaced atomically); files no description names are removed. Writers on one data dir take
`LOCK` (a file lock) for the whole save, so two processes never remove each other's files mid-save.

`load` answers None for a segment that is missing, of another store (the store's key meta), ahead of the
store (a restored backup), or damaged (a CRC-32 or shape that disagrees with the description): the caller
rebuilds it from the record store, which stays the truth.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import logging
import mmap
import os
import secrets
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.index.id_hash import IdHash
from engine.index.lexical_segment import Strings, file_crc32
from engine.index.maps import populate_later
from engine.index.sorted_rows import positions_in

log = logging.getLogger(__name__)

DIRNAME = "candidates"  # under the data dir
FORMAT = 1
_POINTER = "CURRENT"
_LOCK = "LOCK"
_COLUMNS = ("ids", "alive", "episodes", "entities", "strings.blob", "strings.at", "sorted_ids", "sorted_rows",
            "adj_starts", "adj_rows")


# Up to this many ids, `CandidateSegment.find` binary-searches them instead of hashing: the catch-up after writes
# looks its memories up one at a time, where the hash's fixed cost per call (about 12 us) made the first default
# recall after a 100k build 2 s slower than the search (about 2 us for one id).
FEW_IDS = 16


@dataclass(frozen=True, slots=True)
class CandidateSegment:
    """Every row's columns as of change `seq` of the store whose key is `store_key` (see the module's text)."""

    seq: int
    store_key: str
    blocks: tuple[np.ndarray, ...]  # float32 (rows, width) each; together, every row's embedding in order
    block_files: tuple[tuple[str, int], ...]  # each block's file name and CRC-32 ("", 0: held in memory)
    ids: np.ndarray  # S: by row (a dead row keeps its id)
    alive: np.ndarray  # bool by row
    episodes: np.ndarray  # int32 by row: its episode key's index in `strings`
    entities: np.ndarray  # int32 by row: its entity id's index in `strings`, -1 for none
    strings: list[str]
    sorted_ids: np.ndarray  # S: the live rows' ids, sorted
    sorted_rows: np.ndarray  # int64: their rows
    adj_starts: np.ndarray  # int64, rows + 1
    adj_rows: np.ndarray  # int32: row r's followed_by neighbours are adj_rows[adj_starts[r]:adj_starts[r + 1]]
    _lookup: list[IdHash] = field(init=False, default_factory=list, compare=False, repr=False)  # `_hashed`

    @property
    def rows(self) -> int:
        return len(self.alive)

    @property
    def live(self) -> int:
        return len(self.sorted_rows)

    @property
    def width(self) -> int:
        return self.blocks[0].shape[1] if self.blocks else 0

    def find(self, ids: Sequence[str]) -> np.ndarray:
        """Each id's live row in this segment, or -1 (int64, one per id)."""
        if not len(self.sorted_ids) or not ids:
            return np.full(len(ids), -1, dtype=np.int64)
        encoded = [i.encode() for i in ids]  # once: a recall looks up a thousand ids or more
        # (fromiter: the same array as np.array(encoded, dtype), in a sixth of the time)
        keys = np.fromiter(encoded, dtype=self.sorted_ids.dtype, count=len(encoded))  # longer ids: truncated, then
        # told apart below; a few ids by binary search: it costs less than hashing them (and needs no table)
        at = positions_in(self.sorted_ids, keys) if len(keys) <= FEW_IDS else self._hashed().positions(keys)
        rows = np.where(at >= 0, self.sorted_rows[at], -1)
        width = self.sorted_ids.dtype.itemsize
        if width < max(map(len, encoded), default=0):
            rows = np.array([r if r < 0 or len(e) <= width else -1
                             for e, r in zip(encoded, rows.tolist(), strict=True)], dtype=np.int64)
        return rows

    def _hashed(self) -> IdHash:
        """The live ids' hash table (`find`), made on first use (0.8 s at a million ids) and kept with the segment."""
        if not self._lookup:
            self._lookup.append(IdHash(np.asarray(self.sorted_ids)))  # (two threads may both make it: the same)
        return self._lookup[0]

    def id_at(self, rows: Sequence[int] | np.ndarray) -> list[str]:
        return [b.decode() for b in self.ids[np.asarray(rows, dtype=np.int64)].tolist()]

    def embeddings_at(self, rows: np.ndarray) -> np.ndarray:
        """The embeddings of the given rows (int64 array), one row each."""
        if len(self.blocks) == 1:
            return self.blocks[0][rows]
        out = np.empty((len(rows), self.width), dtype=np.float32)
        start = 0
        for block in self.blocks:
            end = start + len(block)
            hit = np.flatnonzero((rows >= start) & (rows < end))
            if len(hit):
                out[hit] = block[rows[hit] - start]
            start = end
        return out

    def products(self, cue: np.ndarray) -> np.ndarray:
        """Every row's embedding . cue (float32), in row order."""
        if not self.blocks:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate([row_dots(block, cue) for block in self.blocks])

    # --- files -------------------------------------------------------------------------------------------------
    def save(self, folder: Path) -> CandidateSegment:
        """Write the segment's new files under `folder` (blocks with a file name are already there), point
        `CURRENT` at its description and remove the files no description names; answer the segment mapped
        back from its files. Raises OSError when it cannot be written."""
        folder.mkdir(parents=True, exist_ok=True)
        segment = self
        with _locked(folder):
            if any(name and not (folder / name).exists() for name, _ in self.block_files):
                # another writer folded a block this one shares into a larger one: write them all again
                segment = dataclasses.replace(self, blocks=(np.concatenate(self.blocks),), block_files=(("", 0),))
            token = f"{self.seq}-{secrets.token_hex(4)}"
            blocks: list[dict[str, object]] = []
            for block, (name, crc) in zip(segment.blocks, segment.block_files, strict=True):
                if not name:
                    name = f"block-{token}-{len(blocks)}.npy"
                    crc = _write(folder / name, block)
                blocks.append({"file": name, "crc32": crc, "rows": len(block)})
            arrays = _columns(segment)
            files = {}
            for key, array in arrays.items():
                name = f"{key}-{token}.npy"
                files[key] = {"file": name, "crc32": _write(folder / name, array), "shape": list(array.shape)}
            description = {"format": FORMAT, "seq": self.seq, "store_key": self.store_key, "width": self.width,
                           "blocks": blocks, "files": files}
            name = f"segment-{token}.json"
            (folder / name).write_text(json.dumps(description))
            pointer = folder / f"{_POINTER}.{token}"
            pointer.write_text(name)
            os.replace(pointer, folder / _POINTER)
            named = {name, _POINTER, _LOCK, *(b["file"] for b in blocks), *(f["file"] for f in files.values())}
            for old in folder.iterdir():
                if old.name not in named:
                    old.unlink(missing_ok=True)
            # mapped back (its pages then belong to the OS's cache); the CRCs were just computed from the files
            return CandidateSegment._described(folder, name, self.store_key, verify=False)

    @classmethod
    def load(cls, folder: Path, store_key: str, store_seq: int) -> CandidateSegment | None:
        """The current segment under `folder`, memory-mapped; None when there is none or it cannot be used
        (another store's, ahead of the store's change `store_seq`, or damaged: logged)."""
        pointer = folder / _POINTER
        if not pointer.exists():
            return None
        try:
            name = pointer.read_text().strip()
            description = json.loads((folder / name).read_text())
            if description["format"] != FORMAT or description["store_key"] != store_key:
                return None
            if description["seq"] > store_seq:
                log.warning("candidate segment under %s is ahead of the store; rebuilding it", folder)
                return None
            return cls._described(folder, name, store_key, verify=True)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("candidate segment under %s unusable (%s); rebuilding it from the record store", folder, exc)
            return None

    @classmethod
    def _described(cls, folder: Path, name: str, store_key: str, verify: bool) -> CandidateSegment:
        """The segment the description `name` describes, its files mapped (`verify`: their CRC-32s checked)."""
        description = json.loads((folder / name).read_text())
        if verify:  # every file read once, on both cores (reading and zlib release the GIL)
            specs = [*description["blocks"], *description["files"].values()]
            with ThreadPoolExecutor(max_workers=2) as pool:
                sums = list(pool.map(file_crc32, [folder / spec["file"] for spec in specs]))
            for spec, crc in zip(specs, sums, strict=True):
                if crc != spec["crc32"]:
                    raise ValueError(f"{spec['file']}: CRC-32 differs")
        blocks = []
        for spec in description["blocks"]:
            block = _read(folder / spec["file"])
            if block.shape != (spec["rows"], description["width"]) or block.dtype != np.float32:
                raise ValueError(f"{spec['file']}: shape differs")
            blocks.append(block)
        arrays = {}
        for key in _COLUMNS:
            spec = description["files"][key]
            arrays[key] = _read(folder / spec["file"])
            if list(arrays[key].shape) != spec["shape"]:
                raise ValueError(f"{spec['file']}: shape differs")
        segment = cls(
            description["seq"], store_key, tuple(blocks),
            tuple((b["file"], b["crc32"]) for b in description["blocks"]),
            arrays["ids"], arrays["alive"], arrays["episodes"], arrays["entities"],
            Strings(arrays["strings.blob"], arrays["strings.at"]).tolist(),
            arrays["sorted_ids"], arrays["sorted_rows"], arrays["adj_starts"], arrays["adj_rows"],
        )
        _check(segment)
        populate_later([*blocks, *arrays.values()])  # recalls read them scattered: no fault per first touch
        return segment


def assemble(seq: int, store_key: str, blocks: tuple[np.ndarray, ...], block_files: tuple[tuple[str, int], ...],
             ids: np.ndarray, alive: np.ndarray, episodes: np.ndarray, entities: np.ndarray, strings: list[str],
             links: tuple[np.ndarray, np.ndarray]) -> CandidateSegment:
    """A segment from its columns by row: `ids` (an `S` array), `alive`, `episodes` and `entities` (codes into
    `strings`; -1: no entity), their embeddings in `blocks`; `links`: every followed_by link as (row, neighbour
    row) pairs, both directions (repeats are dropped)."""
    live = np.flatnonzero(alive)
    order = live[np.argsort(ids[live], kind="stable")]
    source, target = links
    if len(source):
        pairs = np.unique(np.stack([source, target], axis=1), axis=0)
        source, target = pairs[:, 0], pairs[:, 1]
    starts = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(source, minlength=len(ids)), out=starts[1:])
    return CandidateSegment(seq, store_key, blocks, block_files, ids, np.asarray(alive, dtype=bool), episodes,
                            entities, strings, ids[order], order.astype(np.int64), starts, target.astype(np.int32))


def encode_ids(ids: Sequence[str], width: int = 1) -> np.ndarray:
    """Ids as a fixed-width bytes (`S`) array, at least `width` wide."""
    return np.array([i.encode() for i in ids], dtype=f"S{max([width, *(len(i.encode()) for i in ids)])}")


def row_dots(matrix: np.ndarray, cue: np.ndarray) -> np.ndarray:
    """Each row . cue, summed the same way whatever the row's place in whichever matrix (a BLAS product's last
    bits depend on both): an exact search ranks the same on a segment's blocks as on one rebuilt matrix."""
    if not len(matrix):
        return np.zeros(0, dtype=np.float32)
    return np.einsum("ij,j->i", matrix, cue)


def _columns(segment: CandidateSegment) -> dict[str, np.ndarray]:
    strings = Strings.of(segment.strings)
    return {"ids": segment.ids, "alive": segment.alive, "episodes": segment.episodes, "entities": segment.entities,
            "strings.blob": strings.blob, "strings.at": strings.at, "sorted_ids": segment.sorted_ids,
            "sorted_rows": segment.sorted_rows, "adj_starts": segment.adj_starts, "adj_rows": segment.adj_rows}


def _check(segment: CandidateSegment) -> None:
    """The shapes agree with each other (the CRCs vouch for the contents)."""
    rows = segment.rows
    if sum(len(b) for b in segment.blocks) != rows or len(segment.ids) != rows:
        raise ValueError("blocks and ids disagree")
    if len(segment.episodes) != rows or len(segment.entities) != rows or len(segment.adj_starts) != rows + 1:
        raise ValueError("columns disagree")
    if int(segment.adj_starts[-1]) != len(segment.adj_rows) or len(segment.sorted_ids) != len(segment.sorted_rows):
        raise ValueError("links or the id index disagree")
    if len(segment.sorted_rows) != int(np.count_nonzero(segment.alive)):
        raise ValueError("the id index and the live rows disagree")


def _write(path: Path, array: np.ndarray) -> int:
    """Save an array as .npy (flushed to disk) and answer the file's CRC-32."""
    with path.open("wb") as f:
        np.save(f, np.ascontiguousarray(array))
        f.flush()
        os.fsync(f.fileno())
    return file_crc32(path)


def _read(path: Path) -> np.ndarray:
    array = np.load(path, mmap_mode="r")
    if not array.size:  # empty arrays cannot be mapped
        return np.load(path)
    opened = getattr(array, "_mmap", None)
    if opened is not None and hasattr(mmap, "MADV_RANDOM"):
        # A recall reads a few thousand rows scattered over the file: no read-ahead around each one from disk.
        # (Pages already cached are still mapped 64 KiB around each touched row: a first default recall at
        # 100,000 memories maps some 120 MiB of the embeddings, clean file pages the OS can drop at will.)
        opened.madvise(mmap.MADV_RANDOM)
    # A plain view of the map: numpy's memmap subclass costs microseconds per indexing.
    return array.view(np.ndarray)


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    with (folder / _LOCK).open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
