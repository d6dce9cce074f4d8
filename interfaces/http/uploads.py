"""Files sent to /v1/upload, kept in the data dir's `uploads/` folder under their names.

An upload's identity is its name within `uploads/`: the same name sent again replaces the file (atomically)
and indexing then finds it unchanged (nothing written) or changed (its memories replaced), so retrying an
upload never stores a document twice. A name the server could not create is refused with the reason
(400) before anything is written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import unicodedata
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from engine import validation
from engine.errors import ValidationError
from engine.uploads import uploads_dir

MAX_UPLOAD_NAME_BYTES = 255  # one component of an uploaded file's name (what file systems allow)

def upload_name(raw: str | None) -> PurePosixPath:
    """The relative name an uploaded file is kept under; ValidationError with the reason for one the server
    cannot or must not create (absolute, `..`, `.`, empty parts, over 255 bytes a part, control characters)."""
    if raw is None or not raw.strip():
        raise ValidationError("an uploaded file needs a file name")
    name = validation.text(raw, "an uploaded file name", 4096)
    if "\\" in name:
        raise ValidationError(f"an uploaded file name uses '/' between folders, not '\\': {name!r}")
    if name.startswith("/"):
        raise ValidationError(f"an uploaded file name must be relative, got {name!r}")
    parts = name.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise ValidationError(f"an uploaded file name must not have an empty, '.' or '..' part: {name!r}")
        if len(part.encode("utf-8")) > MAX_UPLOAD_NAME_BYTES:
            raise ValidationError(f"a part of an uploaded file name is over {MAX_UPLOAD_NAME_BYTES} bytes: "
                                  f"{part[:40]!r}...")
        bad = next((c for c in part if unicodedata.category(c) in ("Cc", "Cf")), None)
        if bad is not None:
            raise ValidationError(f"an uploaded file name contains the character U+{ord(bad):04X}: {name!r}")
    return PurePosixPath(*parts)


def save_uploads(data_dir: Path, files: Sequence[tuple[PurePosixPath, BinaryIO]]) -> list[Path]:
    """Write each file to `uploads/<name>` (replacing one of that name); returns their paths. Every name is
    checked against the others and against what `uploads/` holds before the first is written."""
    root = uploads_dir(data_dir)
    names = [name for name, _ in files]
    _check_names(root, names)
    saved = []
    for name, stream in files:
        target = root.joinpath(*name.parts)
        try:
            _make_dirs(root, target.parent)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".upload-")
            try:
                with os.fdopen(fd, "wb") as out:
                    shutil.copyfileobj(stream, out)
                    out.flush()
                    os.fsync(out.fileno())
                if _same_bytes(Path(tmp), target):
                    Path(tmp).unlink()  # unchanged: the file (and its date, which indexing reads) stays as it was
                else:
                    os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise ValidationError(f"cannot store the upload {str(name)!r}: {exc.strerror or exc}") from None
        saved.append(target)
    return saved


def _same_bytes(a: Path, b: Path) -> bool:
    if not b.is_file() or b.is_symlink() or a.stat().st_size != b.stat().st_size:
        return False
    with a.open("rb") as left, b.open("rb") as right:
        while True:
            chunk = left.read(1 << 20)
            if chunk != right.read(1 << 20):
                return False
            if not chunk:
                return True


def _check_names(root: Path, names: Sequence[PurePosixPath]) -> None:
    seen: set[PurePosixPath] = set()
    for name in names:
        if name in seen:
            raise ValidationError(f"the upload names {str(name)!r} twice")
        seen.add(name)
    for name in names:
        for parent in name.parents:
            if parent in seen:
                raise ValidationError(f"{str(parent)!r} is both a file and the folder of {str(name)!r} in this upload")
        target = root.joinpath(*name.parts)
        if target.is_dir() and not target.is_symlink():
            raise ValidationError(f"{str(name)!r} is a folder of earlier uploads; it cannot become a file")
        for parent in list(name.parents)[:-1]:
            path = root.joinpath(*parent.parts)
            if path.exists() and not path.is_dir() or path.is_symlink():
                raise ValidationError(f"{str(parent)!r} is an uploaded file; it cannot be the folder of {str(name)!r}")


def _make_dirs(root: Path, folder: Path) -> None:
    """Create `folder` under `root` (owner-only, like the data dir)."""
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
