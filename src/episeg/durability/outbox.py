"""The outbox writer: closed episodes go to their store, a failed write waits and retries.

Thread-safe: the service calls it from many request threads. Retries are per
tenant (:meth:`PendingWriter.retry_if_due` drains one tenant's outbox, which
the caller serialises with that tenant's other writes), so a tenant never
waits for another tenant's backlog; a failed write marks the store down for
``retry_interval`` seconds for everyone (it is one store).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from episeg.errors import JournalError, StoreError
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
        After a failure, seconds during which new writes are not tried (they
        queue in the outbox) and :meth:`retry_if_due` does nothing.
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
        self._retry_at = 0.0
        self._lock = threading.Lock()

    @property
    def has_pending(self) -> bool:
        """Whether a failed write left episodes in the outbox (of any tenant)."""
        with self._lock:
            return bool(self._waiting)

    @property
    def due(self) -> bool:
        """Whether writes wait in the outbox and ``retry_interval`` has passed since the failure."""
        with self._lock:
            return bool(self._waiting) and time.monotonic() >= self._retry_at

    def write(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Store ``episodes`` (already in the outbox); return those stored."""
        if self.has_pending and time.monotonic() < self._retry_at:
            for episode in episodes:
                log.warning(
                    "episode %s kept in the outbox: the store is marked down (next retry in %.1fs)",
                    episode.id,
                    self._retry_at - time.monotonic(),
                )
            self._wait_for(episodes)
            return []
        return self._store_all(episodes)

    def drain(self, user: str | None = None) -> list[Episode]:
        """Try every pending write (of ``user``, or all) now, oldest first; stop at a failure."""
        pending = self.journal.pending(user)
        stored = self._store_all(pending)
        if len(stored) < len(pending):
            return stored
        with self._lock:
            if user is None:
                self._waiting.clear()
            else:
                self._waiting.discard(user)
        return stored

    def retry_if_due(self, user: str) -> None:
        """Drain ``user``'s outbox if a write of theirs failed and the wait is over."""
        with self._lock:
            due = user in self._waiting and time.monotonic() >= self._retry_at
        if due:
            self.drain(user)

    def retry_now(self, user: str) -> list[Episode]:
        """Drain ``user``'s outbox now if a write of theirs failed (an explicit flush)."""
        with self._lock:
            waiting = user in self._waiting
        return self.drain(user) if waiting else []

    def _store_all(self, episodes: Sequence[Episode]) -> list[Episode]:
        for n, episode in enumerate(episodes):
            if not self._store_one(episode):
                self._wait_for(episodes[n:])
                return list(episodes[:n])
        return list(episodes)

    def _wait_for(self, episodes: Sequence[Episode]) -> None:
        with self._lock:
            self._waiting.update(e.user for e in episodes)

    def _store_one(self, episode: Episode) -> bool:
        try:
            self._add(episode)
        except StoreError as exc:
            with self._lock:
                self._retry_at = time.monotonic() + self.retry_interval
            log.warning("episode %s kept in the outbox, store write failed: %s", episode.id, exc)
            return False
        self._confirm(episode)
        return True

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
