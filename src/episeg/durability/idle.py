"""The idle timeout: an abandoned session's open episode is closed, scored and stored.

A session that took no turn for ``config.intake.idle_timeout`` seconds (by
the process clock, not the turns' own ``ts``: an old transcript ingested now
is not idle) has its open episode closed exactly as :meth:`Memory.flush` closes
it: journaled (outbox + checkpoint in one transaction, so ``kill -9`` safe),
then written. When the session last took a turn is the journal's
``sessions.touched``, so the timeout survives a restart.

Who calls it: :meth:`IdleClosing.close_idle` (any code, any time); every
``observe`` checks its own tenant first, at most every
:func:`check_interval` seconds, and the turn's own session always; the HTTP
service and the MCP server run :class:`IdleTicker`, a thread that checks
every tenant on that interval and also retries the outbox once
``retry_interval`` has passed after a failed write (``Memory.retry_due``), so a
waiting episode is written soon after the store is back even if its tenant
sends nothing more.

>>> import tempfile
>>> from episeg.config import EpisegConfig, IntakeConfig
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> now = [1000.0]
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None, scorer=None,
...              config=EpisegConfig(intake=IntakeConfig(idle_timeout=600)), clock=lambda: now[0])
>>> mem.observe(Turn(actor="user", text="book the flight", ts=1.0, user="bob"))
[]
>>> mem.close_idle()                     # 0 s idle
[]
>>> now[0] += 601
>>> [(e.user, len(e.turns)) for e in mem.close_idle()]
[('bob', 1)]
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from numbers import Real
from typing import TYPE_CHECKING

from episeg.config import EpisegConfig
from episeg.durability.journal import Journal
from episeg.durability.sessions import SessionPool
from episeg.errors import ArgumentError, EpisegError
from episeg.store.tenants import validate_tenant
from episeg.types import Episode

__all__ = ["IdleClosing", "IdleTicker", "check_interval"]

log = logging.getLogger("episeg.memory")

_MIN_WAKE = 0.1  # seconds: the ticker's shortest sleep (a retry_interval of 0 does not spin)


def check_interval(timeout: float) -> float:
    """Seconds between idle checks: a tenth of the timeout, at most a minute.

    >>> check_interval(1800), check_interval(60)
    (60.0, 6.0)
    """
    return float(min(60.0, timeout / 10))


class IdleClosing:
    """The idle-timeout part of ``Memory`` (a mixin; ``Memory`` builds what it declares)."""

    config: EpisegConfig
    journal: Journal
    sessions: SessionPool
    _clock: Callable[[], float]
    _idle_checked: dict[str, float]
    retry_interval: float

    def close_idle(self, now: float | None = None, *, user: str | None = None) -> list[Episode]:
        """Close the open episodes of sessions idle for ``config.intake.idle_timeout``.

        ``now`` defaults to the clock; ``user`` limits it to one tenant. Each
        tenant is handled under its own lock, in journal transactions of at
        most 32 sessions and never more than ``max_sessions`` (like
        :meth:`flush`). Returns the closed episodes that
        reached the store (the others wait in :meth:`pending_writes`). A
        timeout of 0 closes nothing.

        Raises
        ------
        ArgumentError
            ``now`` is not a finite number (a bool is not one).
        TenantError
            ``user`` is not a valid tenant id.
        """
        if now is not None and (
            isinstance(now, bool) or not isinstance(now, Real) or not math.isfinite(now)
        ):
            raise ArgumentError(f"now must be a finite number or None, got {now!r:.80}")
        if user is not None:
            validate_tenant(user)
        timeout = self.config.intake.idle_timeout
        if not timeout:
            return []
        before = (float(self._clock()) if now is None else float(now)) - timeout
        tenants = sorted({u for u, _ in self.journal.idle_sessions(before=before, user=user)})
        closed: list[Episode] = []
        for tenant in tenants:
            with self.sessions.lock(tenant):
                self._check_usable()
                # a turn may have arrived meanwhile: ask again under the lock
                closed.extend(
                    self._flush_keys(tenant, self.journal.idle_sessions(before=before, user=tenant))
                )
        if closed:
            log.info("idle timeout (%gs): closed %d episode(s)", timeout, len(closed))
        return closed

    def _close_idle_if_due(self, user: str) -> list[Episode]:
        """``close_idle(user=user)`` if the last check of this tenant is old enough."""
        timeout = self.config.intake.idle_timeout
        if not timeout:
            return []
        now = float(self._clock())
        if now - self._idle_checked.get(user, -float("inf")) < check_interval(timeout):
            return []
        self._idle_checked[user] = now
        return self.close_idle(now, user=user)

    def _close_session_if_idle(self, user: str, session: str) -> list[Episode]:
        """Close (user, session)'s open episode if it is idle now (before its next turn).

        One indexed journal read, on every turn: whether a late turn opens a new
        episode does not depend on when the tenant was last checked (R3-D5).
        """
        timeout = self.config.intake.idle_timeout
        if not timeout:
            return []
        before = float(self._clock()) - timeout
        keys = self.journal.idle_sessions(before=before, user=user, session=session)
        return self._flush_keys(user, keys) if keys else []

    if TYPE_CHECKING:  # provided by MemoryWrites

        def _check_usable(self) -> None: ...

        def _flush_keys(self, user: str, keys: Sequence[tuple[str, str]]) -> list[Episode]: ...

    if TYPE_CHECKING:  # provided by MemoryOutbox

        def retry_due(self) -> list[Episode]: ...


class IdleTicker:
    """A daemon thread closing idle sessions and retrying the outbox (one thread for both).

    Long-lived interfaces (the HTTP service, the MCP server) start one, so a
    tenant that never sends another turn still gets its episodes closed
    (``memory.close_idle()`` every :func:`check_interval` seconds; not when
    the timeout is 0) and its episodes waiting in the outbox written
    (``memory.retry_due()``, checked every ``retry_interval`` seconds, at
    least every 0.1 s). Any failure is logged and the next tick tries again:
    the thread only ends with :meth:`stop`.

    >>> import tempfile
    >>> from episeg.memory import Memory
    >>> from episeg.testing import HashingEmbedder
    >>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None,
    ...              scorer=None, retry_interval=0.2)
    >>> ticker = IdleTicker(mem).start()   # idle timeout 1800 s: checks every 60 s
    >>> ticker.wake
    0.2
    >>> ticker.stop()
    """

    def __init__(self, memory: IdleClosing) -> None:
        self.memory = memory
        self.ticks = 0
        timeout = memory.config.intake.idle_timeout
        self._idle_every = check_interval(timeout) if timeout else None
        retry_every = max(_MIN_WAKE, memory.retry_interval)
        self.wake = min(retry_every, self._idle_every or retry_every)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="episeg-idle", daemon=True)

    def start(self) -> IdleTicker:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def _run(self) -> None:
        next_idle = time.monotonic()
        while not self._stop.wait(self.wake):
            if self._idle_every is not None and time.monotonic() >= next_idle:
                next_idle = time.monotonic() + self._idle_every
                self._guarded("idle check", self.memory.close_idle)
            self._guarded("outbox retry", self.memory.retry_due)
            self.ticks += 1

    @staticmethod
    def _guarded(what: str, call: Callable[[], object]) -> None:
        try:
            call()
        except EpisegError as exc:  # e.g. the journal is full: the next tick retries
            log.warning("%s failed: %s", what, exc)
        except Exception:  # a bug must not end the thread: every later tick would be lost
            log.exception("%s failed unexpectedly", what)
