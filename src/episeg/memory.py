"""The facade most users want: turns in, scored and stored episodes, recall out.

:class:`Memory` wires the segmenter (signals 1-5), the salience scorer (once
per closed episode), one tenant-bound Chroma store per user, and hierarchical
recall (:mod:`episeg.recall.hierarchical`: episodes found by their turns,
lexical + dense, within a word budget). Recall never writes; reinforcement
follows :meth:`Memory.confirm_used`. The tenant of a turn is its ``user``.

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
>>> hit = mem.recall("alice", "deploy version", k=1)[0]
>>> hit.episode.summary, hit.start, [t.text for t in hit.turns]
('deploy prod version 2.14', '1970-01-01T00:00:01Z', ['deploy prod version 2.14'])
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
from episeg.durability.erase import erase_journal, scrub
from episeg.durability.ids import globalise
from episeg.durability.journal import Journal
from episeg.durability.outbox import PendingWriter
from episeg.durability.recovery import RecoveryReport, recover
from episeg.durability.sessions import DEFAULT_MAX_RESIDENT, SessionPool
from episeg.errors import EpisegError, JournalError
from episeg.recall.forgetting import MaintenanceReport, maintain
from episeg.recall.hierarchical import Expand, HierarchicalRecaller, RecallHit
from episeg.recall.index import IndexedStore
from episeg.recall.summary import extractive_summary
from episeg.segmentation.segmenter import Segmenter
from episeg.store import ChromaBackend
from episeg.store.erase import ForgetReport, session_episodes, vacuum_chroma
from episeg.store.tenants import validate_tenant
from episeg.types import Episode, Salience, Turn
from episeg.typing import Embedder, Judge, SalienceScorer, ScoredEpisode, StoreBackend

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
        Any :class:`~episeg.typing.StoreBackend`: a :class:`ChromaBackend`
        (e.g. ``ChromaBackend.http(...)`` for a
        ``chroma run`` server); default an embedded store under ``path``.
    clock
        Seconds since the epoch; injectable for tests.
    journal
        Keep the crash-safety journal at ``path/journal.sqlite3`` (default);
        ``False`` keeps it in memory only (no crash safety, for throwaway runs).
    retry_interval
        Seconds to wait, after a failed store write, before writes are tried
        again automatically (:meth:`retry_pending` tries at once).
    max_sessions
        Sessions kept in memory (all tenants); the least recently used beyond
        it are dropped and replayed from the journal when used again.

    Each tenant has its own segmenter and lock (:attr:`sessions`), so one
    tenant's turns, flushes, journal and store calls never wait for another's;
    a tenant's own writes are serialised (:meth:`tenant_lock`). Episode ids
    carry the journal's node id (:mod:`episeg.durability.ids`), so processes
    with separate journals can share one ``chroma run`` server.

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
        backend: StoreBackend | None = None,
        clock: Callable[[], float] = time.time,
        journal: bool = True,
        retry_interval: float = 5.0,
        max_sessions: int = DEFAULT_MAX_RESIDENT,
    ) -> None:
        self.config = config or EpisegConfig()
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder = embedder or default_embedder(self.config)
        self.judge: Judge | None = resolve_judge(judge, embedder)
        self.scorer: SalienceScorer | None = resolve_scorer(scorer, embedder, self.config)
        self.backend: StoreBackend = backend or ChromaBackend.persistent(self.path / "chroma")
        self._clock = clock
        self._lock = threading.RLock()
        self._stores: dict[str, IndexedStore] = {}
        self._recallers: dict[str, HierarchicalRecaller] = {}
        # without an LLM judge, summaries are extractive (the most representative turn)
        self._extractive = self.judge is None or self.judge.name == "local"
        self.journal = Journal(self.path / "journal.sqlite3" if journal else ":memory:")
        self._writer = PendingWriter(self.journal, self.store, retry_interval=retry_interval)
        self.sessions = SessionPool(
            lambda: Segmenter(config=self.config, embedder=embedder, judge=self.judge),
            self.journal,
            finish=self._finish,
            max_resident=max_sessions,
        )
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
        key = (validate_tenant(turn.user), turn.session)
        with self.sessions.lock(turn.user):
            self._check_usable()
            self._writer.retry_if_due(turn.user)
            segmenter = self.sessions.enter(*key)
            try:
                step = segmenter.observe(turn)
            except Exception:
                self._rebuild([key])  # e.g. the embedder failed after intake saw the id
                raise
            if step.turn is None or step.embedding is None:
                return []  # a duplicate id: already recorded
            scored = [self._finish(e) for e in step.closed]
            try:
                self.journal.record(
                    dataclasses.replace(turn, id=step.turn.id),
                    step.embedding,
                    judge=step.judge_record,
                    closed=scored,
                    checkpoint=segmenter.checkpoint(*key) if step.opened else None,
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
        """Close, score and store the open episodes of matching sessions.

        One tenant at a time, under its lock, in journal transactions of at
        most 32 sessions, so a flush of many sessions never holds the journal
        long for other tenants. Episodes of the tenant still waiting for the
        store from an earlier failure are tried again first (and returned too).
        """
        self._check_usable()
        if user is None:
            users = set(self.sessions.tenants()) | {u for u, _ in self.journal.open_sessions()}
            return [e for u in sorted(users) for e in self.flush(u, session)]
        with self.sessions.lock(validate_tenant(user)):
            stored: list[Episode] = self._writer.retry_now(user)  # F15: a flush retries
            keys = [k for k in self.journal.open_sessions(user) if session in (None, k[1])]
            size = min(32, self.sessions.max_resident)
            for start in range(0, len(keys), size):
                stored.extend(self._flush_sessions(user, keys[start : start + size]))
            return stored

    def store_episodes(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Score (if unscored) and store already-closed episodes, e.g. from batch."""
        for episode in episodes:
            validate_tenant(episode.user)
        scored = [self._scored(e) for e in episodes]
        self.journal.close_episodes(scored, journaled=False)
        return self._writer.write(scored)

    def pending_writes(self) -> list[Episode]:
        """Closed episodes waiting for the store (non-empty means degraded)."""
        return self.journal.pending()

    def retry_pending(self) -> list[Episode]:
        """Try the pending writes now (tenant by tenant); return those that reached the store."""
        stored: list[Episode] = []
        for user in sorted({e.user for e in self.journal.pending()}):
            with self.sessions.lock(user):
                stored.extend(self._writer.drain(user))
        return stored

    def tenant_lock(self, user: str) -> threading.RLock:
        """The re-entrant lock serialising ``user``'s writes.

        Hold it to make several calls one step, e.g. stamp a turn with the
        current time and observe it, so concurrent turns of one session
        arrive in time order (the service does this).
        """
        return self.sessions.lock(validate_tenant(user))

    @property
    def segmenter(self) -> SessionPool:
        """The per-tenant segmenters (:attr:`sessions`; ``.stats`` sums their counters)."""
        return self.sessions

    def close(self) -> None:
        """Close the journal (everything accepted is already durable)."""
        self.journal.close()

    # -- reading ----------------------------------------------------------------------
    def store(self, user: str) -> IndexedStore:
        """The store bound to ``user``'s tenant (created on first use).

        Writes through it also keep recall's lexical index and catalogue current.
        """
        tenant = validate_tenant(user)
        with self._lock:
            found = self._stores.get(tenant)
        if found is None:  # built outside the lock: a slow store server delays this tenant only
            made = IndexedStore(self.backend.store_for(tenant), embed_turns=self.embedder.embed)
            with self._lock:
                found = self._stores.setdefault(tenant, made)
        return found

    def episodes(
        self, user: str, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> list[Episode]:
        """``user``'s stored episodes in the store's listing order."""
        return self.store(user).list_episodes(
            limit=limit, offset=offset, include_archived=include_archived
        )

    def recall(
        self,
        user: str,
        query: str,
        k: int = 5,
        *,
        max_words: int | None = None,
        since: float | None = None,
        until: float | None = None,
        session: str | None = None,
        expand: Expand | str = Expand.TURNS,
        context: int = 0,
        neighbours: int = 0,
    ) -> list[RecallHit]:
        """The ``k`` best of ``user``'s episodes for ``query``, each with its matching turns.

        ``max_words`` caps the words of all returned turns together (``None``:
        no cap); ``since``/``until`` (seconds since the epoch) keep episodes
        overlapping that range, ``session`` one session; ``expand="episode"``
        returns whole episodes, ``context`` adds turns around each match and
        ``neighbours`` lists adjacent episodes. See
        :mod:`episeg.recall.hierarchical`. Nothing is written: the same
        question gets the same answer until memory changes.
        """
        return self._recaller(user).recall(
            query,
            k,
            max_words=max_words,
            since=since,
            until=until,
            session=session,
            expand=expand,
            context=context,
            neighbours=neighbours,
        )

    def confirm_used(self, user: str, episode_ids: Collection[str]) -> list[Episode]:
        """Record that these of ``user``'s episodes were used: reinforce them (strength grows).

        Raises
        ------
        StoreError
            If an id is not one of ``user``'s episodes (nothing is written).
        """
        return self._recaller(user).confirm_used(list(episode_ids))

    def feedback(
        self, user: str, results: Sequence[ScoredEpisode], used_ids: Collection[str]
    ) -> tuple[float, float, float]:
        """Tell recall which of ``results`` were used: they are reinforced (:meth:`confirm_used`).

        Returns the recall weights (recency, importance, relevance), which no
        longer learn from feedback: on LoCoMo every non-zero recency or
        importance weight lowered evidence recall (docs/RESULTS.md).

        Raises
        ------
        ValueError
            If a used id is not among ``results``.
        """
        unknown = sorted(set(used_ids) - {r.episode.id for r in results})
        if unknown:
            raise ValueError(f"used id(s) {unknown[:5]} are not among the recall results")
        recaller = self._recaller(user)
        recaller.confirm_used(sorted(used_ids))
        return recaller.params.weights

    def recaller(self, user: str) -> HierarchicalRecaller:
        """The recaller of ``user``'s tenant (for evaluation and custom calls)."""
        return self._recaller(user)

    def maintain(self, user: str, *, archive: bool = False) -> MaintenanceReport:
        """Decay never-recalled episodes; with ``archive`` hide faded ones from recall."""
        return maintain(self.store(user), self.config, float(self._clock()), archive=archive)

    def forget(
        self,
        user: str,
        *,
        episode: str | None = None,
        session: str | None = None,
        all: bool = False,
    ) -> ForgetReport:
        """Erase one episode, one session or all of ``user``'s data, everywhere.

        Give exactly one of ``episode``, ``session``, ``all=True``. Erased
        from: the episode and turn collections (a whole tenant's are
        dropped), recall's lexical index and catalogue, the journal (turns,
        seen ids, outbox, checkpoints; then vacuumed and its WAL truncated)
        and an embedded store's SQLite file (vacuumed). Archived episodes are
        in the same collection and go too; no per-tenant weights are kept on
        disk. Another tenant's episode id erases nothing: it is reported in
        ``missing``. A forgotten turn id is accepted again.

        Raises
        ------
        ValueError
            Unless exactly one of ``episode``, ``session``, ``all`` is given.
        TenantError, StoreError, JournalError
            Invalid tenant; the store or journal failed (call again: erasure is idempotent).
        """
        if sum((episode is not None, session is not None, all)) != 1:
            raise ValueError("give exactly one of episode=, session= or all=True")
        tenant = validate_tenant(user)
        with self.sessions.lock(tenant):
            store = self.store(tenant)
            if episode is not None:
                erased = store.get([episode])
                pending = [e for e in self.journal.pending(tenant) if e.id == episode]
                erased = erased or pending
            else:
                erased = session_episodes(store.inner, None if all else session)
            ids = sorted({e.id for e in erased})
            store.delete(ids)
            drop = getattr(self.backend, "drop_tenant", None)
            if all and drop is not None:
                drop(tenant)  # the collections go too, with Chroma's log of them
            with self._lock:  # cached index and recaller hold text: rebuild them on next use
                self._stores.pop(tenant, None)
                self._recallers.pop(tenant, None)
            keys = {(tenant, e.session) for e in erased}
            if session is not None:
                keys.add((tenant, session))
            if all:
                keys |= {(s.user, s.session) for s in self.journal.sessions() if s.user == tenant}
            turns = (
                erase_journal(
                    self.journal,
                    tenant,
                    session=session,
                    episodes=ids,
                    turn_ids=[(e.session, t) for e in erased for t in e.turn_ids],
                    everything=all,
                )
                if (ids or session is not None or all)
                else 0
            )
            for key in sorted(keys):
                self.sessions.reload(*key)  # in-memory state and seen ids follow the journal
            scrub(self.journal)
            vacuumed = vacuum_chroma(getattr(self.backend, "path", None))
        return ForgetReport(
            user=tenant,
            episodes=tuple(ids),
            turns=turns,
            missing=(episode,) if episode is not None and not ids else (),
            session=session,
            tenant=all,
            vacuumed=vacuumed,
        )

    # -- internals --------------------------------------------------------------------
    def _recaller(self, user: str) -> HierarchicalRecaller:
        store = self.store(user)
        with self._lock:
            if store.tenant not in self._recallers:
                self._recallers[store.tenant] = HierarchicalRecaller(
                    store, self.embedder, config=self.config, clock=self._clock
                )
            return self._recallers[store.tenant]

    def _scored(self, episode: Episode) -> Episode:
        if self._extractive and episode.turn_embeddings is not None and episode.turns:
            summary = extractive_summary(episode.turns, episode.turn_embeddings)
            episode = dataclasses.replace(episode, summary=summary or episode.summary)
        if episode.salience is not None:
            return episode
        return dataclasses.replace(episode, salience=self._score(episode))

    def _check_usable(self) -> None:
        if self._broken is not None:
            raise JournalError(
                f"this Memory lost its journal state ({self._broken}); "
                "open a new Memory on the same path to recover"
            )

    def _flush_sessions(self, user: str, keys: Sequence[tuple[str, str]]) -> list[Episode]:
        segmenter = self.sessions.for_tenant(user)
        for key in keys:
            self.sessions.enter(*key)
        closed = [self._finish(e) for key in keys for e in segmenter.flush(*key)]
        try:
            self.journal.close_episodes(closed, [segmenter.checkpoint(*k) for k in keys])
        except JournalError:
            self._rebuild(keys)
            raise
        return self._writer.write(closed)

    def _finish(self, episode: Episode) -> Episode:
        """A closed episode as stored: its id unique to this journal, then scored."""
        return self._scored(globalise(self.journal.node, episode))

    def _rebuild(self, keys: Iterable[tuple[str, str]]) -> None:
        """Reset sessions to what the journal holds (after a failed observe/flush)."""
        try:
            for key in keys:
                self.sessions.reload(*key)
        except JournalError as exc:
            self._broken = exc
            log.error("cannot rebuild sessions %s from the journal: %s", keys, exc)

    def _recover(self) -> RecoveryReport:
        return recover(self.sessions, self._writer)

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
