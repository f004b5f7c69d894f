"""Typed errors: every failure episeg raises is an :class:`EpisegError`.

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
    "ConfigError",
    "EpisegError",
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


class StoreUnavailableError(StoreError, BackendUnavailableError):
    """The episode store could not be reached (server down, disk gone)."""


class JournalError(EpisegError):
    """The crash-safety journal could not be read or written."""
