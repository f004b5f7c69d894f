"""Episodes handed in closed, and the outbox: ``store_episodes``, ``retry_pending``.

:class:`MemoryOutbox` is the part of :class:`~episeg.memory.Memory` that stores
episodes a caller closed (batch segmentation, an adapter) and retries the
writes waiting in the journal's outbox. Each tenant's part runs under that
tenant's lock, as ``observe``, ``flush`` and ``forget`` do, so an episode is
never written after an overlapping ``forget`` reported it erased. A summary
the caller gave is kept (an empty one is filled in, as for an episode
``Memory`` closes itself).

>>> import tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Episode, Turn
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None, scorer=None)
>>> turns = (Turn(actor="user", text="the deploy failed with a 502", ts=1.0, user="bob",
...               session="s"),)
>>> vectors = mem.embedder.embed([t.text for t in turns])
>>> ep = Episode(id="e1", user="bob", session="s", turns=turns, opened_at=1.0, closed_at=1.0,
...              summary="Gateway 502 on deploy", embedding=vectors[0], turn_embeddings=vectors)
>>> [(e.id, e.summary) for e in mem.store_episodes([ep])]
[('e1', 'Gateway 502 on deploy')]
>>> mem.retry_due(), mem.pending_writes()     # nothing waits
([], [])
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from episeg.durability.episode_checks import check_batch
from episeg.durability.journal import Journal
from episeg.durability.outbox import PendingWriter
from episeg.durability.sessions import SessionPool
from episeg.types import Episode
from episeg.typing import Embedder

__all__ = ["MemoryOutbox"]


class MemoryOutbox:
    """Store closed episodes and retry the outbox (a mixin; ``Memory`` builds the parts)."""

    journal: Journal
    sessions: SessionPool
    embedder: Embedder
    _writer: PendingWriter

    if TYPE_CHECKING:  # provided by MemoryWrites

        def _check_usable(self) -> None: ...
        def _scored(self, episode: Episode, *, summarise: bool = True) -> Episode: ...

    def store_episodes(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Score (if unscored) and store already-closed episodes, e.g. from batch.

        The batch is checked whole first (:func:`~episeg.durability.episode_checks.check_batch`):
        a malformed episode (a field of the wrong kind, a turn of another user or
        session...), or one id twice for a tenant, is an
        :class:`~episeg.errors.EpisodeValidationError` and nothing is written.
        A given summary is kept. The batch is journaled in one transaction
        under the locks of its tenants (taken in sorted order); each tenant's
        lock is released once its episodes were written. Returns the episodes
        that reached the store, in the order given.
        """
        check_batch(episodes, dim=self.embedder.dim)
        scored = [self._scored(e, summarise=not e.summary) for e in episodes]
        users = sorted({e.user for e in scored})
        held: list[threading.RLock] = []
        stored: set[int] = set()
        try:
            for user in users:
                lock = self.sessions.lock(user)
                lock.acquire()
                held.append(lock)
            self._check_usable()
            self.journal.close_episodes(scored, journaled=False)
            for user in users:
                written = self._writer.write([e for e in scored if e.user == user])
                stored.update(id(e) for e in written)
                held.pop(0).release()  # this tenant is done: its next turn need not wait
        finally:
            for lock in held:
                lock.release()
        return [e for e in scored if id(e) in stored]

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

    def retry_due(self) -> list[Episode]:
        """:meth:`retry_pending` if a write failed and ``retry_interval`` has passed since.

        What :class:`~episeg.durability.idle.IdleTicker` calls on every tick, so
        an episode left in the outbox is written soon after the store is back
        even if its tenant sends nothing more.
        """
        return self.retry_pending() if self._writer.due else []
