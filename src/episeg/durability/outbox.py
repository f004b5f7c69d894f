"""The outbox writer: closed episodes go to their store, a failed write waits and retries.

Thread-safe: the service calls it from many request threads. Retries are per
tenant (:meth:`PendingWriter.retry_if_due` drains one tenant's outbox, which
the caller serialises with that tenant's other writes), so a tenant never
waits for another tenant's backlog. A failed write holds back, for
``retry_interval`` seconds, the writes of those it says something about: a
store that cannot be reached (:class:`~episeg.errors.StoreUnavailableError`)
holds back every tenant (it is one store, and each write would wait for it);
a store that refuses one tenant's write (any other
:class:`~episeg.errors.StoreError`, e.g. a collection of another dimension)
holds back that tenant alone, so one broken tenant never sends the others'
episodes to the outbox.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from episeg.errors import JournalError, StoreError, StoreUnavailableError
from episeg.store.chroma_io import rebuilt_retry
from episeg.types import Episode
from episeg.typing import EpisodeStore

if TYPE_CHECKING:
    from episeg.durability.journal import Journal

__all__ = ["PendingWriter"]

log = logging.getLogger(__name__)


class PendingWriter:
    """Writes journaled episodes to their stores; a failed write waits in the outbox.

    Parameters
    ----------
    journal
        Where the episodes wait (:meth:`Journal.pending`) and are confirmed.
    store_for
        The tenant-bound store of a user.
    retry_interval
        After a failure, seconds during which the new writes it holds back
        (every tenant's if the store was unreachable, else the failed tenant's)
        are not tried (they queue in the outbox) and :meth:`retry_if_due` does
        nothing for them.
    rebuild
        Called with the tenant when a write failed because Chroma tore that
        tenant's vector segment (:func:`episeg.store.chroma_io.is_torn`); the
        write is tried once more after it. ``None``: such writes wait like
        any other failed write.
    """

    def __init__(
        self,
        journal: Journal,
        store_for: Callable[[str], EpisodeStore],
        *,
        retry_interval: float,
        rebuild: Callable[[str], object] | None = None,
    ) -> None:
        self.journal, self.store_for, self.retry_interval = journal, store_for, retry_interval
        self.rebuild = rebuild
        self._waiting: set[str] = set()  # tenants with episodes left in the outbox
        self._store_retry_at = 0.0  # the store was unreachable: every tenant waits until then
        self._tenant_retry_at: dict[str, float] = {}  # a write of this tenant was refused
        self._lock = threading.Lock()

    @property
    def has_pending(self) -> bool:
        """Whether a failed write left episodes in the outbox (of any tenant)."""
        with self._lock:
            return bool(self._waiting)

    @property
    def due(self) -> bool:
        """Whether a tenant's writes wait in the outbox and its wait is over."""
        now = time.monotonic()
        with self._lock:
            return any(now >= self._retry_at(user) for user in self._waiting)

    def write(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Store ``episodes`` (already in the outbox); return those stored.

        The episodes of a tenant whose writes are held back (see the module
        docstring) stay in the outbox; the others are written.
        """
        now = time.monotonic()
        with self._lock:
            held = {
                e.user: self._retry_at(e.user) - now
                for e in episodes
                if self._waiting and now < self._retry_at(e.user)
            }
        for episode in episodes:
            if episode.user in held:
                log.warning(
                    "episode %s kept in the outbox: the store is marked down for tenant %s"
                    " (next retry in %.1fs)",
                    episode.id,
                    episode.user,
                    held[episode.user],
                )
        self._wait_for([e for e in episodes if e.user in held])
        return self._store_all([e for e in episodes if e.user not in held])

    def drain(self, user: str | None = None) -> list[Episode]:
        """Try every pending write (of ``user``, or all) now, oldest first.

        A tenant's writes stop at its first failure (an unreachable store stops all).
        """
        pending = self.journal.pending(user)
        stored = self._store_all(pending)
        written = {id(e) for e in stored}
        left = {e.user for e in pending if id(e) not in written}
        with self._lock:
            done = ({user} if user is not None else set(self._waiting)) - left
            self._waiting -= done
            for tenant in done:
                self._tenant_retry_at.pop(tenant, None)
        return stored

    def retry_if_due(self, user: str) -> None:
        """Drain ``user``'s outbox if a write of theirs failed and the wait is over."""
        with self._lock:
            due = user in self._waiting and time.monotonic() >= self._retry_at(user)
        if due:
            self.drain(user)

    def retry_now(self, user: str) -> list[Episode]:
        """Drain ``user``'s outbox now if a write of theirs failed (an explicit flush)."""
        with self._lock:
            waiting = user in self._waiting
        return self.drain(user) if waiting else []

    def _retry_at(self, user: str) -> float:
        """When ``user``'s held-back writes may be tried again (``self._lock`` held)."""
        return max(self._store_retry_at, self._tenant_retry_at.get(user, 0.0))

    def _store_all(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Write in order; after a tenant's refused write its later episodes wait, and
        after an unreachable store every later episode waits."""
        stored: list[Episode] = []
        refused: set[str] = set()
        for n, episode in enumerate(episodes):
            if episode.user in refused:
                self._wait_for([episode])
                continue
            failure = self._store_one(episode)
            if failure is None:
                stored.append(episode)
            elif isinstance(failure, StoreUnavailableError):
                self._wait_for(episodes[n:])
                break
            else:
                refused.add(episode.user)
                self._wait_for([episode])
        return stored

    def _wait_for(self, episodes: Sequence[Episode]) -> None:
        with self._lock:
            self._waiting.update(e.user for e in episodes)

    def _store_one(self, episode: Episode) -> StoreError | None:
        """Write one episode and confirm it; the store's error if it failed."""
        try:
            self._add(episode)
        except StoreError as exc:
            retry_at = time.monotonic() + self.retry_interval
            with self._lock:
                if isinstance(exc, StoreUnavailableError):  # the store itself: every tenant waits
                    self._store_retry_at = retry_at
                else:  # the store refused this tenant's write: only this tenant waits
                    self._tenant_retry_at[episode.user] = retry_at
            log.warning("episode %s kept in the outbox, store write failed: %s", episode.id, exc)
            return exc
        self._confirm(episode)
        return None

    def _add(self, episode: Episode) -> None:
        """Write one episode; a torn vector segment is rebuilt (when possible) and tried again."""
        user, rebuild = episode.user, self.rebuild
        if rebuild is None:
            self.store_for(user).add([episode])
        else:
            rebuilt_retry(lambda: self.store_for(user).add([episode]), lambda: rebuild(user), user)

    def _confirm(self, episode: Episode) -> None:
        try:
            self.journal.confirm(episode.user, episode.id)
        except JournalError as exc:  # stored twice later is harmless: the write is an upsert
            log.warning(
                "episode %s stored but not confirmed in the journal (%s); it will be written again",
                episode.id,
                exc,
            )
