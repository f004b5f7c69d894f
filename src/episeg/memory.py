"""The facade most users want: turns in, scored and stored episodes, recall out.

:class:`Memory` wires the segmenter (signals 1-5), the salience scorer (once
per closed episode), one tenant-bound Chroma store per user, and recall with
reinforcement. The tenant of a turn is its ``user``.

Crash safety (see ``docs/RELIABILITY.md``): every accepted turn is committed
to a SQLite :class:`~episeg.durability.journal.Journal` before :meth:`Memory.observe`
returns, and a closed episode stays in the journal's outbox until the store
confirms it. A new ``Memory`` on the same path replays the journal: open
episodes are rebuilt without re-embedding or re-asking the judge, and
unconfirmed episodes are written again (an idempotent upsert). While the
store is down, closed episodes wait in the outbox (:meth:`Memory.pending_writes`)
and are retried on later calls or by :meth:`Memory.retry_pending`.

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

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

from episeg.config import EpisegConfig
from episeg.defaults import DEFAULT, Default, default_embedder, resolve_judge, resolve_scorer
from episeg.durability.journal import Journal
from episeg.durability.outbox import PendingWriter
from episeg.durability.recovery import RecoveryReport, recover, replay
from episeg.errors import EpisegError, JournalError
from episeg.recall.forgetting import MaintenanceReport, maintain
from episeg.recall.rerank import Recaller
from episeg.segmentation.segmenter import Segmenter
from episeg.store import ChromaBackend
from episeg.store.tenants import collection_name, validate_tenant
from episeg.types import Episode, Salience, Turn
from episeg.typing import Embedder, EpisodeStore, Judge, SalienceScorer, ScoredEpisode

__all__ = ["DEFAULT", "Memory"]  # DEFAULT is episeg.defaults.DEFAULT, re-exported

log = logging.getLogger(__name__)


class Memory:
    """Episodic memory for many users, backed by Chroma.

    Parameters
    ----------
    path
        Folder for the embedded Chroma store and per-tenant learned weights.
    config
        Tunables (:class:`EpisegConfig`).
    embedder
        Default: the bundled all-MiniLM-L6-v2 (:func:`episeg.defaults.default_embedder`).
    judge
        Prediction-error judge; ``DEFAULT`` is the offline :class:`LocalJudge`
        (:func:`episeg.defaults.default_judge`), ``None`` disables signal 3.
    scorer
        Salience scorer; ``DEFAULT`` is the offline anchored scorer for
        ``config.salience.anchors`` (:func:`episeg.defaults.default_scorer`);
        ``None`` stores episodes unscored (and says so).
    backend
        A :class:`ChromaBackend` (e.g. ``ChromaBackend.http(...)`` for a
        ``chroma run`` server); default an embedded store under ``path``.
    clock
        Seconds since the epoch; injectable for tests.
    journal
        Keep the crash-safety journal at ``path/journal.sqlite3`` (default);
        ``False`` keeps it in memory only (no crash safety, for throwaway runs).
    retry_interval
        Seconds to wait, after a failed store write, before writes are tried
        again automatically (:meth:`retry_pending` tries at once).

    Raises
    ------
    JournalError
        When the journal cannot be opened or read at start-up.
    """

    def __init__(
        self,
        *,
        path: str | Path = ".episeg",
        config: EpisegConfig | None = None,
        embedder: Embedder | None = None,
        judge: Judge | Default | None = DEFAULT,
        scorer: SalienceScorer | Default | None = DEFAULT,
        backend: ChromaBackend | None = None,
        clock: Callable[[], float] = time.time,
        journal: bool = True,
        retry_interval: float = 5.0,
    ) -> None:
        self.config = config or EpisegConfig()
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder = embedder or default_embedder(self.config)
        self.judge: Judge | None = resolve_judge(judge, embedder)
        self.scorer: SalienceScorer | None = resolve_scorer(scorer, embedder, self.config)
        self.segmenter = Segmenter(config=self.config, embedder=embedder, judge=self.judge)
        self.backend = backend or ChromaBackend.persistent(self.path / "chroma")
        self._clock = clock
        self._lock = threading.RLock()
        self._stores: dict[str, EpisodeStore] = {}
        self._recallers: dict[str, Recaller] = {}
        self.journal = Journal(self.path / "journal.sqlite3" if journal else ":memory:")
        self._writer = PendingWriter(self.journal, self.store, retry_interval=retry_interval)
        self._broken: JournalError | None = None
        self.recovery = self._recover()

    # -- writing ----------------------------------------------------------------------
    def observe(self, turn: Turn) -> list[Episode]:
        """Take one turn; return the episodes it closed that are now stored.

        The turn is in the journal when this returns. A closed episode the
        store could not take stays in :meth:`pending_writes` (logged).

        Raises
        ------
        TurnValidationError, TenantError
            The turn is refused (nothing was recorded).
        JournalError
            The turn could not be made durable: it was NOT accepted.
        """
        with self._lock:
            self._check_usable()
            validate_tenant(turn.user)
            self._writer.retry_if_due()
            key = (turn.user, turn.session)
            try:
                step = self.segmenter.observe(turn)
            except Exception:
                self._rebuild([key])  # e.g. the embedder failed after intake saw the id
                raise
            if step.turn is None or step.embedding is None:
                return []  # a duplicate id: already recorded
            scored = [self._scored(e) for e in step.closed]
            try:
                self.journal.record(
                    dataclasses.replace(turn, id=step.turn.id),
                    step.embedding,
                    judge=step.judge_record,
                    closed=scored,
                    checkpoint=self.segmenter.checkpoint(*key) if step.opened else None,
                )
            except JournalError:
                self._rebuild([key])
                raise
            return self._writer.write(scored)

    def ingest(self, turns: Iterable[Turn]) -> list[Episode]:
        """Observe many turns in order (streaming); does not flush."""
        closed: list[Episode] = []
        for turn in turns:
            closed.extend(self.observe(turn))
        return closed

    def flush(self, user: str | None = None, session: str | None = None) -> list[Episode]:
        """Close, score and store the open episodes of matching sessions."""
        with self._lock:
            self._check_usable()
            closed = [self._scored(e) for e in self.segmenter.flush(user, session)]
            keys = sorted({(e.user, e.session) for e in closed})
            try:
                self.journal.close_episodes(closed, [self.segmenter.checkpoint(*k) for k in keys])
            except JournalError:
                self._rebuild(keys)
                raise
            return self._writer.write(closed)

    def store_episodes(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Score (if unscored) and store already-closed episodes, e.g. from batch."""
        with self._lock:
            for episode in episodes:
                validate_tenant(episode.user)
            scored = [self._scored(e) for e in episodes]
            self.journal.close_episodes(scored, journaled=False)
            return self._writer.write(scored)

    def pending_writes(self) -> list[Episode]:
        """Closed episodes waiting for the store (non-empty means degraded)."""
        with self._lock:
            return self.journal.pending()

    def retry_pending(self) -> list[Episode]:
        """Try the pending writes now; return those that reached the store."""
        with self._lock:
            return self._writer.drain()

    def close(self) -> None:
        """Close the journal (everything accepted is already durable)."""
        with self._lock:
            self.journal.close()

    # -- reading ----------------------------------------------------------------------
    def store(self, user: str) -> EpisodeStore:
        """The store bound to ``user``'s tenant (created on first use)."""
        tenant = validate_tenant(user)
        with self._lock:
            if tenant not in self._stores:
                self._stores[tenant] = self.backend.store_for(tenant)
            return self._stores[tenant]

    def episodes(
        self, user: str, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> list[Episode]:
        """``user``'s stored episodes in the store's listing order."""
        return self.store(user).list(limit=limit, offset=offset, include_archived=include_archived)

    def recall(self, user: str, query: str, k: int = 5) -> list[ScoredEpisode]:
        """The ``k`` best of ``user``'s episodes for ``query``; reinforces them."""
        return self._recaller(user).recall(query, k)

    def feedback(
        self, user: str, results: Sequence[ScoredEpisode], used_ids: Collection[str]
    ) -> tuple[float, float, float]:
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
                    store,
                    self.embedder,
                    config=self.config,
                    clock=self._clock,
                    weights_path=weights,
                )
            return self._recallers[store.tenant]

    def _scored(self, episode: Episode) -> Episode:
        if episode.salience is not None:
            return episode
        return dataclasses.replace(episode, salience=self._score(episode))

    def _check_usable(self) -> None:
        if self._broken is not None:
            raise JournalError(
                f"this Memory lost its journal state ({self._broken}); "
                "open a new Memory on the same path to recover"
            )

    def _rebuild(self, keys: Iterable[tuple[str, str]]) -> None:
        """Reset sessions to what the journal holds (after a failed observe/flush)."""
        try:
            for key in keys:
                self.segmenter.forget(*key)
                for journaled in self.journal.sessions(only=key):
                    replay(self.segmenter, journaled)
        except JournalError as exc:
            self._broken = exc
            log.error("cannot rebuild sessions %s from the journal: %s", keys, exc)

    def _recover(self) -> RecoveryReport:
        return recover(self.segmenter, self.journal, self._writer, self._scored)

    def _score(self, episode: Episode) -> Salience:
        if self.scorer is None:
            return Salience.unscored("no salience scorer configured", scorer="none")
        try:
            return self.scorer.score(episode)
        except EpisegError as exc:  # scorers should not raise; record it if one does
            log.warning(
                "salience scorer %s raised on episode %s: %s", self.scorer.name, episode.id, exc
            )
            return Salience.unscored(f"scorer raised: {exc}", scorer=self.scorer.name)
