"""The one place that builds the offline stack: MiniLM, the local judge, the anchored scorer.

Every default component episeg uses when none is given comes from here, so
:class:`~episeg.memory.Memory`, :class:`~episeg.segmentation.Segmenter`, the
interfaces, the report and the evaluation all agree on it:

* :func:`default_embedder`: the bundled all-MiniLM-L6-v2, loaded once per process;
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
    """The bundled MiniLM, one shared instance per batch size (the model loads once)."""
    from episeg.embedders import MiniLMEmbedder

    config = config or EpisegConfig()
    return MiniLMEmbedder.default(batch_size=config.embedding.batch_size)


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
