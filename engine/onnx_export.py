"""Export a sentence-transformers model's encoder, with its pooling and normalisation, to one ONNX graph.

Run once by `make setup` (`python -m engine.onnx_export`), or by the ONNX embedder on first use when the
cached graph is missing. This is the only place that needs torch and the `onnx` package for the ONNX
backend; the graph is then loaded by onnxruntime alone. Nothing is downloaded: the graph comes from the
bundled weights, and is checked against torch's own output before it is installed in the cache.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from engine import config, model_files
from engine.errors import ModelLoadError
from engine.lock import cache_lock
from engine.model_files import ONNX_OPSET

INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "sentence_embedding"
# Texts the fresh graph must embed exactly as torch does before it replaces anything in the cache.
_CHECK_TEXTS = ("The graph agrees with torch.", "a", "Caroline went to the LGBTQ support group on 7 May 2023.")
MIN_CHECK_COSINE = 0.99999
# A quantised graph whose vectors fall below this cosine to the fp32 graph's is not installed.
MIN_INT8_COSINE = 0.97


def ensure_exported(model: str | None = None, cache_dir: Path | None = None, precision: str | None = None) -> Path:
    """The cached graph for `model` (default: the configured model) at `precision` (default: the configured
    one), exporting it first if missing; the int8 graph is quantised from the fp32 one. The files the ONNX
    runtime reads besides the graph are in the graph's folder.

    Without the model's weights (a core install has no model package, nor the torch that package requires),
    the graph exported earlier into the cache is used; if there is none, a ModelLoadError says how to make it.
    Concurrent callers (pytest workers, two CLI commands) wait on a file lock; only one exports.
    """
    chosen = model_files.precision(precision)
    name = model or config.default_embedding_model()
    label = model_files.model_label(name)
    try:
        model_dir = model_files.resolve_model_path(name)
    except ModelLoadError as missing:
        fp32 = model_files.cached_export(label, cache_dir)
        if fp32 is None:
            root = cache_dir if cache_dir is not None else config.model_cache_dir()
            raise ModelLoadError(
                f"{missing}; nor is a graph exported from it in the model cache {root}: install the `[export]` "
                "extra and run `python -m engine.onnx_export` once (`make setup` does both)"
            ) from None
        return fp32 if chosen == "fp32" else _ensure_quantised(fp32)
    fp32 = model_files.onnx_path(model_dir, cache_dir)
    if not fp32.is_file():
        try:
            fp32.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ModelLoadError(f"cannot create the model cache {fp32.parent}: {exc}") from exc
        with cache_lock(fp32.parent / ".export.lock"):
            if not fp32.is_file():
                _export(model_dir, fp32)
    model_files.keep_runtime_files(model_dir, fp32.parent, label)
    return fp32 if chosen == "fp32" else _ensure_quantised(fp32)


def _ensure_quantised(fp32: Path) -> Path:
    """The int8 graph beside `fp32` (whose folder holds the tokenizer), quantised first if missing."""
    target = fp32.with_name(model_files.INT8_FILENAME)
    if not target.is_file():
        with cache_lock(fp32.parent / ".export.lock"):
            if not target.is_file():
                _quantise(fp32.parent, fp32, target)
    return target


def _export(model_dir: Path, target: Path) -> None:
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise ModelLoadError(f"exporting to ONNX needs torch and transformers (run `make setup`): {exc}") from exc
    try:
        import onnx  # noqa: F401  (torch's exporter serialises through it)
    except ImportError:
        raise ModelLoadError("exporting the ONNX graph needs the `onnx` package (run `make setup`)") from None

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    encoder = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    pooled = _pooled_module(encoder, model_files.pooling_mode(model_dir))

    sample = tokenizer(["an example sentence to trace", "short"], padding=True, return_tensors="pt")
    args = tuple(sample.get(name, torch.zeros_like(sample["input_ids"])) for name in INPUT_NAMES)
    axes = {0: "batch", 1: "tokens"}
    with _staged(target, ".export-", f"could not export {model_dir} to ONNX") as tmp:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer and deprecation chatter; the check below is what counts
            torch.onnx.export(
                pooled,
                args,
                str(tmp),
                dynamo=False,
                input_names=list(INPUT_NAMES),
                output_names=[OUTPUT_NAME],
                dynamic_axes={**{name: axes for name in INPUT_NAMES}, OUTPUT_NAME: {0: "batch"}},
                opset_version=ONNX_OPSET,
                do_constant_folding=True,
            )
        _check(pooled, tokenizer, tmp)


def _quantise(folder: Path, source: Path, target: Path) -> None:
    """Dynamic int8 quantisation of the fp32 graph's weights (activations stay float, quantised per run by
    onnxruntime): no calibration data, nothing downloaded. Checked against the fp32 graph before install,
    on texts tokenised by the tokenizer in `folder`."""
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise ModelLoadError(f"int8 quantisation needs onnxruntime's quantization tools and `onnx`: {exc}") from exc
    with _staged(target, ".quantise-", f"could not quantise {source} to int8") as tmp:
        previous = logging.root.manager.disable
        logging.disable(logging.WARNING)  # "consider pre-processing": advice for calibrated static quantisation
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # Per-channel weights keep the vectors closer to fp32 at no cost in speed.
                quantize_dynamic(source, tmp, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            logging.disable(previous)
        cosine = agreement(folder, source, tmp)
        if cosine < MIN_INT8_COSINE:
            raise ModelLoadError(
                f"the int8 graph disagrees with fp32 (cosine {cosine:.4f} < {MIN_INT8_COSINE}); not installed"
            )


@contextlib.contextmanager
def _staged(target: Path, prefix: str, failure: str) -> Iterator[Path]:
    """A temporary file beside `target` to write a graph into; moved onto `target` only if the block ends
    without error (a reader never sees half a graph), removed in every case. Any error other than a
    ModelLoadError becomes one, `failure: <error>`."""
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".onnx")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.replace(tmp, target)
    except ModelLoadError:
        raise
    except Exception as exc:
        raise ModelLoadError(f"{failure}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def agreement(folder: Path, reference: Path, candidate: Path) -> float:
    """The lowest cosine between two graphs' vectors for the check texts, as one padded batch (tokenised by
    the tokenizer in `folder`: the model's or the graph's)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_padding()
    encodings = tokenizer.encode_batch(list(_CHECK_TEXTS))
    feeds = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    out = []
    for graph in (reference, candidate):
        session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
        names = {i.name for i in session.get_inputs()}
        out.append(session.run([OUTPUT_NAME], {k: v for k, v in feeds.items() if k in names})[0])
    return float(np.min(np.sum(out[0] * out[1], axis=1)))


