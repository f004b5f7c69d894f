"""Shared parts of the structured-output clients: retry policy, schema check, errors.

The backends (:mod:`episeg.llm.anthropic_backend`, :mod:`episeg.llm.openai_backend`)
differ only in how they call their SDK and how they classify its exceptions;
the retry loop and the reply validation live here, once.

>>> from episeg.llm import RetryPolicy, validate_reply
>>> RetryPolicy(attempts=0)
Traceback (most recent call last):
...
ValueError: attempts must be an integer >= 1, got 0
>>> schema = {"type": "object", "required": ["score"], "additionalProperties": False,
...           "properties": {"score": {"type": "integer", "enum": list(range(1, 11))}}}
>>> validate_reply({"score": 7}, schema)
{'score': 7}
>>> validate_reply({"score": 11}, schema)
Traceback (most recent call last):
...
episeg.errors.JudgeError: reply field 'score' = 11 is not one of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
"""

from __future__ import annotations

import datetime
import email.utils
import functools
import logging
import math
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from episeg.errors import (
    BackendUnavailableJudgeError,
    ConfigError,
    JudgeError,
)

__all__ = [
    "BackendUnavailableJudgeError",
    "RetryPolicy",
    "StructuredBackend",
    "check_request_limits",
    "read_reply",
    "shared_tls_context",
    "validate_reply",
]

log = logging.getLogger("episeg.llm")

T = TypeVar("T")


@functools.cache
def shared_tls_context() -> ssl.SSLContext:
    """The one TLS context every backend of this process verifies servers with.

    Built once, as the SDKs' HTTP layer (``httpx2``) builds its default: the
    system CA bundle, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` as set when the first
    backend is made. Loading the bundle costs ~25 ms, which every SDK client
    paid again; an ``SSLContext`` is safe to share between clients and threads.

    >>> shared_tls_context() is shared_tls_context()
    True
    >>> shared_tls_context().verify_mode == ssl.CERT_REQUIRED
    True
    """
    import httpx2  # the SDKs' HTTP client; imported with them, not with episeg

    return httpx2.create_ssl_context(verify=True)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """Bounded retries with exponential backoff for transient failures.

    Parameters
    ----------
    attempts : int, default 3
        Requests made at most (1 = no retry).
    base_delay : float, default 0.5
        Wait before the second attempt, in seconds; doubled each retry
        (``tenacity``'s exponential backoff with jitter, :mod:`episeg.llm._retry`).
    max_delay : float, default 8.0
        Cap of any backoff wait (each gets up to ``base_delay`` of random jitter).
    max_retry_after : float, default 60.0
        A server's ``Retry-After`` is honoured up to this many seconds.
    fail_beyond_retry_after : bool, default False
        When a server asks for a longer wait than ``max_retry_after``: ``False``
        waits ``max_retry_after`` and retries; ``True`` gives up at once
        (``BackendUnavailableJudgeError``), as a judge on the ingest path should.
    """

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    fail_beyond_retry_after: bool = False

    def __post_init__(self) -> None:
        if (
            isinstance(self.attempts, bool)
            or not isinstance(self.attempts, int)
            or self.attempts < 1
        ):
            raise ValueError(f"attempts must be an integer >= 1, got {self.attempts!r}")
        if not self.base_delay >= 0:
            raise ValueError(f"base_delay must be >= 0, got {self.base_delay}")
        if not self.max_delay >= 0:
            raise ValueError(f"max_delay must be >= 0, got {self.max_delay}")
        if not self.max_retry_after >= 0:
            raise ValueError(f"max_retry_after must be >= 0, got {self.max_retry_after}")


@runtime_checkable
class StructuredBackend(Protocol):
    """A chat model that answers one prompt with a JSON object fitting a schema.

    ``complete`` returns the validated object or raises
    :class:`~episeg.errors.JudgeError` (unusable reply) or
    :class:`BackendUnavailableJudgeError` (unreachable, timed out, overloaded).
    ``calls`` counts HTTP requests made, retries included. A backend also
    reports each request with :func:`episeg.llm.note_request`, so a caller can
    count its own call's requests even when the backend is shared (a backend
    that does not is counted by the change of ``calls``, which over-counts
    under concurrency).
    """

    @property
    def name(self) -> str: ...

    @property
    def calls(self) -> int: ...

    def complete(
        self, *, system: str, prompt: str, tool_name: str, schema: dict[str, Any]
    ) -> dict[str, Any]: ...


