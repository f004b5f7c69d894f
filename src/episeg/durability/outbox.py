"""The outbox writer: closed episodes go to their store, a failed write waits and retries."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from episeg.errors import JournalError, StoreError
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
    """

    def __init__(
        self, journal: Journal, store_for: Callable[[str], EpisodeStore], *, retry_interval: float
    ) -> None:
        self.journal, self.store_for, self.retry_interval = journal, store_for, retry_interval
        self.has_pending = False
        self._retry_at = 0.0

    def write(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Store ``episodes`` (already in the outbox); return those stored."""
        if self.has_pending and time.monotonic() < self._retry_at:
            for episode in episodes:
                log.warning(
                    "episode %s kept in the outbox: the store is marked down (next retry in %.1fs)",
                    episode.id,
                    self._retry_at - time.monotonic(),
                )
            return []
        stored = []
        for episode in episodes:
            if not self._store_one(episode):
                break
            stored.append(episode)
        return stored

    def drain(self) -> list[Episode]:
        """Try every pending write now, oldest first; stop at the first failure."""
        stored: list[Episode] = []
        for episode in self.journal.pending():
            if not self._store_one(episode):
                return stored
            stored.append(episode)
        self.has_pending = False
        return stored

    def retry_if_due(self) -> None:
        if self.has_pending and time.monotonic() >= self._retry_at:
            self.drain()

    def _store_one(self, episode: Episode) -> bool:
        try:
            self.store_for(episode.user).add([episode])
        except StoreError as exc:
            self.has_pending, self._retry_at = True, time.monotonic() + self.retry_interval
            log.warning("episode %s kept in the outbox, store write failed: %s", episode.id, exc)
            return False
        try:
            self.journal.confirm(episode.id)
        except JournalError as exc:  # stored twice later is harmless: the write is an upsert
            log.warning(
                "episode %s stored but not confirmed in the journal (%s); it will be written again",
                episode.id,
                exc,
            )
        return True
