"""Embeddings kept on disk between evaluation runs (``--embed-cache FILE.npz``).

:class:`StoredVectors` wraps an embedder: texts already in the file are read
from it, new ones go to the wrapped embedder and are added; :meth:`save`
writes the file back. It keeps the wrapped embedder's ``name`` and ``dim`` (a
learned combiner checks both). A text is keyed by its first ``max_chars``
characters, the part the segmenter embeds (MiniLM reads 256 word pieces at
most, fewer than 2,000 characters).

>>> import tempfile, pathlib
>>> from episeg.testing import HashingEmbedder
>>> path = pathlib.Path(tempfile.mkdtemp()) / "v.npz"
>>> first = StoredVectors(HashingEmbedder(dim=8), path)
>>> _ = first.embed(["a b", "c"]); _ = first.save()
>>> again = StoredVectors(HashingEmbedder(dim=8), path)
>>> again.embed(["c"]).shape, again.new_texts, len(again)
((1, 8), 0, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from episeg.typing import Embedder

__all__ = ["StoredVectors"]


class StoredVectors:
    """An embedder backed by an ``.npz`` of texts and vectors (see the module docstring)."""

    def __init__(self, inner: Embedder, path: str | Path, *, max_chars: int = 2000) -> None:
        self._inner = inner
        self.path = Path(path)
        self.max_chars = max_chars
        self._vectors: dict[str, np.ndarray] = {}
        self.new_texts = 0
        if self.path.is_file():
            with np.load(self.path, allow_pickle=False) as data:
                for text, vec in zip(data["texts"], data["vectors"], strict=True):
                    self._vectors[str(text)] = vec

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def __len__(self) -> int:
        return len(self._vectors)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of strings, not one string")
        keys = [t[: self.max_chars] for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._vectors))
        if missing:
            vectors = np.asarray(self._inner.embed(missing), dtype=np.float32)
            self._vectors.update(zip(missing, vectors, strict=True))
            self.new_texts += len(missing)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys])

    def save(self) -> Path:
        """Write every vector held to :attr:`path` (parents created)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        texts = list(self._vectors)
        vectors = np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, self.dim))
        with self.path.open("wb") as fh:
            np.savez_compressed(fh, texts=np.array(texts), vectors=vectors.astype(np.float32))
        return self.path