def check_request_limits(model: str, timeout: float, max_tokens: int) -> None:
    """Shared constructor checks of the SDK backends; a ``ConfigError`` names the bad value.

    >>> check_request_limits("m", 0, 10)
    Traceback (most recent call last):
    episeg.errors.ConfigError: timeout must be a finite number of seconds > 0, got 0
    >>> check_request_limits("m", float("inf"), 10)
    Traceback (most recent call last):
    episeg.errors.ConfigError: timeout must be a finite number of seconds > 0, got inf
    """
    if not model:
        raise ConfigError("model must be a non-empty model id")
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or not timeout > 0
    ):
        raise ConfigError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
    if max_tokens < 1:
        raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")


def read_reply(parse: Callable[[], T]) -> T:
    """``parse()``, with any Python error on a malformed reply turned into ``JudgeError``.

    A server may send any JSON (``{"choices": [1]}``, ``"content": 5``, a reply
    nested 10^5 deep); reading it must fail as an unusable reply, not as an
    ``AttributeError`` the callers were never promised.

    >>> read_reply(lambda: {}["choices"])
    Traceback (most recent call last):
    ...
    episeg.errors.JudgeError: malformed reply: KeyError: 'choices'
    """
    try:
        return parse()
    except (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError) as exc:
        raise JudgeError(f"malformed reply: {type(exc).__name__}: {_clip(str(exc))}") from exc


def parse_retry_after(headers: Any, *, now: float | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP-date), if present.

    >>> parse_retry_after({"retry-after": "2.5"})
    2.5
    >>> parse_retry_after({"retry-after": "Thu, 01 Jan 1970 00:01:00 GMT"}, now=30.0)
    30.0
    >>> parse_retry_after({"retry-after": "nan"}) is None
    True
    """
    if headers is None:
        return None
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(key)
        if raw is None:
            continue
        seconds = _retry_seconds(str(raw), scale, time.time() if now is None else now)
        if seconds is not None:
            return seconds
        log.warning("ignoring unparseable %s header %r", key, _clip(str(raw)))
    return None


def _retry_seconds(raw: str, scale: float, now: float) -> float | None:
    try:
        value = float(raw) * scale
    except ValueError:
        if scale != 1.0:
            return None
        try:  # RFC 9110: Retry-After may be an HTTP-date instead of seconds
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # "-0000" (no zone): read as UTC, as the RFC's GMT
            when = when.replace(tzinfo=datetime.UTC)
        value = when.timestamp() - now
    return max(0.0, value) if math.isfinite(value) else None


def validate_reply(data: object, schema: dict[str, Any]) -> dict[str, Any]:
    """Check ``data`` against a flat object schema; return it or raise ``JudgeError``.

    Supports what the episeg schemas use: ``required``, ``additionalProperties:
    false``, and per property ``type``, ``enum``, ``minLength``, ``maxLength``.
    """
    if not isinstance(data, dict):
        raise JudgeError(f"reply is not a JSON object but {type(data).__name__}")
    props: dict[str, Any] = schema.get("properties", {})
    missing = [key for key in schema.get("required", []) if key not in data]
    if missing:
        raise JudgeError(f"reply lacks required field(s) {missing}; got {sorted(data)}")
    if schema.get("additionalProperties") is False:
        extra = sorted(set(data) - set(props))
        if extra:
            raise JudgeError(f"reply has unexpected field(s) {extra}; valid: {sorted(props)}")
    for key, spec in props.items():
        if key in data:
            _check_value(key, data[key], spec)
    return data


def _check_value(key: str, value: object, spec: dict[str, Any]) -> None:
    expected = spec.get("type")
    if expected is not None:
        kinds = _JSON_TYPES[expected]
        if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
            raise JudgeError(f"reply field {key!r} = {_clip(repr(value))} is not a {expected}")
    if "enum" in spec and value not in spec["enum"]:
        raise JudgeError(f"reply field {key!r} = {_clip(repr(value))} is not one of {spec['enum']}")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate ("\\udc80" in the JSON) cannot be stored
            raise JudgeError(f"reply field {key!r} contains a lone surrogate") from None
        if len(value) < spec.get("minLength", 0):
            raise JudgeError(f"reply field {key!r} is shorter than {spec['minLength']} chars")
        if "maxLength" in spec and len(value) > spec["maxLength"]:
            raise JudgeError(f"reply field {key!r} is longer than {spec['maxLength']} chars")


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
