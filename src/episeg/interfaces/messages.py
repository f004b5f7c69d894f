"""Chat messages (``{"role", "content"}``, OpenAI / mem0 style) as episeg turns.

Every interface takes them: the library through :func:`turns_from_messages`
(then ``Memory.ingest``), the CLI in JSONL transcripts (``role``/``content``
are read as ``actor``/``text``), ``POST /v1/messages`` and the MCP tool
``observe_messages``. Roles map onto actors (``developer`` is ``system``,
``function`` is ``tool``); ``content`` is a string or a list of parts, whose
``text`` parts are joined with newlines (images and other parts are skipped; a
text part whose ``text`` is not a string is refused, never dropped).
Messages without ``ts`` are stamped ``ts``, ``ts`` + 1e-6, ... so their order
is kept within one call; one whose ``id`` is already recorded gets its
recorded time instead (``recorded``, from :func:`recorded_times`), so a re-sent
message is a duplicate, not a conflict (issue 12, F6).

>>> turns = turns_from_messages(
...     [{"role": "user", "content": "deploy prod"},
...      {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}],
...     user="alice", session="s1", ts=100.0)
>>> [(t.actor.value, t.text, t.ts, t.session) for t in turns]
[('user', 'deploy prod', 100.0, 's1'), ('assistant', 'Done.', 100.000001, 's1')]
>>> [t.ts for t in turns_from_messages([{"role": "user", "content": "hi", "id": "m1"}],
...                                    user="alice", session="s1", ts=200.0,
...                                    recorded={"m1": 100.0})]
[100.0]
>>> message_text([{"type": "image_url", "image_url": {"url": "x"}}])
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: content has no text part
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from episeg.durability.journal import Journal
from episeg.errors import TurnValidationError
from episeg.types import Actor, Turn

__all__ = ["ROLES", "message_text", "recorded_times", "turns_from_messages"]

ROLES = {
    "user": Actor.USER,
    "assistant": Actor.ASSISTANT,
    "system": Actor.SYSTEM,
    "developer": Actor.SYSTEM,
    "tool": Actor.TOOL,
    "function": Actor.TOOL,
}
_STEP = 1e-6


def message_text(content: object) -> str:
    """The text of a message's ``content``: a string, or the joined ``text`` parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for n, part in enumerate(content):
            if not isinstance(part, Mapping):
                raise TurnValidationError(
                    f"content part {n} must be an object, got {type(part).__name__}"
                )
            if part.get("type", "text") != "text":
                continue  # an image or another part without text
            if not isinstance(part.get("text"), str):
                raise TurnValidationError(
                    f"content part {n} is a text part whose text is not a string: "
                    f"{part.get('text')!r}"
                )
            texts.append(part["text"])
        if not texts:
            raise TurnValidationError("content has no text part")
        return "\n".join(texts)
    raise TurnValidationError(
        f"content must be a string or a list of parts, got {type(content).__name__}"
    )


def _role(message: Mapping[str, Any]) -> Actor:
    role = message.get("role")
    if not isinstance(role, str) or role.strip().lower() not in ROLES:
        raise TurnValidationError(f"unknown role {role!r}; valid: {', '.join(ROLES)}")
    return ROLES[role.strip().lower()]


def recorded_times(
    journal: Journal, user: str, session: str, items: Iterable[Mapping[str, Any]]
) -> dict[str, float]:
    """Recorded times of the ids of ``items`` (messages or turns) that come without ``ts``.

    An interface stamps such a turn with its recorded time instead of "now",
    so re-sending it unchanged stays an idempotent duplicate.
    """
    ids = [
        i["id"]
        for i in items
        if isinstance(i, Mapping) and i.get("ts") is None and isinstance(i.get("id"), str)
    ]
    return journal.seen_times(user, session, ids) if ids else {}


def turns_from_messages(
    messages: Iterable[Mapping[str, Any]],
    *,
    user: str,
    session: str,
    ts: float,
    recorded: Mapping[str, float] | None = None,
) -> list[Turn]:
    """``messages`` as turns of ``user``'s ``session``; a message's own ``ts``/``id`` are kept.

    A message without ``ts`` whose ``id`` is in ``recorded`` gets that time.

    Raises
    ------
    TurnValidationError
        Naming the (0-based) message that is malformed; no turn is returned then.
    """
    turns: list[Turn] = []
    for n, message in enumerate(messages):
        try:
            if not isinstance(message, Mapping):
                raise TurnValidationError(f"a message is an object, got {type(message).__name__}")
            stamp = message.get("ts")
            if stamp is None:
                known = (recorded or {}).get(str(message.get("id")))
                stamp = ts + n * _STEP if known is None else known
            turns.append(
                Turn(
                    actor=_role(message),
                    text=message_text(message.get("content")),
                    ts=stamp,
                    id=message.get("id"),
                    user=user,
                    session=session,
                )
            )
        except TurnValidationError as exc:
            raise TurnValidationError(f"message {n}: {exc}") from None
    return turns
