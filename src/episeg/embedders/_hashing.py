"""Bag-of-words feature hashing, no model (:class:`HashingEmbedder`; for tests and cheap runs).

>>> emb = HashingEmbedder(dim=8)
>>> a, b = emb.embed(["deploy prod", "Deploy  PROD!"])
>>> bool((a == b).all()), emb.texts_embedded
(True, 2)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"[a-z0-9]+")


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
