"""A conversation turn as the harness hands it over (:class:`Turn`) and as signals see it.

:class:`Turn` validates on construction and refuses, with a
``TurnValidationError``, anything that could not be stored or replayed
faithfully: a non-finite or millisecond ``ts``, an empty user or session,
control characters in ids, text that is not valid UTF-8.

>>> Turn(actor="user", text="hi", ts=1683554160000.0)
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: ts 1683554160000.0 is not a time in seconds ...
>>> Turn.from_dict({"actor": "tool", "text": "ok", "ts": 2, "type": "tool-success"}).type
<TurnType.TOOL_SUCCESS: 'tool-success'>
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from episeg.errors import TurnValidationError
from episeg.types.enums import Actor, TurnType

__all__ = ["MAX_TS", "ObservedTurn", "Turn", "check_kind", "check_name", "iso_time"]

MAX_TS = 1e11
"""Largest ``|Turn.ts|`` accepted: seconds up to the year 5138 (milliseconds exceed it)."""
_FORBIDDEN_IN_NAMES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _is_utf8(text: str) -> bool:
    """Whether ``text`` encodes to UTF-8 (no lone surrogates, e.g. from ``surrogateescape``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_name(name: str, value: str | None) -> None:
    """Refuse control, format and surrogate characters in a session or turn id.

    Ids are joined with ``\\x1f`` into episode ids, and SQLite and Chroma
    store UTF-8 only, so such characters could make two episodes share an id
    or leave a journal transaction half done.
    """
    if value is None:
        return
    for ch in value:
        if unicodedata.category(ch) in _FORBIDDEN_IN_NAMES:
            raise TurnValidationError(
                f"{name} {value!r} contains {ch!r}: control, format and surrogate "
                "characters are not allowed in ids"
            )


# The types each actor can produce: an assistant calls tools as a tool turn does.
_KINDS = {
    Actor.USER: frozenset({TurnType.USER_QUESTION, TurnType.USER_CORRECTION}),
    Actor.ASSISTANT: frozenset({TurnType.ASSISTANT_ANSWER, TurnType.TOOL_CALL}),
    Actor.TOOL: frozenset({TurnType.TOOL_CALL, TurnType.TOOL_ERROR, TurnType.TOOL_SUCCESS}),
    Actor.SYSTEM: frozenset({TurnType.SYSTEM_EVENT}),
}


def check_kind(turn: Turn) -> None:
    """Refuse a ``type`` its ``actor`` cannot produce (a user turn typed ``tool-error``).

    ``user-*`` types are the user's, ``assistant-answer`` the assistant's,
    ``tool-call`` the assistant's or a tool's, ``tool-error``/``tool-success`` a
    tool's and ``system-event`` the system's. The type is structural evidence
    (a system event closes an episode, tool errors raise salience), so a
    contradictory pair is refused rather than believed. ``Memory`` checks it on
    every turn it takes; :class:`Turn` itself does not, so turns stored before
    still read back.

    >>> check_kind(Turn(actor="assistant", text="ls()", ts=1.0, type="tool-call"))
    >>> check_kind(Turn(actor="user", text="thanks!", ts=1.0, type="tool-error"))
    Traceback (most recent call last):
    ...
    episeg.errors.TurnValidationError: a user turn cannot have type 'tool-error'; valid: ...
    """
    valid = _KINDS[turn.actor]
    if turn.type is not None and turn.type not in valid:
        names = ", ".join(sorted(kind.value for kind in valid))
        raise TurnValidationError(
            f"a {turn.actor.value} turn cannot have type {turn.type.value!r}; "
            f"valid: {names} or none"
        )


def iso_time(ts: float) -> str:
    """Seconds since the epoch as an ISO 8601 UTC date-time, to the second.

    A time outside the calendar's range (years 1-9999) is written as the raw
    number of seconds instead.

    >>> iso_time(1683554160.0), iso_time(1e300)
    ('2023-05-08T13:56:00Z', '1e+300s')
    """
    try:
        return datetime.fromtimestamp(round(ts), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, ValueError, OSError):
        return f"{ts!r}s"


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation turn, as the harness hands it over.

    ``ts`` is seconds since the epoch (any monotonic clock works as long as
    one session uses one clock), any real number (a numpy one from a
    timestamp column too; not a bool), kept as a float. ``id`` makes
    ingestion idempotent; the segmenter assigns ``"<session>:<seq>"`` when it
    is absent.

    >>> Turn(actor="user", text="hi", ts=np.int64(1683554160)).ts
    1683554160.0
    """

    actor: Actor
    text: str
    ts: float
    type: TurnType | None = None
    id: str | None = None
    user: str = "default"
    session: str = "default"

    if TYPE_CHECKING:  # the constructor takes enum values as strings too (parsed below)

        def __init__(
            self,
            actor: Actor | str,
            text: str,
            ts: float,
            type: TurnType | str | None = None,
            id: str | None = None,
            user: str = "default",
            session: str = "default",
        ) -> None: ...

    def __post_init__(self) -> None:
        object.__setattr__(self, "actor", Actor.parse(self.actor))
        if self.type is not None:
            object.__setattr__(self, "type", TurnType.parse(self.type))
        if not isinstance(self.text, str):
            raise TurnValidationError(f"text must be a string, got {type(self.text).__name__}")
        if isinstance(self.ts, bool) or not isinstance(self.ts, numbers.Real):
            raise TurnValidationError(
                "ts must be a number (a real one: int, float or a numpy number, not a bool), "
                f"got {type(self.ts).__name__}"
            )
        try:
            ts = float(self.ts)
        except OverflowError:
            raise TurnValidationError("ts is too large to be a time in seconds") from None
        if not math.isfinite(ts):
            raise TurnValidationError(f"ts must be finite, got {self.ts!r}")
        if abs(ts) > MAX_TS:
            raise TurnValidationError(
                f"ts {self.ts!r} is not a time in seconds (|ts| <= {MAX_TS:.0e}, year 5138; "
                "milliseconds by mistake?)"
            )
        object.__setattr__(self, "ts", ts)
        for name in ("user", "session"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise TurnValidationError(f"{name} must be a non-empty string, got {value!r}")
        if self.id is not None and (not isinstance(self.id, str) or not self.id):
            raise TurnValidationError(f"id must be a non-empty string, got {self.id!r}")
        for name in ("session", "id"):
            check_name(name, getattr(self, name))
        if not _is_utf8(self.text):
            raise TurnValidationError(
                "text contains a lone surrogate (undecodable input?); it cannot be stored as UTF-8"
            )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_dict` reads back."""
        out: dict[str, Any] = {"actor": self.actor.value, "text": self.text, "ts": self.ts}
        if self.type is not None:
            out["type"] = self.type.value
        if self.id is not None:
            out["id"] = self.id
        out["user"] = self.user
        out["session"] = self.session
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        """Build a turn from a dict, rejecting unknown keys and missing fields."""
        allowed = {"actor", "text", "ts", "type", "id", "user", "session"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise TurnValidationError(f"unknown field(s) {unknown}; valid: {sorted(allowed)}")
        for required in ("actor", "text", "ts"):
            if required not in data:
                raise TurnValidationError(f"missing required field {required!r}")
        return cls(**data)


@dataclass(frozen=True, slots=True)
class ObservedTurn:
    """A turn as the signals see it: cleaned text, its embedding and position.

    ``text`` has agent markers stripped; ``markers`` lists the ones found.
    """

    turn: Turn
    text: str
    embedding: np.ndarray = field(repr=False, compare=False)
    position: int
    inferred_type: TurnType
    markers: tuple[str, ...] = ()
