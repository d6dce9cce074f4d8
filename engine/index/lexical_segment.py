"""`LexicalSegment`: every posting list of both lexical tables as flat arrays, kept in files in the data dir.

BM25 over SQLite's FTS5 vocabulary views reads each cue term's postings through a virtual table, about
8.5 us per occurrence: on a 100,000-memory store a cue's first recall spent most of its time there. A segment
holds the whole index as numpy arrays instead (per table: the terms as one UTF-8 blob with offsets, each
term's postings as a slice of a row-number array and an occurrence array, each row's length; and each row
number's memory id), saved as .npy files under `<data dir>/lexical/` and opened as memory maps: opening one
checks each file's CRC-32 (one sequential read) but copies nothing into the process, a recall touches only
its cue terms' pages, and the pages are the operating system's cache, shared by every process on the store.

A segment is immutable and describes the store at one change number (`seq`); `engine/index/postings.py`
keeps the changes since in memory and writes a merged segment (`merged`, then `save`) once they grow.
`load` answers None for a segment that is missing, of another store (the store's `lexical_segment_key`
meta), written ahead of the store (a store restored from a backup), or damaged (any file whose CRC-32 or
shape disagrees with the description): the caller rebuilds it from the record store (`from_dump`),
which stays the truth.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.index.maps import populate_later
from engine.store.lexical import TABLES, LexicalDump, TablePostings

log = logging.getLogger(__name__)

DIRNAME = "lexical"  # under the data dir
FORMAT = 1
_POINTER = "CURRENT"  # names the current segment's folder; replaced atomically
_DESCRIPTION = "segment.json"

# A document as the change log's catch-up reads it: (length in tokens, {term: occurrences}).
Document = tuple[int, Mapping[str, int]]


class Strings:
    """Strings as one UTF-8 blob and offsets (string n is blob[at[n]:at[n + 1]]): no object per string."""

    def __init__(self, blob: np.ndarray, at: np.ndarray) -> None:
        self.blob, self.at = blob, at

    @classmethod
    def of(cls, items: Sequence[str]) -> Strings:
        encoded = [s.encode() for s in items]
        at = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=at[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), at)

    def __len__(self) -> int:
        return len(self.at) - 1

    def raw(self, n: int) -> bytes:
        return self.blob[int(self.at[n]) : int(self.at[n + 1])].tobytes()

    def fixed(self, rows: np.ndarray) -> np.ndarray:
        """Strings `rows` as one fixed-width bytes array (NUL-padded, as numpy's `S` type is): sorting it sorts
        by the strings' bytes, and nothing is decoded."""
        if not len(self.blob):
            return np.full(len(rows), b"", dtype="S1")
        start, end = self.at[rows], self.at[rows + 1]
        width = max(1, int((end - start).max(initial=0)))
        at = start[:, None] + np.arange(width)
        block = np.where(at < end[:, None], self.blob[np.minimum(at, len(self.blob) - 1)], 0)
        return np.ascontiguousarray(block.astype(np.uint8)).view(f"S{width}").ravel()

    def tolist(self) -> list[str]:
        data, at = self.blob.tobytes(), self.at.tolist()
        return [data[a:b].decode() for a, b in zip(at[:-1], at[1:], strict=True)]

    def find(self, key: bytes, order: np.ndarray | None = None) -> int:
        """The index of `key` among strings sorted by their bytes (taken in `order`, when given), or -1."""
        lo, hi = 0, len(self) if order is None else len(order)
        while lo < hi:  # a binary search over the blob, decoding nothing
            mid = (lo + hi) // 2
            if self.raw(mid if order is None else int(order[mid])) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo == (len(self) if order is None else len(order)):
            return -1
        n = lo if order is None else int(order[lo])
        return n if self.raw(n) == key else -1


@dataclass(frozen=True, slots=True)
class TableArrays:
    """One lexical table: term n's postings are rows[starts[n]:starts[n + 1]] (ascending) with their counts;
    `lengths[row]` is the row's length in tokens (0: no row)."""

    terms: Strings
    starts: np.ndarray  # int64
    rows: np.ndarray  # int32
    counts: np.ndarray  # int32
    lengths: np.ndarray  # int32, by row number

    def span(self, term: str) -> tuple[int, int]:
        """Where the term's postings are in `rows` and `counts` ((0, 0): it has none)."""
        n = self.terms.find(term.encode())
        return (0, 0) if n < 0 else (int(self.starts[n]), int(self.starts[n + 1]))

    @classmethod
    def of(cls, table: TablePostings, width: int) -> TableArrays:
        lengths = np.zeros(width, dtype=np.int32)
        lengths[table.numbered] = table.lengths
        return cls(Strings.of(table.terms), table.starts, table.rows, table.counts, lengths)


@dataclass(frozen=True, slots=True)
class LexicalSegment:
    """Both tables' arrays and each row number's memory id ("" for none), as of change `seq` of the store
    whose `lexical_segment_key` is `store_key`."""

    seq: int
    store_key: str
    ids: Strings  # by row number
    id_order: np.ndarray  # int64: the row numbers that hold a memory, sorted by its id's bytes
    tables: Mapping[str, TableArrays]

    @property
    def width(self) -> int:
        """One past the highest row number the segment describes."""
        return len(self.ids)

    @property
    def live(self) -> int:
        """Rows that hold a memory."""
        return len(self.id_order)

    def row_of(self, memory_id: str) -> int:
        """The row number of a memory, or -1."""
        return self.ids.find(memory_id.encode(), self.id_order)

    def id_at(self, row: int) -> str:
        return self.ids.raw(row).decode() if 0 <= row < self.width else ""

    @classmethod
    def from_dump(cls, dump: LexicalDump, store_key: str) -> LexicalSegment:
        width = 1 + max([int(dump.row_numbers.max(initial=0))]
                        + [int(t.numbered.max(initial=0)) for t in dump.tables.values()])
        ids = [""] * width
        for row, memory_id in zip(dump.row_numbers.tolist(), dump.row_ids, strict=True):
            ids[row] = memory_id
        return _assemble(dump.seq, store_key, ids, {t: TableArrays.of(dump.tables[t], width) for t in TABLES})

    def merged(self, seq: int, stale: np.ndarray, ids: Mapping[int, str],
               docs: Mapping[str, Mapping[int, Document]]) -> LexicalSegment:
        """This segment without its `stale` rows (a bool per row number: rows changed since), plus the rows
        changed since, as of change `seq`: `ids` (row -> memory id, "" for a row that went) and each table's
        `docs` (row -> document)."""
        width = max([self.width, *(r + 1 for r in ids)])
        stale = np.concatenate([stale[: self.width], np.zeros(max(0, self.width - len(stale)), dtype=bool)])
        names = self.ids.tolist() + [""] * (width - self.width)
        for row in np.flatnonzero(stale).tolist():
            names[row] = ""
        for row, memory_id in ids.items():
            names[row] = memory_id
        return _assemble(seq, self.store_key, names,
                         {t: _merge_table(self.tables[t], stale, docs.get(t, {}), width) for t in TABLES})

    # --- files ---------------------------------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write the segment into a new folder under `folder`, then point `CURRENT` at it (an atomic rename:
        a reader sees the old segment or the new one, whole) and remove the older folders."""
        folder.mkdir(parents=True, exist_ok=True)
        name = f"seg-{self.seq}-{secrets.token_hex(4)}"
        target = folder / name
        target.mkdir()
        arrays = {"ids.blob": self.ids.blob, "ids.at": self.ids.at, "id_order": self.id_order}
        for t, a in self.tables.items():
            arrays.update({f"{t}.terms.blob": a.terms.blob, f"{t}.terms.at": a.terms.at, f"{t}.starts": a.starts,
                           f"{t}.rows": a.rows, f"{t}.counts": a.counts, f"{t}.lengths": a.lengths})
        files = {}
        for key, array in arrays.items():
            path = target / f"{key}.npy"
            np.save(path, np.ascontiguousarray(array))
            files[key] = {"crc32": file_crc32(path), "shape": list(array.shape)}
        description = {"format": FORMAT, "seq": self.seq, "store_key": self.store_key, "files": files}
        (target / _DESCRIPTION).write_text(json.dumps(description))
        pointer = folder / f"{_POINTER}.{name}"
        pointer.write_text(name)
        os.replace(pointer, folder / _POINTER)
        for old in folder.iterdir():
            if old.name != name and old.name != _POINTER and not old.name.startswith(f"{_POINTER}."):
                shutil.rmtree(old, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path, store_key: str, store_seq: int) -> LexicalSegment | None:
        """The current segment under `folder`, memory-mapped; None when there is none or it cannot be used
        (another store's, ahead of the store's change `store_seq`, or damaged: logged)."""
        pointer = folder / _POINTER
        if not pointer.exists():
            return None
        try:
            target = folder / pointer.read_text().strip()
            description = json.loads((target / _DESCRIPTION).read_text())
            if description["format"] != FORMAT or description["store_key"] != store_key:
                return None
            if description["seq"] > store_seq:
                log.warning("lexical segment %s is ahead of the store; rebuilding it", target)
                return None
            arrays = {}
            for key, spec in description["files"].items():
                path = target / f"{key}.npy"
                if file_crc32(path) != spec["crc32"]:
                    raise ValueError(f"{path.name}: CRC-32 differs")
                # A plain view of the map: numpy's memmap subclass costs microseconds per indexing.
                arrays[key] = np.load(path, mmap_mode="r").view(np.ndarray) if spec["shape"] != [0] else np.load(path)
                if list(arrays[key].shape) != spec["shape"]:
                    raise ValueError(f"{path.name}: shape differs")
            segment = cls(
                description["seq"], store_key, Strings(arrays["ids.blob"], arrays["ids.at"]), arrays["id_order"],
                {t: TableArrays(Strings(arrays[f"{t}.terms.blob"], arrays[f"{t}.terms.at"]), arrays[f"{t}.starts"],
                                arrays[f"{t}.rows"], arrays[f"{t}.counts"], arrays[f"{t}.lengths"]) for t in TABLES},
            )
            _check(segment)
            populate_later(arrays.values())  # searches read them scattered: no fault per first touch
            return segment
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("lexical segment under %s unusable (%s); rebuilding it from the record store", folder, exc)
            return None


def _check(segment: LexicalSegment) -> None:
    """The shapes agree with each other (the CRCs vouch for the contents)."""
    for t, a in segment.tables.items():
        if len(a.starts) != len(a.terms) + 1 or int(a.starts[-1]) != len(a.rows) or len(a.counts) != len(a.rows):
            raise ValueError(f"{t}: postings and terms disagree")
        if len(a.lengths) != segment.width:
            raise ValueError(f"{t}: row lengths and ids disagree")
    if int(segment.ids.at[-1]) != len(segment.ids.blob):
        raise ValueError("ids disagree with their offsets")


def file_crc32(path: Path) -> int:
    """A file's CRC-32, read in 4 MiB pieces (the segments' files can be larger than what should be read at once)."""
    crc = 0
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            crc = zlib.crc32(block, crc)
    return crc


def _assemble(seq: int, store_key: str, ids: list[str], tables: dict[str, TableArrays]) -> LexicalSegment:
    strings = Strings.of(ids)
    held = np.array([n for n, i in enumerate(ids) if i], dtype=np.int64)
    order = sorted(held.tolist(), key=lambda n: ids[n].encode())
    return LexicalSegment(seq, store_key, strings, np.array(order, dtype=np.int64), tables)


def _merge_table(base: TableArrays, stale: np.ndarray, docs: Mapping[int, Document], width: int) -> TableArrays:
    """`base` without its stale rows' postings, plus `docs`' postings, re-sorted by term then row."""
    old_terms = base.terms.tolist()
    term_of = np.repeat(np.arange(len(old_terms), dtype=np.int64), np.diff(np.asarray(base.starts)))
    rows = np.asarray(base.rows)
    keep = ~stale[rows] if len(rows) else np.zeros(0, dtype=bool)
    extra = [(term, row, n) for row, (_, terms) in docs.items() for term, n in terms.items()]
    vocabulary = sorted(set(old_terms).union(t for t, _, _ in extra))  # code point order = UTF-8 byte order
    index = {term: n for n, term in enumerate(vocabulary)}
    remap = np.array([index[t] for t in old_terms], dtype=np.int64)
    terms = np.concatenate([remap[term_of[keep]], np.array([index[t] for t, _, _ in extra], dtype=np.int64)])
    all_rows = np.concatenate([rows[keep], np.array([r for _, r, _ in extra], dtype=np.int32)])
    counts = np.concatenate([np.asarray(base.counts)[keep], np.array([n for _, _, n in extra], dtype=np.int32)])
    order = np.lexsort((all_rows, terms))
    terms, all_rows, counts = terms[order], all_rows[order], counts[order]
    per_term = np.bincount(terms, minlength=len(vocabulary))
    used = per_term > 0  # a term whose every row went leaves the vocabulary
    starts = np.zeros(int(used.sum()) + 1, dtype=np.int64)
    np.cumsum(per_term[used], out=starts[1:])
    lengths = np.zeros(width, dtype=np.int32)
    lengths[: len(base.lengths)] = np.where(stale[: len(base.lengths)], 0, base.lengths)
    for row, (length, _) in docs.items():
        lengths[row] = length
    kept_terms = [t for t, u in zip(vocabulary, used.tolist(), strict=True) if u]
    return TableArrays(Strings.of(kept_terms), starts, all_rows.astype(np.int32), counts.astype(np.int32), lengths)
