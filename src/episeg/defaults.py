"""The one place that builds the offline stack: MiniLM, the local judge, the anchored scorer.

Every default component episeg uses when none is given comes from here, so
:class:`~episeg.memory.Memory`, :class:`~episeg.segmentation.Segmenter`, the
interfaces, the report and the evaluation all agree on it:

* :func:`default_embedder`: the bundled all-MiniLM-L6-v2 on ONNX Runtime (or torch:
  ``embedding.backend``), loaded once per process;
* :func:`default_judge`: the offline :class:`~episeg.judges.local.LocalJudge`, which
  :func:`resolve_judge` builds only where it was measured to help (see there);
* :func:`default_scorer`: the offline :class:`~episeg.salience.AnchoredOfflineScorer`
  for ``config``'s salience domain.

``DEFAULT`` is the sentinel for "build the offline default" where ``None`` already
means "none at all" (``Memory(judge=None)`` disables the judge);
:func:`resolve_judge` and :func:`resolve_scorer` turn it into the component.

>>> from episeg.testing import HashingEmbedder
>>> emb = HashingEmbedder()
>>> resolve_judge(DEFAULT, emb).name, resolve_judge(None, emb)  # layered combiner here
('local', None)
>>> type(resolve_scorer(DEFAULT, emb)).__name__, resolve_scorer(None, emb)
('AnchoredOfflineScorer', None)
>>> DEFAULT
DEFAULT
"""

from __future__ import annotations

import enum
import logging
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
    "offline_judge_helps",
    "resolve_judge",
    "resolve_scorer",
]


class _DefaultType(enum.Enum):
    DEFAULT = "DEFAULT"

    def __repr__(self) -> str:
        return "DEFAULT"


log = logging.getLogger(__name__)
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


def offline_judge_helps(config: EpisegConfig, embedder: Embedder) -> bool:
    """Whether the segmenter ``config`` and ``embedder`` build is one the offline judge helps.

    True for the layered combiner (built around the judge) and for a learned
    model trained with roles unknown (the roles-unknown model, the chat
    preset); False for a model trained with real roles (the default agent
    model), where the offline judge made both roles-known tune parts worse
    (agent_tau 0.077 -> 0.084, SuperDialseg 0.233 -> 0.238 Pk; docs/RESULTS.md,
    "`Memory`'s offline default with real roles: no judge").

    >>> from episeg.testing import HashingEmbedder
    >>> offline_judge_helps(EpisegConfig(), HashingEmbedder())  # no MiniLM: layered
    True
    """
    from episeg.segmentation.learned import learned_policy

    policy = learned_policy(config, embedder)
    return policy is None or policy.model.meta.get("roles_known", True) is False


def resolve_judge(
    judge: Judge | Default | None, embedder: Embedder, config: EpisegConfig | None = None
) -> Judge | None:
    """A judge or ``None`` is kept; ``DEFAULT`` is the offline default for ``config``.

    ``DEFAULT`` becomes :func:`default_judge` where :func:`offline_judge_helps`
    (``config`` default: ``EpisegConfig()``), and ``None`` (no judge, logged)
    where it does not. An explicit ``LocalJudge`` or LLM judge is always used.
    """
    if judge is not DEFAULT:
        return judge
    if offline_judge_helps(config or EpisegConfig(), embedder):
        return default_judge(embedder)
    log.info(
        "the default judge: none (the offline judge made the roles-known model's "
        "segmentation worse; pass a judge to use one)"
    )
    return None


def resolve_scorer(
    scorer: SalienceScorer | Default | None,
    embedder: Embedder,
    config: EpisegConfig | None = None,
) -> SalienceScorer | None:
    """``DEFAULT`` becomes :func:`default_scorer`; a scorer or ``None`` is kept."""
    return default_scorer(embedder, config) if scorer is DEFAULT else scorer
