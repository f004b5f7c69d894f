"""Chat messages (``{"role", "content"}``, OpenAI / mem0 style) as episeg turns.

Every interface takes them: the library through :func:`turns_from_messages`
(then ``Memory.ingest``), the CLI in JSONL transcripts (a line with ``role``
or ``tool_calls`` goes through :func:`turns_from_messages`), ``POST /v1/messages`` and the MCP tool
``observe_messages``. Roles map onto actors (``developer`` is ``system``,
``function`` is ``tool``); ``content`` is a string or a list of parts, whose
text parts (``text``, ``input_text``, ``output_text``; a ``refusal`` part's
``refusal``) are joined with newlines (images and other parts are skipped; a
text part whose text is not a string is refused, never dropped). Tool use
is kept: OpenAI ``tool_calls`` and Anthropic ``tool_use`` parts become
``[tool call] name(arguments)`` lines (a message only calling tools is a
``tool-call`` turn), and a user message holding only Anthropic
``tool_result`` parts is the tool's turn (``tool-success`` / ``tool-error``
from ``is_error``, which must be true or false), so a failing tool never reads as the user speaking.
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

import json
from collections.abc import Iterable, Mapping
from typing import Any

from episeg.durability.journal import Journal
from episeg.errors import TenantError, TurnValidationError
from episeg.types import Actor, Turn, TurnType

__all__ = ["ROLES", "message_parts", "message_text", "recorded_times", "turns_from_messages"]

ROLES = {
    "user": Actor.USER,
    "assistant": Actor.ASSISTANT,
    "system": Actor.SYSTEM,
    "developer": Actor.SYSTEM,
    "tool": Actor.TOOL,
    "function": Actor.TOOL,
}
_STEP = 1e-6


_TEXT_PARTS = {"text": "text", "input_text": "text", "output_text": "text", "refusal": "refusal"}
"""Part types that hold text, and the field holding it (OpenAI Responses items use
``input_text``/``output_text``; a Chat Completions ``refusal`` part holds ``refusal``)."""


def _call(name: object, arguments: object) -> str:
    if not isinstance(name, str) or not name:
        raise TurnValidationError(f"a tool call names no tool: {name!r}")
    if not isinstance(arguments, str):
        try:
            arguments = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError) as exc:  # a set, bytes... from library callers
            raise TurnValidationError(
                f"tool call {name!r} has arguments JSON cannot hold: {exc}"
            ) from None
    return f"[tool call] {name}({arguments})"


def _part_text(n: int, part: object) -> tuple[str | None, bool | None]:
    """A content part's text (None: a part without text) and, for a tool result, is_error."""
    if not isinstance(part, Mapping):
        raise TurnValidationError(f"content part {n} must be an object, got {type(part).__name__}")
    kind = part.get("type", "text")
    if kind == "tool_use":  # Anthropic: the assistant calls a tool
        return _call(part.get("name"), part.get("input", {})), None
    if kind == "tool_result":  # Anthropic: the tool's answer, sent in a user message
        inner = part.get("content", "")
        if isinstance(inner, list):  # its own parts; a result of only images has no text
            texts = [t for t, _ in (_part_text(m, p) for m, p in enumerate(inner)) if t is not None]
            inner = "\n".join(texts)
        if not isinstance(inner, str):
            raise TurnValidationError(
                f"content part {n} is a tool result whose content is {inner!r}"
            )
        flag = part.get("is_error", False)
        if not isinstance(flag, bool):  # "false" would have read as an error
            raise TurnValidationError(
                f"content part {n} is a tool result whose is_error is not true or false: {flag!r}"
            )
        return inner, flag
    field = _TEXT_PARTS.get(kind) if isinstance(kind, str) else None
    if field is None:
        return None, None  # an image or another part without text
    if not isinstance(part.get(field), str):
        raise TurnValidationError(
            f"content part {n} is a {kind} part whose {field} is not a string: {part.get(field)!r}"
        )
    return part[field], None


