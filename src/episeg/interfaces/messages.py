"""Chat messages (``{"role", "content"}``, OpenAI / mem0 style) as episeg turns.

Every interface takes them: the library through :func:`turns_from_messages`
(then ``Memory.ingest``), the CLI in JSONL transcripts (``role``/``content``
are read as ``actor``/``text``), ``POST /v1/messages`` and the MCP tool
``observe_messages``. Roles map onto actors (``developer`` is ``system``,
``function`` is ``tool``); ``content`` is a string or a list of parts, whose
``text`` parts are joined with newlines (images and other parts are skipped).
Messages without ``ts`` are stamped ``ts``, ``ts`` + 1e-6, ... so their order
is kept within one call.

>>> turns = turns_from_messages(
...     [{"role": "user", "content": "deploy prod"},
...      {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}],
...     user="alice", session="s1", ts=100.0)
>>> [(t.actor.value, t.text, t.ts, t.session) for t in turns]
[('user', 'deploy prod', 100.0, 's1'), ('assistant', 'Done.', 100.000001, 's1')]
>>> message_text([{"type": "image_url", "image_url": {"url": "x"}}])
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: content has no text part
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from episeg.errors import TurnValidationError
from episeg.types import Actor, Turn

__all__ = ["ROLES", "message_text", "turns_from_messages"]

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
        texts = [
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        ]
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


def turns_from_messages(
    messages: Iterable[Mapping[str, Any]], *, user: str, session: str, ts: float
) -> list[Turn]:
    """``messages`` as turns of ``user``'s ``session``; a message's own ``ts``/``id`` are kept.

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
            stamp = message.get("ts", ts + n * _STEP)
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
