"""Export the packaged all-MiniLM-L6-v2 to ONNX from its local weights (no network).

:func:`export_minilm` wraps the transformers ``AutoModel`` so the graph takes
``input_ids``, ``attention_mask`` and ``token_type_ids`` and returns the last
hidden state; mean pooling and L2 normalisation stay outside the graph, in
numpy, exactly as sentence-transformers' Pooling and Normalize modules do.
``torch.onnx.export`` (TorchScript exporter, ``dynamo=False``, opset 17)
needs the ``onnx`` package. With ``quantize=True`` the fp32 graph is then
dynamically quantised to per-channel int8 weights (onnxruntime's
``quantize_dynamic``); on 50 varied turns that moved vectors to a minimum
cosine of 0.956 (mean 0.990) to torch's, so it is an option, not the default.

The file carries, as ONNX metadata, the export format version and the torch
embedding of :data:`PROBE`, so a loader can check a cached file still encodes
like the weights it came from (corruption, or an incompatible runtime).

:func:`fingerprint` names what an export depends on: the model's small
config and tokenizer files in full, the weights' size and sampled 1 MiB
slices of them (hashing all 90 MB would cost ~0.7 s at every start), and the
export settings.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "config.json").write_text("{}")
>>> _ = (folder / "model.safetensors").write_bytes(bytes(range(256)) * 64)
>>> key = fingerprint(folder, quantize=False)
>>> key.startswith(f"minilm-f{FORMAT}-o{OPSET}-fp32-"), key == fingerprint(folder, quantize=True)
(True, False)
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FORMAT", "OPSET", "PROBE", "export_minilm", "fingerprint", "mean_pool"]

FORMAT = 1
"""Bumped whenever the graph's inputs, outputs or metadata change."""
OPSET = 17
PROBE = "episeg checks its cached encoder: naïve café, 42 tokens, done."
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"

_SMALL_FILES = (
    "config.json",
    "sentence_bert_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "modules.json",
    "1_Pooling/config.json",
)
_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
_QUIET_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
}
_SLICE = 1 << 20
_SLICES = 16


def fingerprint(model_path: Path, *, quantize: bool) -> str:
    """A cache key for exporting ``model_path`` with these settings."""
    digest = hashlib.sha256()
    for name in (*_SMALL_FILES, *_WEIGHTS):
        path = model_path / name
        if not path.is_file():
            continue
        digest.update(f"\x1e{name}\x1f".encode())
        if name in _WEIGHTS:
            _sample(path, digest)
        else:
            digest.update(path.read_bytes())
    kind = "int8" if quantize else "fp32"
    return f"minilm-f{FORMAT}-o{OPSET}-{kind}-{digest.hexdigest()[:16]}"


def _sample(path: Path, digest: Any) -> None:
    size = path.stat().st_size
    digest.update(str(size).encode())
    with path.open("rb") as handle:
        for i in range(_SLICES):
            handle.seek(max(0, (size - _SLICE) * i // (_SLICES - 1)))
            digest.update(handle.read(_SLICE))


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the unmasked token vectors, L2-normalised (sentence-transformers' way).

    >>> hidden = np.array([[[3.0, 0.0], [0.0, 4.0], [9.0, 9.0]]])
    >>> mean_pool(hidden, np.array([[1, 1, 0]])).round(2)
    array([[0.6, 0.8]], dtype=float32)
    """
    weights = mask[..., None].astype(np.float32)
    summed = (hidden.astype(np.float32) * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return np.asarray(pooled / np.clip(norms, 1e-12, None), dtype=np.float32)


def export_minilm(model_path: Path, target: Path, *, max_seq_length: int, quantize: bool) -> None:
    """Write the ONNX graph of ``model_path``'s transformer to ``target`` (see module doc)."""
    for name, value in _QUIET_OFFLINE.items():
        os.environ.setdefault(name, value)
    import onnx
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_path)).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            out = self.inner(input_ids=ids, attention_mask=mask, token_type_ids=types)
            return out.last_hidden_state

    tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_seq_length)
    tokenizer.no_padding()
    probe = tokenizer.encode(PROBE)
    inputs = tuple(
        torch.tensor([values], dtype=torch.int64)
        for values in (probe.ids, probe.attention_mask, probe.type_ids)
    )
    wrapper = LastHiddenState().eval()
    with torch.no_grad():
        reference = mean_pool(wrapper(*inputs).numpy(), inputs[1].numpy())[0]
    fp32 = target.with_name(target.name + ".fp32") if quantize else target
    axes = {"batch": 0, "tokens": 1}
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about shapes fixed at export
            torch.onnx.export(
                wrapper,
                inputs,
                str(fp32),
                input_names=list(INPUTS),
                output_names=[OUTPUT],
                dynamic_axes={
                    **{name: {0: "batch", 1: "tokens"} for name in INPUTS},
                    OUTPUT: {v: k for k, v in axes.items()},
                },
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantize_dynamic(str(fp32), str(target), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        if quantize:
            fp32.unlink(missing_ok=True)
    graph = onnx.load(str(target))
    meta = {
        "episeg.format": str(FORMAT),
        "episeg.max_seq_length": str(max_seq_length),
        "episeg.quantized": "int8" if quantize else "no",
        "episeg.probe": json.dumps([float(x) for x in reference]),
    }
    onnx.helper.set_model_props(graph, meta)
    onnx.save(graph, str(target))
