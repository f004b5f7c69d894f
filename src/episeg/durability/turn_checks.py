"""What :meth:`Memory.observe <episeg.memory.Memory.observe>` and ``ingest`` refuse up front.

``observe`` takes one :class:`~episeg.types.Turn` whose tenant is valid and
whose ``type`` fits its ``actor`` (:func:`~episeg.types.turn.check_kind`).
``ingest`` checks its whole batch first, as the HTTP batch route does (F5):
every turn as above, then every (user, session) group of the batch through
:meth:`Segmenter.preview <episeg.segmentation.segmenter.Segmenter.preview>`
(text too long, ts going backwards, an id reused with other content). The
first refused turn raises its error naming its place in the batch, and
nothing of the batch is recorded: a corrected batch can be sent again whole.

>>> import tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None, scorer=None)
>>> mem.ingest([Turn(actor="user", text="deploy v2", ts=10.0, user="bob"),
...             Turn(actor="user", text="and prod?", ts=5.0, user="bob")])
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: turn 1 of the batch (no id) refused, nothing of the batch ...
>>> mem.journal.counts()["open_turns"]
0
>>> mem.observe({"actor": "user", "text": "hi", "ts": 1.0})
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: a turn must be an episeg.types.Turn, got dict
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from episeg.durability.sessions import SessionPool
from episeg.errors import TenantError, TurnValidationError
from episeg.store.tenants import validate_tenant
from episeg.types import Turn
from episeg.types.turn import check_kind

__all__ = ["check_batch_turns", "check_turn", "find_refused", "preview_batch"]

_E = TypeVar("_E", bound=Exception)


def _where(index: int | None, turn: object) -> str:
    if index is None:
        return ""
    named = f"id {turn.id!r}" if isinstance(turn, Turn) and turn.id is not None else "no id"
    return f"turn {index} of the batch ({named}) refused, nothing of the batch was recorded: "


def _renamed(exc: _E, prefix: str) -> _E:
    """``exc`` (same class, same attributes) with ``prefix`` before its message."""
    if not prefix:
        return exc
    copy = type(exc).__new__(type(exc))
    copy.__dict__.update(exc.__dict__)
    message = f"{prefix}{exc}"
    if isinstance(copy, TurnValidationError):
        copy.message, copy.line = message, None
    copy.args = (message,)
    return copy


def check_turn(turn: object, *, index: int | None = None) -> Turn:
    """``turn`` if ``Memory`` can take it (see the module doc); ``index``: its place in a batch.

    Raises
    ------
    TurnValidationError
        Not a :class:`~episeg.types.Turn`, or a type its actor cannot produce.
    TenantError
        Its user is not a valid tenant id.
    """
    where = _where(index, turn)
    if not isinstance(turn, Turn):
        raise TurnValidationError(
            f"{where}a turn must be an episeg.types.Turn, got {type(turn).__name__}"
        )
    try:
        validate_tenant(turn.user)
        check_kind(turn)
    except (TurnValidationError, TenantError) as exc:
        raise _renamed(exc, where) from None
    return turn


def check_batch_turns(turns: object) -> list[Turn]:
    """The turns of an ``ingest`` batch as a list, each checked by :func:`check_turn`."""
    if isinstance(turns, str | bytes | Turn | Mapping) or not hasattr(turns, "__iter__"):
        raise TurnValidationError(f"ingest takes an iterable of Turns, got {type(turns).__name__}")
    batch = list(turns)
    for n, turn in enumerate(batch):
        check_turn(turn, index=n)
    return batch


def preview_batch(sessions: SessionPool, turns: Sequence[Turn]) -> None:
    """Raise what ``observe`` would raise for the first refused turn of ``turns``, changing nothing.

    Each (user, session) group is checked against its state as the journal
    holds it. The caller holds the tenants' locks (so nothing changes between
    this check and the observing).
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for n, turn in enumerate(turns):
        groups.setdefault((turn.user, turn.session), []).append(n)
    for (user, session), index in groups.items():
        preview = sessions.enter(user, session).preview
        _first_refused(preview, [(n, turns[n]) for n in index])


def _first_refused(
    check: Callable[[list[Turn]], object], numbered: Sequence[tuple[int, Turn]]
) -> None:
    """Run ``check`` on the turns; if it refuses them, raise its error naming the refused turn."""
    found = find_refused(check, [turn for _, turn in numbered])
    if found is not None:
        at, exc = found
        n, turn = numbered[at]
        raise _renamed(exc, _where(n, turn)) from None


def find_refused(
    check: Callable[[list[Turn]], object], turns: Sequence[Turn]
) -> tuple[int, TurnValidationError] | None:
    """The place of the first turn ``check`` refuses, with its error (``None``: none is).

    ``check`` raises what the first refused turn of its list would, so that
    turn is found by bisection (a prefix fails iff it holds it).

    >>> def no_empty(turns: list[Turn]) -> None:
    ...     if any(not t.text for t in turns):
    ...         raise TurnValidationError("empty text")
    >>> turns = [Turn(actor="user", text=x, ts=1.0) for x in ("a", "b", "", "c")]
    >>> at, exc = find_refused(no_empty, turns)
    >>> at, str(exc)
    (2, 'empty text')
    """
    listed = list(turns)
    try:
        check(listed)
        return None
    except TurnValidationError as exc:
        whole = exc
    low, high = 0, len(listed) - 1
    while low < high:
        middle = (low + high) // 2
        try:
            check(listed[: middle + 1])
        except TurnValidationError:
            high = middle
        else:
            low = middle + 1
    try:
        check(listed[: low + 1])
    except TurnValidationError as exc:
        return low, exc
    return len(listed) - 1, whole  # no prefix refused alone: the list's own error
