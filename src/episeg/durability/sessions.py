"""Live session state per tenant: one segmenter and one lock each, a bounded resident set.

:class:`SessionPool` gives every tenant its own
:class:`~episeg.segmentation.segmenter.Segmenter` (its sessions, its judge tap,
its counters) behind its own lock, so one tenant's turns, flushes, journal and
store calls never wait for another tenant's (issue 12, F12). The lock is per
tenant, not per session, because a tenant's sessions share that segmenter.

At most ``max_resident`` sessions (over all tenants) are kept in memory; the
least recently used beyond that are dropped (issue 12, F13). Nothing is lost:
every accepted turn, each session's checkpoint, last timestamp and seen ids are
in the journal, and :meth:`SessionPool.enter` replays a dropped session from it
(recorded embeddings and judge answers, no model call) when it is used again.

>>> from episeg.durability.journal import Journal
>>> from episeg.segmentation.segmenter import Segmenter
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> pool = SessionPool(lambda: Segmenter(embedder=HashingEmbedder()), Journal(":memory:"),
...                    finish=lambda e: e, max_resident=2)
>>> with pool.lock("alice"):
...     seg = pool.enter("alice", "s1")
>>> pool.for_tenant("alice") is seg, pool.for_tenant("bob") is seg, pool.resident
(True, False, 1)
>>> empty = SessionPool(lambda: seg, pool.journal, finish=lambda e: e)
>>> pool.stats["turns"], empty.stats["turns"]   # no turn yet; no tenant yet
(0, 0)
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from episeg.durability.journal import Journal, JournaledSession
from episeg.types import Episode

if TYPE_CHECKING:
    from episeg.segmentation.segmenter import Segmenter

__all__ = ["DEFAULT_MAX_RESIDENT", "SessionPool", "replay"]

log = logging.getLogger(__name__)

DEFAULT_MAX_RESIDENT = 4096


def replay(segmenter: Segmenter, journaled: JournaledSession) -> list[Episode]:
    """Rebuild one journaled session in ``segmenter``; the judge answers from the records."""
    turns = [(t, v) for t, v, _ in journaled.turns]
    answers = {t.id or "": j for t, _, j in journaled.turns if j is not None}
    return segmenter.resume(
        journaled.checkpoint,
        turns,
        seen_ids=journaled.seen,
        last_ts=journaled.last_ts,
        judge_records=answers,
    )


@dataclass
class _Tenant:
    segmenter: Segmenter
    lock: threading.RLock = field(default_factory=threading.RLock)


class SessionPool:
    """Per-tenant segmenters and locks; least recently used sessions beyond a cap dropped.

    Parameters
    ----------
    make_segmenter
        Builds one tenant's segmenter (they share the embedder and judge).
    journal
        Where dropped sessions are reloaded from.
    finish
        Applied to an episode a replay closes (scoring, global id) before it
        is journaled; a deterministic replay closes none.
    max_resident
        Sessions kept in memory across tenants (>= 1).

    Every method that touches a tenant's sessions expects the caller to hold
    :meth:`lock` of that tenant.
    """

    def __init__(
        self,
        make_segmenter: Callable[[], Segmenter],
        journal: Journal,
        *,
        finish: Callable[[Episode], Episode],
        max_resident: int = DEFAULT_MAX_RESIDENT,
    ) -> None:
        if max_resident < 1:
            raise ValueError(f"max_resident must be >= 1, got {max_resident}")
        self.max_resident = max_resident
        self.journal = journal
        self.evicted = self.reloaded = 0
        self._make, self._finish = make_segmenter, finish
        self._tenants: dict[str, _Tenant] = {}
        self._lru: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._lock = threading.Lock()  # guards the two maps, held for dict operations only

    # -- tenants ----------------------------------------------------------------------
    def lock(self, user: str) -> threading.RLock:
        """The lock serialising ``user``'s writes (re-entrant)."""
        return self._tenant(user).lock

    def for_tenant(self, user: str) -> Segmenter:
        """``user``'s segmenter (created on first use)."""
        return self._tenant(user).segmenter

    def tenants(self) -> list[str]:
        """Tenants with a segmenter in this process, sorted."""
        with self._lock:
            return sorted(self._tenants)

    @property
    def resident(self) -> int:
        """Sessions held in memory now."""
        with self._lock:
            return len(self._lru)

    @property
    def stats(self) -> dict[str, int]:
        """Every tenant's :attr:`Segmenter.stats` summed (a missing counter reads 0)."""
        with self._lock:
            segmenters = [t.segmenter for t in self._tenants.values()]
        total: defaultdict[str, int] = defaultdict(int)  # 0 for a counter no tenant has yet
        for segmenter in segmenters:
            for name, value in segmenter.stats.items():
                total[name] += value
        return total

    # -- sessions ---------------------------------------------------------------------
    def enter(self, user: str, session: str) -> Segmenter:
        """Make (user, session) resident (replayed from the journal if dropped); mark it used."""
        key = (user, session)
        with self._lock:
            resident = key in self._lru
            if resident:
                self._lru.move_to_end(key)
        if not resident:
            for journaled in self.journal.sessions(only=key):
                self.reloaded += 1
                self.load(journaled)
            with self._lock:
                self._lru[key] = None
            self._evict()
        return self.for_tenant(user)

    def load(self, journaled: JournaledSession) -> list[Episode]:
        """Replay one journaled session; episodes it closes are finished and journaled.

        The session becomes the most recently used; sessions beyond the cap are
        dropped, so start-up recovery keeps at most ``max_resident`` (R3-D4).
        """
        segmenter = self.for_tenant(journaled.user)
        key = (journaled.user, journaled.session)
        closed = [self._finish(e) for e in replay(segmenter, journaled)]
        with self._lock:
            self._lru[key] = None
            self._lru.move_to_end(key)
        if closed:
            log.warning(
                "replaying session %s/%s closed %d episode(s) the live run had not closed",
                *key,
                len(closed),
            )
            self.journal.close_episodes(closed, [segmenter.checkpoint(*key)])
        self._evict()
        return closed

    def reload(self, user: str, session: str) -> None:
        """Reset (user, session) to what the journal holds (after a failed write)."""
        self.for_tenant(user).forget(user, session)
        with self._lock:
            self._lru.pop((user, session), None)
        self.enter(user, session)

    def _tenant(self, user: str) -> _Tenant:
        with self._lock:
            tenant = self._tenants.get(user)
        if tenant is None:
            made = _Tenant(self._make())  # outside the lock: building one may load weights
            with self._lock:
                tenant = self._tenants.setdefault(user, made)
        return tenant

    def _evict(self) -> None:
        """Drop the least recently used sessions beyond the cap, skipping busy tenants."""
        with self._lock:
            excess = len(self._lru) - self.max_resident
            victims = list(itertools.islice(self._lru, max(excess, 0)))
        for user, session in victims:
            tenant = self._tenant(user)
            if not tenant.lock.acquire(blocking=False):
                continue  # in use by another thread: try again on a later call
            try:
                tenant.segmenter.forget(user, session)
                with self._lock:
                    self._lru.pop((user, session), None)
                self.evicted += 1
            finally:
                tenant.lock.release()
