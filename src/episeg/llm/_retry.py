"""The bounded retry loop shared by every backend, on ``tenacity``.

A backend hands in one attempt (a callable) and a classifier that turns an SDK
exception into a :class:`Failure`; transient failures are retried with
exponential backoff plus random jitter (``tenacity.wait_exponential_jitter``),
or after the server's ``Retry-After`` when it sent one (honoured up to
``RetryPolicy.max_retry_after``, 60 s by default, no longer capped at the
backoff's 8 s; beyond it the wait is capped, or with
``fail_beyond_retry_after`` the call gives up at once, as the judges do); each
is logged, and a typed episeg error is raised at the end.
The SDKs' own retries are off (``max_retries=0``) so this is the one policy.

>>> from episeg.llm._retry import Failure, run_with_retries
>>> from episeg.llm import RetryPolicy
>>> answers = iter([TimeoutError("slow"), {"ok": True}])
>>> def attempt():
...     value = next(answers)
...     if isinstance(value, Exception):
...         raise value
...     return value
>>> classify = lambda exc: Failure(f"timed out: {exc}", retryable=True, unavailable=True)
>>> run_with_retries("demo", RetryPolicy(attempts=2, base_delay=0.0), attempt, classify,
...                  sleep=lambda s: None)
{'ok': True}
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from episeg.errors import JudgeError, RequestRejectedError
from episeg.llm._base import (
    BackendUnavailableJudgeError,
    RetryPolicy,
    log,
    parse_retry_after,
)
from episeg.llm._deadline import AttemptDeadlineExceeded
from episeg.llm._scrub import scrub

__all__ = [
    "Failure",
    "classify_connection",
    "classify_local",
    "classify_status",
    "run_with_retries",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Failure:
    """How one failed attempt is handled.

    ``retryable``: worth another attempt (429, 529, 5xx, timeout, refused).
    ``unavailable``: on final failure raise ``BackendUnavailableJudgeError``
    rather than ``JudgeError`` (the request itself was at fault).
    ``rejected``: the server refused this very request (HTTP 4xx):
    ``RequestRejectedError``, which no caller retries.
    """

    message: str
    retryable: bool
    unavailable: bool
    retry_after: float | None = None
    rejected: bool = False


def run_with_retries(
    name: str,
    policy: RetryPolicy,
    attempt: Callable[[], T],
    classify: Callable[[Exception], Failure | None],
    *,
    sleep: Callable[[float], None] = time.sleep,
    secrets: Sequence[str | None] = (),
) -> T:
    r"""Call ``attempt`` up to ``policy.attempts`` times; raise a typed error at the end.

    ``classify`` returns ``None`` for exceptions it does not know; those
    propagate unchanged (a programming error should not look like an outage).
    ``JudgeError`` raised by ``attempt`` itself (a garbage reply) is logged and
    re-raised at once: a temperature-0 model repeats itself, so a retry here
    would only spend money; callers that want one (the salience scorer) retry.
    Every message that leaves (logs, the raised error) is :func:`~._scrub.scrub`\ bed of
    ``secrets`` (the backend's API key), key-shaped tokens and lone surrogates, and clipped.
    """
    classify = _scrubbing(classify, secrets)
    backoff = wait_exponential_jitter(
        initial=policy.base_delay, max=policy.max_delay, jitter=policy.base_delay
    )

    def failure_of(state: RetryCallState) -> Failure | None:
        exc = state.outcome.exception() if state.outcome is not None else None
        return classify(exc) if isinstance(exc, Exception) else None

    def wait(state: RetryCallState) -> float:
        failure = failure_of(state)
        if failure is not None and failure.retry_after is not None and failure.retry_after >= 0:
            return min(failure.retry_after, policy.max_retry_after)
        return float(backoff(state))

    def waits_too_long(failure: Failure | None) -> bool:
        return (
            policy.fail_beyond_retry_after
            and failure is not None
            and failure.retry_after is not None
            and failure.retry_after > policy.max_retry_after
        )

    def worth_retrying(exc: BaseException) -> bool:
        if isinstance(exc, JudgeError) or not isinstance(exc, Exception):
            return False
        failure = classify(exc)
        return failure is not None and failure.retryable and not waits_too_long(failure)

    def before_sleep(state: RetryCallState) -> None:
        failure = failure_of(state)
        log.warning(
            "%s: attempt %d/%d failed (%s); retrying in %.2fs",
            name,
            state.attempt_number,
            policy.attempts,
            failure.message if failure is not None else "?",
            state.upcoming_sleep,
        )

    retrying = Retrying(
        stop=stop_after_attempt(policy.attempts),
        wait=wait,
        retry=retry_if_exception(worth_retrying),
        before_sleep=before_sleep,
        sleep=sleep,
        reraise=True,
    )
    try:
        return retrying(attempt)
    except JudgeError as exc:
        safe = scrub(str(exc), secrets)
        log.warning("%s: unusable reply: %s", name, safe)
        if safe == str(exc):
            raise
        raise _with_message(exc, safe) from exc
    except Exception as exc:
        failure = classify(exc)
        if failure is None:
            raise
        tries = f"after {retrying.statistics.get('attempt_number', 1)} attempt(s)"
        if waits_too_long(failure):
            tries += (
                f"; the server asked to wait {failure.retry_after:g} s, more than "
                f"max_retry_after={policy.max_retry_after:g} s"
            )
        log.error("%s: request failed %s: %s", name, tries, failure.message)
        error_type: type[JudgeError] = JudgeError
        if failure.unavailable:
            error_type = BackendUnavailableJudgeError
        elif failure.rejected:
            error_type = RequestRejectedError
        raise error_type(f"{name}: {failure.message} ({tries})") from exc


def _scrubbing(
    classify: Callable[[Exception], Failure | None], secrets: Sequence[str | None]
) -> Callable[[Exception], Failure | None]:
    def classified(exc: Exception) -> Failure | None:
        failure = classify(exc)
        if failure is None:
            return None
        return dataclasses.replace(failure, message=scrub(failure.message, secrets))

    return classified


def _with_message(exc: JudgeError, message: str) -> JudgeError:
    """``exc``'s class with ``message`` (a ``JudgeError`` if that class takes other arguments)."""
    try:
        return type(exc)(message)
    except TypeError:
        return JudgeError(message)


def classify_status(status: int, headers: object, detail: str) -> Failure:
    """The shared HTTP status policy of every backend.

    408, 409, 429, 5xx and Anthropic's 529 *overloaded* are transient and
    retried; 401/402/403/404 mean the server is unusable as configured
    (unavailable); other 4xx mean it rejected this request
    (``RequestRejectedError``, a ``JudgeError``). An ``x-should-retry`` header
    overrides the retry (``false``: a 429 for an exhausted quota is not sent
    again; ``true``: a 4xx the server calls transient is).
    """
    message = f"HTTP {status}: {detail}"
    should = _should_retry(headers)
    if status in (408, 409, 429) or status >= 500 or (should is True and status != 402):
        return Failure(
            message,
            retryable=should is not False,
            unavailable=True,
            retry_after=parse_retry_after(headers),
        )
    if status in (401, 402, 403, 404):  # 402: billing; every request fails until it is settled
        return Failure(message, retryable=False, unavailable=True)
    return Failure(message, retryable=False, unavailable=False, rejected=True)


def _should_retry(headers: object) -> bool | None:
    """The server's ``x-should-retry`` verdict (both SDKs obey it), ``None`` if absent."""
    get = getattr(headers, "get", None)
    value = get("x-should-retry") if callable(get) else None
    if value == "true":
        return True
    return False if value == "false" else None


def classify_local(exc: Exception) -> Failure | None:
    """Failures that look the same whatever the SDK; ``None`` for any other exception.

    >>> classify_local(RecursionError()).message
    'response body is nested too deeply'
    """
    if isinstance(exc, AttemptDeadlineExceeded):
        return Failure(f"request timed out: {exc}", retryable=True, unavailable=True)
    if isinstance(exc, UnicodeDecodeError):
        return Failure(f"response body is not UTF-8: {exc}", retryable=False, unavailable=False)
    if isinstance(exc, UnicodeEncodeError):
        return Failure(f"request cannot be encoded: {exc}", retryable=False, unavailable=True)
    if isinstance(exc, RecursionError):
        return Failure("response body is nested too deeply", retryable=False, unavailable=False)
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return Failure(
            "response body holds a number too long to read", retryable=False, unavailable=False
        )
    return None


def classify_connection(exc: Exception) -> Failure:
    """An SDK ``APIConnectionError``: retried, unless its cause says no attempt can succeed.

    A request the HTTP layer refuses to send (an illegal header value, a URL
    scheme it cannot speak) or a body it cannot decode fails the same way every
    time: not retried, and the cause is named.
    """
    import httpx2  # the SDKs' HTTP layer, loaded with them

    cause, depth = exc.__cause__, 0
    while cause is not None and depth < 5:
        if isinstance(cause, httpx2.LocalProtocolError | httpx2.UnsupportedProtocol):
            return Failure(f"request cannot be sent: {cause!r}", retryable=False, unavailable=True)
        if isinstance(cause, httpx2.DecodingError):
            return Failure(
                f"response body cannot be decoded: {cause!r}", retryable=False, unavailable=False
            )
        cause, depth = cause.__cause__ or cause.__context__, depth + 1
    named = f" ({exc.__cause__!r})" if exc.__cause__ is not None else ""
    return Failure(f"cannot connect: {exc}{named}", retryable=True, unavailable=True)