def message_parts(content: object, tool_calls: object = None) -> tuple[str, list[bool]]:
    """The text of a message and, for each tool result part in it, whether it is an error.

    ``content`` is a string, a list of parts (``text``; Anthropic ``tool_use``
    and ``tool_result``; others such as images are skipped) or, for a message
    that only calls tools, ``None``; OpenAI ``tool_calls`` are appended as
    ``[tool call] name(arguments)`` lines, so a call is remembered, not dropped.
    """
    texts: list[str] = []
    results: list[bool] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for n, part in enumerate(content):
            text, is_error = _part_text(n, part)
            if text is not None:
                texts.append(text)
            if is_error is not None:
                results.append(is_error)
    elif content is not None or not tool_calls:
        raise TurnValidationError(
            f"content must be a string or a list of parts, got {type(content).__name__}"
        )
    if tool_calls is not None:
        if not isinstance(tool_calls, list):
            raise TurnValidationError("tool_calls must be a list")
        for call in tool_calls:
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping):
                raise TurnValidationError(f"a tool call has no function object: {call!r}")
            texts.append(_call(function.get("name"), function.get("arguments", "")))
    if not texts:
        raise TurnValidationError("content has no text part")
    return "\n".join(texts), results


def message_text(content: object) -> str:
    """The text of a message's ``content``: a string, or the joined text of a list of parts."""
    return message_parts(content)[0]


def _only_tool_results(content: object) -> bool:
    return isinstance(content, list) and all(
        isinstance(p, Mapping) and p.get("type") == "tool_result" for p in content
    )


def _only_calls(message: Mapping[str, Any]) -> bool:
    content, calls = message.get("content"), message.get("tool_calls")
    if isinstance(content, list):
        uses = [p for p in content if isinstance(p, Mapping) and p.get("type") == "tool_use"]
        texts = [
            p for p in content if isinstance(p, Mapping) and p.get("type", "text") in _TEXT_PARTS
        ]
        return bool(uses or calls) and not texts
    return bool(calls) and not content


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

    A message without ``ts`` whose ``id`` is in ``recorded`` gets that time. A
    message may repeat its ``user`` and ``session``, but not name others: it
    would be filed where it does not belong.

    Raises
    ------
    TurnValidationError
        Naming the (0-based) message that is malformed or names another session;
        no turn is returned then.
    TenantError
        A message names another user (as a turn of another tenant is refused).
    """
    if isinstance(messages, str | bytes | Mapping):  # iterating one would read its keys
        raise TurnValidationError(
            f"messages must be a list of message objects, got one {type(messages).__name__}"
        )
    turns: list[Turn] = []
    for n, message in enumerate(messages):
        try:
            if not isinstance(message, Mapping):
                raise TurnValidationError(f"a message is an object, got {type(message).__name__}")
            _check_owner(n, message, user=user, session=session)
            stamp = message.get("ts")
            if stamp is None:
                known = (recorded or {}).get(str(message.get("id")))
                stamp = ts + n * _STEP if known is None else known
            actor, (text, results) = (
                _role(message),
                message_parts(message.get("content"), message.get("tool_calls")),
            )
            kind = None
            if results and actor is Actor.USER and _only_tool_results(message.get("content")):
                # Anthropic sends a tool's answer as a user message: it is the tool's turn,
                # not the user's (a user turn may open an episode; a tool error must not)
                actor = Actor.TOOL
            if actor is Actor.TOOL and results:
                kind = TurnType.TOOL_ERROR if any(results) else TurnType.TOOL_SUCCESS
            elif actor is Actor.ASSISTANT and _only_calls(message):
                kind = TurnType.TOOL_CALL
            turns.append(
                Turn(
                    actor=actor,
                    text=text,
                    ts=stamp,
                    id=message.get("id"),
                    user=user,
                    session=session,
                    type=kind,
                )
            )
        except TurnValidationError as exc:
            raise TurnValidationError(f"message {n}: {exc}") from None
    return turns


def _check_owner(n: int, message: Mapping[str, Any], *, user: str, session: str) -> None:
    owner, named = message.get("user"), message.get("session")
    if owner is not None and owner != user:
        raise TenantError(f"message {n} names user {owner!r}, not the request's user {user!r}")
    if named is not None and named != session:
        raise TurnValidationError(
            f"it names session {named!r}, the request {session!r}: send one request per session"
        )
