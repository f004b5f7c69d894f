"""The write path of :class:`~episeg.memory.Memory`: turns in, durable, scored, stored.

:class:`MemoryWrites` is the part of the facade that takes turns and closed
episodes: every accepted turn is committed to the
:class:`~episeg.durability.journal.Journal` before :meth:`MemoryWrites.observe`
returns, a closed episode is summarised, scored once and handed to the outbox
(:class:`~episeg.durability.outbox.PendingWriter`), and a failed journal write
resets the session to what the journal holds. It is a mixin: ``Memory``
builds the parts it declares (``journal``, ``sessions``, ``_writer``, ...).

>>> import tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None,
...              scorer=None)
>>> mem.observe(Turn(actor="user", text="book the flight", ts=1.0, user="bob"))
[]
>>> [(e.user, len(e.turns), e.salience.score) for e in mem.flush("bob")]
[('bob', 1, None)]
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Self

from episeg.config import EpisegConfig
from episeg.durability.ids import globalise
from episeg.durability.journal import Journal
from episeg.durability.outbox import PendingWriter
from episeg.durability.recovery import RecoveryReport, recover
from episeg.durability.scoring import score_episode
from episeg.durability.sessions import SessionPool
from episeg.durability.turn_checks import check_batch_turns, check_turn, preview_batch
from episeg.errors import ArgumentError, JournalError
from episeg.recall.summary import extractive_summary
from episeg.store.repair import rebuild_tenant, resume_rebuilds
from episeg.store.tenants import validate_tenant
from episeg.types import Episode, Salience, Turn
from episeg.typing import Embedder, SalienceScorer, StoreBackend

__all__ = ["MemoryWrites"]

log = logging.getLogger("episeg.memory")


class MemoryWrites:
    """Observe and flush: the writing half of ``Memory`` (with ``MemoryOutbox``)."""

    journal: Journal
    sessions: SessionPool
    scorer: SalienceScorer | None
    _writer: PendingWriter
    _broken: JournalError | None
    _extractive: bool
    _clock: Callable[[], float]
    backend: StoreBackend
    embedder: Embedder
    config: EpisegConfig

    if TYPE_CHECKING:  # provided by IdleClosing and MemoryRecall

        def _close_idle_if_due(self, user: str) -> list[Episode]: ...
        def _close_session_if_idle(self, user: str, session: str) -> list[Episode]: ...
        def _drop_tenant_cache(self, tenant: str) -> None: ...

    def observe(self, turn: Turn) -> list[Episode]:
        """Take one turn; return the episodes it closed that are now stored.

        The turn is in the journal when this returns. A closed episode the
        store could not take stays in :meth:`pending_writes` (logged).

        Raises
        ------
        TurnValidationError, TenantError
            The turn is refused (nothing was recorded): not a ``Turn``, a
            ``type`` its actor cannot produce (:func:`~episeg.types.turn.check_kind`),
            text too long, ts going backwards, an id reused with other content,
            an invalid tenant.
        JournalError
            The turn could not be made durable: it was NOT accepted.
        """
        turn = check_turn(turn)
        key = (turn.user, turn.session)
        with self.sessions.lock(turn.user):
            self._check_usable()
            self._writer.retry_if_due(turn.user)
            self._close_idle_if_due(turn.user)  # before the turn: a timed-out episode stays closed
            self._close_session_if_idle(*key)  # its own session always, whenever last checked
            segmenter = self.sessions.enter(*key)
            try:
                step = segmenter.observe(turn)
                if step.turn is None or step.embedding is None:
                    return []  # a duplicate id: already recorded
                scored = [self._finish(e) for e in step.closed]
            except Exception:
                # e.g. the embedder or the scorer failed after intake saw the id: the
                # session goes back to what the journal holds, so a re-send is new
                self._rebuild([key])
                raise
            try:
                self.journal.record(
                    dataclasses.replace(turn, id=step.turn.id),
                    step.embedding,
                    judge=step.judge_record,
                    closed=scored,
                    checkpoint=segmenter.checkpoint(*key) if step.opened else None,
                    touched=float(self._clock()),
                    judged=step.decided.id if step.decided is not None else None,
                )
            except Exception:  # a journal error, or a record it could not encode: not accepted
                self._rebuild([key])
                raise
            return self._writer.write(scored)

    def ingest(self, turns: Iterable[Turn]) -> list[Episode]:
        """Observe many turns in order, all or nothing; does not flush.

        The whole batch is checked first (:mod:`~episeg.durability.turn_checks`),
        under the locks of its tenants: if :meth:`observe` would refuse a turn,
        its error names the turn's place in the batch and nothing of the batch
        is recorded, so the corrected batch can be sent again whole (re-sent
        turns with ids are skipped as duplicates). A failure past the checks
        (the embedder, the journal) keeps the turns before it; a note on the
        error says how many (example: :mod:`~episeg.durability.turn_checks`).

        Raises
        ------
        TurnValidationError, TenantError
            A turn is refused (see :meth:`observe`); nothing was recorded.
        JournalError
            As for :meth:`observe`.
        """
        batch = check_batch_turns(turns)
        closed: list[Episode] = []
        with ExitStack() as held:
            for user in sorted({t.user for t in batch}):
                held.enter_context(self.sessions.lock(user))
            self._check_usable()
            preview_batch(self.sessions, batch)
            for done, turn in enumerate(batch):
                try:
                    closed.extend(self.observe(turn))
                except Exception as exc:
                    exc.add_note(
                        f"ingest: turns 0 to {done - 1} of the batch were taken and are kept, "
                        f"turns {done} to {len(batch) - 1} were not"
                        if done
                        else "ingest: no turn of the batch was taken"
                    )
                    raise
        return closed

    def flush(self, user: str | None = None, session: str | None = None) -> list[Episode]:
        """Close, score and store the open episodes of matching sessions.

        One tenant at a time, under its lock, in journal transactions of at
        most 32 sessions, so a flush of many sessions never holds the journal
        long for other tenants. Episodes of the tenant still waiting for the
        store from an earlier failure are tried again first (and returned too).
        A ``session`` that is not a non-empty string is an :class:`~episeg.errors.ArgumentError`.
        """
        if session is not None and not isinstance(session, str):
            raise ArgumentError(f"session must be a string or None, got {type(session).__name__}")
        if session == "":  # no turn carries it (Turn refuses it)
            raise ArgumentError("session must be a non-empty name or None, got ''")
        self._check_usable()
        if user is None:  # tenants with open turns, and those with only outbox rows (F15)
            users = set(self.sessions.tenants()) | {u for u, _ in self.journal.open_sessions()}
            users |= {e.user for e in self.journal.pending()}
            return [e for u in sorted(users) for e in self.flush(u, session)]
        with self.sessions.lock(validate_tenant(user)):
            stored: list[Episode] = self._writer.retry_now(user)  # F15: a flush retries
            keys = [k for k in self.journal.open_sessions(user) if session in (None, k[1])]
            return stored + self._flush_keys(user, keys)

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
        """Close the journal (everything accepted is already durable).

        ``with Memory(...) as memory:`` closes it on leaving the block; open
        episodes stay open in the journal, as after :meth:`close`.
        """
        self.journal.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------
    def _scored(self, episode: Episode, *, summarise: bool = True) -> Episode:
        """``episode`` scored if unscored; with ``summarise``, an extractive summary if due."""
        if summarise and self._extractive and episode.turn_embeddings is not None and episode.turns:
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

    def _flush_keys(self, user: str, keys: Sequence[tuple[str, str]]) -> list[Episode]:
        """Flush ``user``'s sessions ``keys`` (its lock held) in batches that all stay resident.

        A batch is at most 32 sessions (one journal transaction) and at most the
        resident cap: entering more would drop the batch's first sessions
        before they are flushed (R3-D1).
        """
        size = min(32, self.sessions.max_resident)
        stored: list[Episode] = []
        for start in range(0, len(keys), size):
            stored.extend(self._flush_sessions(user, keys[start : start + size]))
        return stored

    def _flush_sessions(self, user: str, keys: Sequence[tuple[str, str]]) -> list[Episode]:
        segmenter = self.sessions.for_tenant(user)
        try:
            for key in keys:
                self.sessions.enter(*key)
            closed = [self._finish(e) for key in keys for e in segmenter.flush(*key)]
            self.journal.close_episodes(closed, [segmenter.checkpoint(*k) for k in keys])
        except Exception:  # whatever failed, memory goes back to what the journal holds
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

    def rebuild_store(self, user: str) -> int:
        """Rebuild ``user``'s collections after Chroma tore their vector segment (``kill -9``).

        The episodes are read from the embedded store's SQLite file, their
        vectors kept where they still read and otherwise computed again with
        this memory's embedder (:mod:`episeg.store.repair`). A store write,
        ``recall`` or ``episodes`` that fails on a torn segment calls this
        itself. Returns the episodes kept.

        Raises
        ------
        StoreError
            Not an embedded store, or a step failed (run it again: a rebuild
            interrupted after its file was written is finished at start-up).
        """
        tenant = validate_tenant(user)
        limit = self.config.embedding.max_chars
        with self.sessions.lock(tenant):
            try:
                kept = rebuild_tenant(
                    self.backend,
                    tenant,
                    lambda texts: self.embedder.embed([t[:limit] for t in texts]),
                )
            finally:  # failed or not, the cached store may hold a dropped collection
                self._drop_tenant_cache(tenant)
        return kept

    def _recover(self) -> RecoveryReport:
        for tenant in resume_rebuilds(self.backend):  # each failure is logged, its folder kept
            self._drop_tenant_cache(tenant)
        return recover(self.sessions, self._writer)

    def _score(self, episode: Episode) -> Salience:
        return score_episode(self.scorer, episode)  # unscored, logged, if the scorer fails
