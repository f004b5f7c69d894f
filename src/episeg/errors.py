"""Typed errors: every failure episeg raises is an :class:`EpisegError`.

The one taxonomy (indentation is inheritance; the stdlib base in brackets lets
callers that know nothing of episeg catch it too)::

    EpisegError
        ConfigError [ValueError]                a configuration value is wrong
            InvalidConfigEnum                   ... names no member of an enum
        TurnValidationError [ValueError]        a turn or transcript line is malformed
            InvalidTurnEnum                     ... names no actor / turn type
        InvalidEnumValue [ValueError]           any enum parse failure (both above)
        TenantError [PermissionError]           wrong or invalid tenant
        BackendUnavailableError [ConnectionError]  a model, judge or server is unreachable
            BackendUnavailableJudgeError        ... while judging (also a JudgeError)
            StoreUnavailableError               ... the store (also a StoreError)
        JudgeError                              a judge gave no usable answer
        ScoringError                            a salience scorer gave no usable score
        StoreError                              the store rejected an operation
        JournalError                            the crash-safety journal failed

Callers can catch the whole family or one branch:

>>> from episeg.errors import EpisegError, TurnValidationError
>>> try:
...     raise TurnValidationError("text must be a string", line=3)
... except EpisegError as err:
...     print(err)
line 3: text must be a string
"""

from __future__ import annotations

__all__ = [
    "BackendUnavailableError",
    "BackendUnavailableJudgeError",
    "ConfigError",
    "EpisegError",
    "InvalidConfigEnum",
    "InvalidEnumValue",
    "InvalidTurnEnum",
    "JournalError",
    "JudgeError",
    "ScoringError",
    "StoreError",
    "StoreUnavailableError",
    "TenantError",
    "TurnValidationError",
]


class EpisegError(Exception):
    """Root of every error episeg raises on purpose."""


class ConfigError(EpisegError, ValueError):
    """A configuration value is out of range or of the wrong kind."""


class TurnValidationError(EpisegError, ValueError):
    """A turn (or a transcript line) is malformed.

    Parameters
    ----------
    message
        What is wrong, naming the valid values where there is a fixed set.
    line
        1-based line number in the transcript the turn came from, if any.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}" if line is not None else message)


class InvalidEnumValue(EpisegError, ValueError):
    """A value names no member of an episeg enum; the message lists the valid values.

    >>> err = InvalidEnumValue("unknown actor 'robot'", value="robot", valid=("user", "tool"))
    >>> str(err), err.valid
    ("unknown actor 'robot'; valid: user, tool", ('user', 'tool'))
    """

    def __init__(self, message: str, *, value: object, valid: tuple[str, ...]) -> None:
        self.value = value
        self.valid = valid
        super().__init__(f"{message}; valid: {', '.join(valid)}")


class InvalidConfigEnum(InvalidEnumValue, ConfigError):
    """A configuration value names no member of its enum (e.g. ``judge.gate``)."""


class InvalidTurnEnum(InvalidEnumValue, TurnValidationError):
    """A turn's actor or type names no member of its enum."""


class TenantError(EpisegError, PermissionError):
    """An operation named a tenant it is not bound to, or an invalid tenant id."""


class BackendUnavailableError(EpisegError, ConnectionError):
    """A model, judge or server backend could not be reached."""


class JudgeError(EpisegError):
    """A judge failed to give a usable answer (timeout, overload, garbage)."""


class ScoringError(EpisegError):
    """A salience scorer failed to give a usable 1-10 integer."""


class StoreError(EpisegError):
    """The episode store rejected an operation."""


class BackendUnavailableJudgeError(BackendUnavailableError, JudgeError):
    """A judge's or scorer's backend was unreachable (connection, timeout, overload).

    It is both: callers that degrade on ``JudgeError`` keep degrading, and
    callers that care about availability can tell it from a garbage answer.
    """


class StoreUnavailableError(StoreError, BackendUnavailableError):
    """The episode store could not be reached (server down, disk gone)."""


class JournalError(EpisegError):
    """The crash-safety journal could not be read or written."""
