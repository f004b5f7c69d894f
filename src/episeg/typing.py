"""The Protocols (and only Protocols) every backend implements: embedder, judge, scorer, store.

They are ``runtime_checkable`` so a wrong backend fails early:

>>> from episeg.typing import Embedder
>>> from episeg.testing import HashingEmbedder
>>> isinstance(HashingEmbedder(), Embedder)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

# JudgeAnswer and ScoredEpisode are data types (episeg.types): imported for the
# Protocols' signatures and re-exported explicitly for older imports.
from episeg.types import Episode, ObservedTurn, Salience, Turn, Verdict
from episeg.types import JudgeAnswer as JudgeAnswer
from episeg.types import ScoredEpisode as ScoredEpisode

__all__ = [
    "Embedder",
    "EpisodeStore",
    "Judge",
    "SalienceScorer",
    "Signal",
    "StoreBackend",
]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, shape ``(len(texts), dim)``."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


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

    def list_episodes(
        self, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> list[Episode]:
        """A page of episodes in storage order (archived ones only when asked)."""
        ...

    def count(self) -> int: ...

    def episode_ids(self) -> list[str]:
        """The ids of every stored episode, archived ones too, in storage order.

        Read at once, so a caller paging through them (an export) is not moved
        by a delete between two pages as an offset would be.
        """
        ...

    def update(self, episodes: Sequence[Episode]) -> None:
        """Rewrite the recall state (count, last access, strength, archived)."""
        ...

    def revise(self, episodes: Sequence[Episode]) -> None:
        """Rewrite what a user edits (summary, salience, pin, user metadata), all or none.

        Raises :class:`~episeg.errors.EpisodeNotFoundError` for an id the tenant lacks.
        """
        ...

    def delete(self, ids: Sequence[str]) -> None: ...


@runtime_checkable
class StoreBackend(Protocol):
    """What :class:`~episeg.memory.Memory` needs from a store backend.

    :class:`~episeg.store.ChromaBackend` (embedded or ``chroma run``) and
    :class:`~episeg.testing.InMemoryBackend` implement it.
    """

    def store_for(self, tenant: str) -> EpisodeStore:
        """The store bound to ``tenant`` (created on first use)."""
        ...

    def tenants(self) -> list[str]:
        """Every tenant that has a store here, sorted."""
        ...

    def heartbeat(self) -> int:
        """A liveness check; raises :class:`~episeg.errors.StoreUnavailableError` when down."""
        ...
