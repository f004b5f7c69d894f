"""The facade most users want: turns in, scored and stored episodes, recall out.

:class:`Memory` wires the segmenter (signals 1-5), the salience scorer (once
per closed episode), one tenant-bound Chroma store per user, and recall with
reinforcement. The tenant of a turn is its ``user``.

>>> import tempfile
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None,
...              scorer=None)
>>> _ = mem.observe(Turn(actor="user", text="deploy prod version 2.14", ts=1.0, user="alice"))
>>> [len(e.turns) for e in mem.flush()]
[1]
>>> mem.recall("alice", "deploy version", k=1)[0].episode.summary
'deploy prod version 2.14'
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

from episeg.config import EpisegConfig
from episeg.errors import EpisegError
from episeg.forgetting import MaintenanceReport, maintain
from episeg.recall import Recaller
from episeg.segmenter import Segmenter
from episeg.store import ChromaBackend
from episeg.store.tenants import collection_name, validate_tenant
from episeg.types import Episode, Salience, Turn
from episeg.typing import Embedder, EpisodeStore, Judge, SalienceScorer, ScoredEpisode

__all__ = ["DEFAULT", "Memory"]

log = logging.getLogger(__name__)


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT = _Default()
"""Sentinel: build the offline default (LocalJudge / anchored offline scorer)."""


class Memory:
    """Episodic memory for many users, backed by Chroma.

    Parameters
    ----------
    path
        Folder for the embedded Chroma store and per-tenant learned weights.
    config
        Tunables (:class:`EpisegConfig`).
    embedder
        Default: the bundled all-MiniLM-L6-v2.
    judge
        Prediction-error judge; ``DEFAULT`` is the offline :class:`LocalJudge`,
        ``None`` disables signal 3.
    scorer
        Salience scorer; ``DEFAULT`` is the offline anchored scorer for
        ``config.salience_domain``; ``None`` stores episodes unscored (and says so).
    backend
        A :class:`ChromaBackend` (e.g. ``ChromaBackend.http(...)`` for a
        ``chroma run`` server); default an embedded store under ``path``.
    clock
        Seconds since the epoch; injectable for tests.
    """

    def __init__(self, *, path: str | Path = ".episeg", config: EpisegConfig | None = None,
                 embedder: Embedder | None = None, judge: Judge | _Default | None = DEFAULT,
                 scorer: SalienceScorer | _Default | None = DEFAULT,
                 backend: ChromaBackend | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.config = config or EpisegConfig()
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        if embedder is None:
            from episeg.embedders import MiniLMEmbedder
            embedder = MiniLMEmbedder.default(batch_size=self.config.embed_batch_size)
        self.embedder = embedder
        if isinstance(judge, _Default):
            from episeg.judges.local import LocalJudge
            judge = LocalJudge(embedder=embedder)
        if isinstance(scorer, _Default):
            from episeg.salience.offline import AnchoredOfflineScorer
            scorer = AnchoredOfflineScorer(embedder=embedder, domain=self.config.salience_domain)
        self.judge: Judge | None = judge
        self.scorer: SalienceScorer | None = scorer
        self.segmenter = Segmenter(config=self.config, embedder=embedder, judge=judge)
        self.backend = backend or ChromaBackend.persistent(self.path / "chroma")
        self._clock = clock
        self._lock = threading.RLock()
        self._stores: dict[str, EpisodeStore] = {}
        self._recallers: dict[str, Recaller] = {}

    # -- writing ----------------------------------------------------------------------
    def observe(self, turn: Turn) -> list[Episode]:
        """Take one turn; return the episodes it closed, scored and stored."""
        with self._lock:
            return self._persist(self.segmenter.observe(turn))

    def ingest(self, turns: Iterable[Turn]) -> list[Episode]:
        """Observe many turns in order (streaming); does not flush."""
        closed: list[Episode] = []
        for turn in turns:
            closed.extend(self.observe(turn))
        return closed

    def flush(self, user: str | None = None, session: str | None = None) -> list[Episode]:
        """Close, score and store the open episodes of matching sessions."""
        with self._lock:
            return self._persist(self.segmenter.flush(user, session))

    def store_episodes(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Score (if unscored) and store already-closed episodes, e.g. from batch."""
        with self._lock:
            return self._persist(list(episodes))

    # -- reading ----------------------------------------------------------------------
    def store(self, user: str) -> EpisodeStore:
        """The store bound to ``user``'s tenant (created on first use)."""
        tenant = validate_tenant(user)
        with self._lock:
            if tenant not in self._stores:
                self._stores[tenant] = self.backend.store_for(tenant)
            return self._stores[tenant]

    def episodes(self, user: str, *, limit: int = 100, offset: int = 0,
                 include_archived: bool = False) -> list[Episode]:
        """``user``'s stored episodes in the store's listing order."""
        return self.store(user).list(limit=limit, offset=offset,
                                     include_archived=include_archived)

    def recall(self, user: str, query: str, k: int = 5) -> list[ScoredEpisode]:
        """The ``k`` best of ``user``'s episodes for ``query``; reinforces them."""
        return self._recaller(user).recall(query, k)

    def feedback(self, user: str, results: Sequence[ScoredEpisode],
                 used_ids: Collection[str]) -> tuple[float, float, float]:
        """Tell recall which results were used; the tenant's weights learn from it."""
        return self._recaller(user).feedback(results, used_ids)

    def maintain(self, user: str, *, archive: bool = False) -> MaintenanceReport:
        """Decay never-recalled episodes; with ``archive`` hide faded ones from recall."""
        return maintain(self.store(user), self.config, float(self._clock()), archive=archive)

    # -- internals --------------------------------------------------------------------
    def _recaller(self, user: str) -> Recaller:
        store = self.store(user)
        with self._lock:
            if store.tenant not in self._recallers:
                weights = self.path / "weights" / f"{collection_name(store.tenant)}.json"
                weights.parent.mkdir(parents=True, exist_ok=True)
                self._recallers[store.tenant] = Recaller(
                    store, self.embedder, config=self.config, clock=self._clock,
                    weights_path=weights)
            return self._recallers[store.tenant]

    def _persist(self, closed: list[Episode]) -> list[Episode]:
        stored = []
        for episode in closed:
            if episode.salience is None:
                episode = _with_salience(episode, self._score(episode))
            self.store(episode.user).add([episode])
            stored.append(episode)
        return stored

    def _score(self, episode: Episode) -> Salience:
        if self.scorer is None:
            return Salience.unscored("no salience scorer configured", scorer="none")
        try:
            return self.scorer.score(episode)
        except EpisegError as exc:  # scorers should not raise; record it if one does
            log.warning("salience scorer %s raised on episode %s: %s",
                        self.scorer.name, episode.id, exc)
            return Salience.unscored(f"scorer raised: {exc}", scorer=self.scorer.name)


def _with_salience(episode: Episode, salience: Salience) -> Episode:
    import dataclasses
    return dataclasses.replace(episode, salience=salience)
