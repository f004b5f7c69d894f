"""The Protocols every backend implements: embedder, judge, scorer, store.

They are ``runtime_checkable`` so a wrong backend fails early:

>>> from episeg.typing import Embedder
>>> from episeg.testing import HashingEmbedder
>>> isinstance(HashingEmbedder(), Embedder)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from episeg.types import Decision, Episode, ObservedTurn, Salience, Turn, Verdict

__all__ = [
    "Embedder",
    "EpisodeStore",
    "Judge",
    "JudgeAnswer",
    "SalienceScorer",
    "ScoredEpisode",
    "Signal",
]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, shape ``(len(texts), dim)``."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class JudgeAnswer:
    """A judge's structured answer: the decision and the updated one-line summary."""

    decision: Decision
    summary: str
    reason: str = ""


@runtime_checkable
class Judge(Protocol):
    """Prediction-error judge (seed signal 3).

    ``judge`` returns continue / boundary (new) / sub-episode and an updated
    summary, or raises :class:`episeg.errors.JudgeError` on timeout, overload
    or an unusable reply. ``calls`` counts requests made (for cost reports).
    """

    @property
    def name(self) -> str: ...

    @property
    def calls(self) -> int: ...

    def judge(self, summary: str, recent: Sequence[Turn], turn: Turn) -> JudgeAnswer: ...


@runtime_checkable
class Signal(Protocol):
    """A boundary signal: one ``update`` per turn, a frozen verdict back.

    ``reset`` is called when an episode opens at ``turn`` (the turn that opened
    it has already been passed to ``update``).
    """

    name: str

    def update(self, turn: ObservedTurn) -> Verdict: ...

    def reset(self, turn: ObservedTurn) -> None: ...


@runtime_checkable
class SalienceScorer(Protocol):
    """Scores a whole episode once; never raises for a bad reply.

    A failure returns :meth:`Salience.unscored` with the reason (and is logged).
    A scorer that raises anyway should raise :class:`~episeg.errors.ScoringError`;
    :class:`~episeg.memory.Memory` then stores the episode unscored with the reason.
    """

    @property
    def name(self) -> str: ...

    def score(self, episode: Episode) -> Salience: ...


@dataclass(frozen=True, slots=True)
class ScoredEpisode:
    """A recalled episode with each rerank term's contribution.

    ``importance_imputed`` is True when the episode was unscored and its
    importance term used the candidates' median (see :mod:`episeg.recall.rerank`).
    """

    episode: Episode
    score: float
    recency: float
    importance: float
    similarity: float
    raw_similarity: float
    importance_imputed: bool = False


@runtime_checkable
class EpisodeStore(Protocol):
    """One tenant's episodic store. The tenant is fixed at construction.

    No method takes a tenant argument, so no call can read across tenants.
    """

    @property
    def tenant(self) -> str: ...

    def add(self, episodes: Sequence[Episode]) -> None: ...

    def get(self, ids: Sequence[str]) -> list[Episode]: ...

    def query(self, embedding: np.ndarray, k: int) -> list[tuple[Episode, float]]: ...

    def list(
        self, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> list[Episode]: ...

    def count(self) -> int: ...

    def update(self, episodes: Sequence[Episode]) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...
