"""Typed errors: every failure episeg raises is an :class:`EpisegError`.

The one taxonomy (indentation is inheritance; the stdlib base in brackets lets
callers that know nothing of episeg catch it too)::

    EpisegError
        ConfigError [ValueError]                a configuration value is wrong
            InvalidConfigEnum                   ... names no member of an enum
        TurnValidationError [ValueError]        a turn or transcript line is malformed
            InvalidTurnEnum                     ... names no actor / turn type
            TurnConflictError                   ... reuses a recorded id with other content
        InvalidEnumValue [ValueError]           any enum parse failure (both above)
        TenantError [PermissionError]           wrong or invalid tenant
        BackendUnavailableError [ConnectionError]  a model, judge or server is unreachable
            BackendUnavailableJudgeError        ... while judging (also a JudgeError)
            StoreUnavailableError               ... the store (also a StoreError)
        JudgeError                              a judge gave no usable answer
            RequestRejectedError                ... the server refused the request itself (4xx)
        ScoringError                            a salience scorer gave no usable score
        EmbeddingError [ValueError]             the embedder returned unusable vectors
        StoreError                              the store rejected an operation
            EpisodeNotFoundError [LookupError]  ... no such episode for this tenant
        EpisodeEditError [ValueError]           an edit of a stored episode is malformed
            MetadataError                       ... its user metadata (or a metadata filter)
        EpisodeValidationError [ValueError]     an episode given to store is malformed
        ArgumentError [ValueError]              a call's argument is malformed
            RecallArgumentError                 ... a recall's query or option
        JournalError                            the crash-safety journal failed
        ExportFormatError [ValueError]          an export file (JSONL) is malformed or does not fit
        ImportConflictError                     an imported episode id exists with other content

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
    "ArgumentError",
    "BackendUnavailableError",
    "BackendUnavailableJudgeError",
    "ConfigError",
    "EmbeddingError",
    "EpisegError",
    "EpisodeEditError",
    "EpisodeNotFoundError",
    "EpisodeValidationError",
    "ExportFormatError",
    "ImportConflictError",
    "InvalidConfigEnum",
    "InvalidEnumValue",
    "InvalidTurnEnum",
    "JournalError",
    "JudgeError",
    "MetadataError",
    "RecallArgumentError",
    "RequestRejectedError",
    "ScoringError",
    "StoreError",
    "StoreUnavailableError",
    "TenantError",
    "TurnConflictError",
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

    def at_line(self, line: int) -> TurnValidationError:
        """This error naming ``line`` of a file (itself if it names a line already).

        >>> str(TurnConflictError("id reused", turn_id="a").at_line(4))
        'line 4: id reused'
        """
        if self.line is not None:
            return self
        copy = type(self).__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.line, copy.args = line, (f"line {line}: {self.message}",)
        return copy


class TurnConflictError(TurnValidationError):
    """A turn reuses an id already recorded in its session, with different content.

    The same id with the same actor, type, text and ts is an idempotent
    duplicate (skipped); with anything else it is this error (HTTP 409): the
    turn is refused and nothing is recorded. ``turn_id`` names the id.

    >>> err = TurnConflictError("id reused", turn_id="s:3", line=7)
    >>> str(err), err.turn_id, isinstance(err, TurnValidationError)
    ('line 7: id reused', 's:3', True)
    """

    def __init__(self, message: str, *, turn_id: str, line: int | None = None) -> None:
        self.turn_id = turn_id
        super().__init__(message, line=line)


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


class RequestRejectedError(JudgeError):
    """The server refused this very request (an HTTP 4xx other than 401/403/404).

    Sending the same request again cannot help (a prompt too long, a schema the
    server does not accept), so neither the LLM backends nor the salience
    scorer retries it.
    """


class ScoringError(EpisegError):
    """A salience scorer failed to give a usable 1-10 integer."""


class EmbeddingError(EpisegError, ValueError):
    """The embedder returned vectors episeg cannot use: not one finite row per text, or of
    another dimension than the session's earlier ones (the turn was not accepted)."""


class StoreError(EpisegError):
    """The episode store rejected an operation."""


class BackendUnavailableJudgeError(BackendUnavailableError, JudgeError):
    """A judge's or scorer's backend was unreachable (connection, timeout, overload).

    It is both: callers that degrade on ``JudgeError`` keep degrading, and
    callers that care about availability can tell it from a garbage answer.
    """


class EpisodeNotFoundError(StoreError, LookupError):
    """The tenant has no episode by that id (another tenant's id is not found either)."""


class EpisodeEditError(EpisegError, ValueError):
    """An edit of a stored episode is malformed: summary, salience or pin (the message says how)."""


class EpisodeValidationError(EpisegError, ValueError):
    """An episode handed to the memory to store is malformed; none of its batch was stored.

    No turn, no or a non-finite embedding, vectors of another width than the
    memory's embedder, a time that is not finite or runs backwards, or an id
    given twice in one batch (the message names the episode).
    """


class ArgumentError(EpisegError, ValueError):
    """A call's argument is malformed or arguments contradict each other (the message names it)."""


class RecallArgumentError(ArgumentError):
    """A recall's query or option is malformed: ``k`` < 1, a non-string query, a NaN time..."""


class MetadataError(EpisodeEditError):
    """An episode's user metadata or a metadata filter is malformed (the message says how)."""


class StoreUnavailableError(StoreError, BackendUnavailableError):
    """The episode store could not be reached (server down, disk gone)."""


class JournalError(EpisegError):
    """The crash-safety journal could not be read or written."""


class ExportFormatError(EpisegError, ValueError):
    """An episeg export file is malformed or does not fit this memory; nothing was imported.

    ``line`` is the 1-based line of the first problem.

    >>> str(ExportFormatError("not JSON", line=4))
    'line 4: not JSON'
    """

    def __init__(self, message: str, *, line: int) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


class ImportConflictError(EpisegError):
    """An imported episode id is already stored with other content; nothing was imported.

    ``ids`` names every conflicting id (the same id with the same content is
    skipped: re-importing a file is idempotent).
    """

    def __init__(self, message: str, *, ids: tuple[str, ...]) -> None:
        self.ids = ids
        super().__init__(message)
