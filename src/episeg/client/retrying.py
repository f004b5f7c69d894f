"""The clients' retries: which calls may be sent again, after which failures, and how long to wait.

Every turn and chat message the clients send carries an id (the client makes
one, ``c-`` and 32 hex digits, when the caller gave none), and the service
skips a turn whose id it already recorded. So a turn sent again after a
timeout is recorded once, and the clients may retry it on their own.

Which calls are retried after which failure:

- no connection was made (refused, connect timeout, pool timeout): every
  call, since nothing reached the service;
- a ``429``, or a ``503`` with ``Retry-After`` (the service's "come back
  later", nothing applied): every call, after the wait it asks for when that
  is at most ``max_wait``;
- the answer was lost (read or write timeout, connection cut), or a proxy's
  ``502``/``504``/``503``: only the calls that are safe to repeat
  (:data:`SAFE_TO_REPEAT`: turns and messages with their ids, flush, reads,
  recall, edits that set values, import). Not ``used`` (it would reinforce
  twice) nor the ``forget`` calls (a repeat answers 404, or reports nothing
  erased).

When the retries are spent, a lost answer raises :class:`NoAnswerError`
(``status`` 0, ``sent_ids``: the turn ids the request carried, so a caller can
send the same turns again safely); an error answer raises its ``APIError``.

>>> policy = RetryPolicy(retries=2)
>>> lost = httpx.ReadTimeout("slow")
>>> policy.may_retry("recall", lost), policy.may_retry("used", lost)
(True, False)
>>> policy.may_retry("used", httpx.ConnectError("refused"))
True
>>> policy.may_retry("used", APIError(503, "journal busy", retry_after=1.0))
True
>>> policy.may_retry("used", APIError(503, "journal busy", retry_after=60.0))  # over max_wait
False
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from episeg.client.wire import APIError
from episeg.errors import ConfigError

__all__ = ["SAFE_TO_REPEAT", "NoAnswerError", "RetryPolicy"]

log = logging.getLogger(__name__)

SAFE_TO_REPEAT = frozenset(
    {
        "observe",
        "observe_batch",
        "observe_messages",
        "flush",
        "episodes",
        "episode",
        "update_episode",
        "unarchive",
        "tenants",
        "recall",
        "export",
        "import_episodes",
        "healthz",
    }
)
"""Client calls whose repeat changes nothing more than the first send (see the module doc)."""

_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_PROXY_STATUSES = frozenset({502, 503, 504})


class NoAnswerError(APIError):
    """The service gave no answer (refused, timed out, cut off) after the client's retries.

    ``status`` is 0; ``applied`` says whether the request may have been
    applied (``False`` only when no connection was made); ``sent_ids`` are
    the ids of the turns or messages it carried: sending them again with
    these ids is safe (the service skips an id it recorded).
    """

    def __init__(self, detail: str, *, applied: bool, sent_ids: tuple[str, ...] = ()) -> None:
        super().__init__(0, detail)
        self.applied = applied
        self.sent_ids = sent_ids


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a client retries (``retries=0``: never).

    ``max_wait`` caps both the backoff between attempts and the ``Retry-After``
    the client will honour; a longer one is raised to the caller at once.
    """

    retries: int = 2
    max_wait: float = 10.0
    backoff: float = 0.25

    def __post_init__(self) -> None:
        if not isinstance(self.retries, int) or isinstance(self.retries, bool) or self.retries < 0:
            raise ConfigError(f"retries must be an integer >= 0, got {self.retries!r}")
        for name in ("max_wait", "backoff"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0 <= value < float("inf"):
                raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}")

    def may_retry(self, call: str, exc: BaseException) -> bool:
        """Whether ``call`` may be sent again after ``exc`` (the module doc's table)."""
        if isinstance(exc, _NOT_SENT):
            return True
        if isinstance(exc, httpx.TransportError):
            return call in SAFE_TO_REPEAT
        if isinstance(exc, APIError) and not isinstance(exc, NoAnswerError):
            asked = exc.retry_after
            if exc.status in (429, 503) and asked is not None:
                return asked <= self.max_wait
            return exc.status in _PROXY_STATUSES and call in SAFE_TO_REPEAT
        return False

    def _wait(self) -> Callable[[RetryCallState], float]:
        backoff = wait_random_exponential(multiplier=self.backoff, max=self.max_wait)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, APIError) and exc.retry_after is not None:
                return min(exc.retry_after, self.max_wait)
            return float(backoff(state))

        return wait

    def _options(self, call: str) -> dict[str, Any]:
        def logged(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            log.warning("%s: attempt %d failed (%r); retrying", call, state.attempt_number, exc)

        return {
            "stop": stop_after_attempt(self.retries + 1),
            "wait": self._wait(),
            "retry": retry_if_exception(lambda exc: self.may_retry(call, exc)),
            "before_sleep": logged,
            "reraise": True,
        }

    def retrying(self, call: str) -> Retrying:
        """A tenacity ``Retrying`` for one call of the sync client."""
        return Retrying(**self._options(call))

    def async_retrying(self, call: str) -> AsyncRetrying:
        """A tenacity ``AsyncRetrying`` for one call of the async client."""
        return AsyncRetrying(**self._options(call))


def no_answer(exc: httpx.RequestError, sent_ids: tuple[str, ...]) -> NoAnswerError:
    """The :class:`NoAnswerError` for a transport failure that the retries did not cure."""
    applied = not isinstance(exc, _NOT_SENT)
    maybe = "; the request may have been applied" if applied else "; nothing reached the service"
    if applied and sent_ids:
        maybe += f" (sending its {len(sent_ids)} turn(s) again with the same ids is safe)"
    return NoAnswerError(
        f"no answer from the service: {type(exc).__name__}: {exc}{maybe}",
        applied=applied,
        sent_ids=sent_ids,
    )
