"""Memoise any embedder by exact text (:class:`CachingEmbedder`).

>>> from episeg.testing import HashingEmbedder
>>> emb = CachingEmbedder(HashingEmbedder(dim=8))
>>> emb.embed(["x", "x"]).shape, emb.inner_texts, len(emb)
((2, 8), 1, 1)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from episeg.typing import Embedder

__all__ = ["CachingEmbedder"]


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
