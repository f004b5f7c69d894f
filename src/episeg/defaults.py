"""The one place that builds the offline stack: MiniLM, the local judge, the anchored scorer.

Every default component episeg uses when none is given comes from here, so
:class:`~episeg.memory.Memory`, :class:`~episeg.segmentation.Segmenter`, the
interfaces, the report and the evaluation all agree on it:

* :func:`default_embedder`: the bundled all-MiniLM-L6-v2 on ONNX Runtime (or torch:
  ``embedding.backend``), loaded once per process;
* :func:`default_judge`: the offline :class:`~episeg.judges.local.LocalJudge`;
* :func:`default_scorer`: the offline :class:`~episeg.salience.AnchoredOfflineScorer`
  for ``config``'s salience domain.

``DEFAULT`` is the sentinel for "build the offline default" where ``None`` already
means "none at all" (``Memory(judge=None)`` disables the judge);
:func:`resolve_judge` and :func:`resolve_scorer` turn it into the component.

>>> from episeg.testing import HashingEmbedder
>>> emb = HashingEmbedder()
>>> resolve_judge(DEFAULT, emb).name, resolve_judge(None, emb)
('local', None)
>>> type(resolve_scorer(DEFAULT, emb)).__name__, resolve_scorer(None, emb)
('AnchoredOfflineScorer', None)
>>> DEFAULT
DEFAULT
"""

from __future__ import annotations

import enum
from typing import Final, Literal

from episeg.config import EpisegConfig
from episeg.types import EmbedderBackend
from episeg.typing import Embedder, Judge, SalienceScorer

__all__ = [
    "DEFAULT",
    "Default",
    "default_embedder",
    "default_judge",
    "default_scorer",
    "resolve_judge",
    "resolve_scorer",
]


class _DefaultType(enum.Enum):
    DEFAULT = "DEFAULT"

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Final = _DefaultType.DEFAULT
"""Sentinel: build the offline default component (``None`` means no component)."""

Default = Literal[_DefaultType.DEFAULT]
"""The type of :data:`DEFAULT`, for annotations (``Judge | Default | None``)."""


def default_embedder(config: EpisegConfig | None = None) -> Embedder:
    """The bundled MiniLM on ``config.embedding.backend``, one shared instance per settings.

    ``onnx`` (the default) raises :class:`~episeg.errors.BackendUnavailableError`
    naming the fix when onnxruntime is not installed; ``torch`` needs only
    sentence-transformers.
    """
    from episeg.embedders import MiniLMEmbedder, OnnxMiniLMEmbedder

    settings = (config or EpisegConfig()).embedding
    if settings.backend is EmbedderBackend.TORCH:
        return MiniLMEmbedder.default(threads=settings.threads, batch_size=settings.batch_size)
    return OnnxMiniLMEmbedder.default(threads=settings.threads, batch_size=settings.batch_size)


def default_judge(embedder: Embedder) -> Judge:
    """The offline prediction-error judge (no model server, deterministic)."""
    from episeg.judges.local import LocalJudge

    return LocalJudge(embedder=embedder)


def default_scorer(embedder: Embedder, config: EpisegConfig | None = None) -> SalienceScorer:
    """The offline anchored salience scorer for ``config``'s salience domain."""
    from episeg.salience.offline import AnchoredOfflineScorer

    config = config or EpisegConfig()
    return AnchoredOfflineScorer(embedder, anchors=config.salience.anchors)


def resolve_judge(judge: Judge | Default | None, embedder: Embedder) -> Judge | None:
    """``DEFAULT`` becomes :func:`default_judge`; a judge or ``None`` is kept."""
    return default_judge(embedder) if judge is DEFAULT else judge


def resolve_scorer(
    scorer: SalienceScorer | Default | None,
    embedder: Embedder,
    config: EpisegConfig | None = None,
) -> SalienceScorer | None:
    """``DEFAULT`` becomes :func:`default_scorer`; a scorer or ``None`` is kept."""
    return default_scorer(embedder, config) if scorer is DEFAULT else scorer