def _pooled_module(encoder: Any, mode: str) -> Any:
    import torch

    class Pooled(torch.nn.Module):
        """Encoder + pooling + L2 normalisation: the graph outputs the sentence embedding itself."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            # The additive attention mask is built here, not by transformers' mask helpers: their Python
            # control flow on shapes would be traced as constants and break padded batches.
            embedded = self.encoder.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
            blocked = 1.0 - attention_mask[:, None, None, :].to(embedded.dtype)
            # [0]: the last hidden state, whether the encoder returns a model output (BERT) or a tuple (MPNet).
            hidden = self.encoder.encoder(embedded, attention_mask=blocked * torch.finfo(embedded.dtype).min)[0]
            if mode == "cls":
                vector = hidden[:, 0]
            else:
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                vector = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(vector, p=2.0, dim=1)

    # eval() on the wrapper too: the exporter restores the wrapper's mode afterwards, and a wrapper left in
    # training mode would switch the encoder's dropout on for the check below.
    return Pooled().eval()


def _check(pooled: Any, tokenizer: Any, graph: Path) -> None:
    """The exported graph must give torch's vectors (cosine > MIN_CHECK_COSINE) on a padded batch."""
    import onnxruntime as ort
    import torch

    batch = tokenizer(list(_CHECK_TEXTS), padding=True, return_tensors="pt")
    feeds = {name: batch.get(name, torch.zeros_like(batch["input_ids"])) for name in INPUT_NAMES}
    with torch.no_grad():
        expected = pooled(*feeds.values()).numpy()
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    used = {i.name for i in session.get_inputs()}  # an input the model ignores (MPNet's token types) is pruned
    got = session.run([OUTPUT_NAME], {k: v.numpy().astype(np.int64) for k, v in feeds.items() if k in used})[0]
    cosine = float(np.min(np.sum(expected * got, axis=1)))
    if cosine < MIN_CHECK_COSINE:
        raise ModelLoadError(f"the exported ONNX graph disagrees with torch (cosine {cosine:.6f}); not installed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Export the embedding model to ONNX once (idempotent).")
    parser.add_argument("--model", default=None, help="bundled model name or local model directory")
    parser.add_argument("--cache-dir", type=Path, default=None, help=f"default: ${config.MODEL_CACHE_ENV}")
    parser.add_argument("--precision", choices=config.EMBEDDING_PRECISIONS, default=None,
                        help=f"default: ${config.EMBEDDING_PRECISION_ENV}, else fp32 (int8 also exports fp32)")
    args = parser.parse_args(argv)
    print(ensure_exported(args.model, args.cache_dir, args.precision))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
