"""Reading transcripts: JSONL, one turn per line, with errors that name the line.

Rules (each documented, none silent):

* a line must be valid UTF-8 and one JSON object, else ``TurnValidationError``
  naming the line; blank lines are skipped (they hold no turn); a UTF-8 byte
  order mark at the start of line 1 (Notepad, PowerShell) is dropped;
* fields: ``actor`` (user/assistant/tool/system), ``text``, ``ts`` (seconds),
  optional ``type``, ``id``, ``user``, ``session``; ``speaker`` is read as
  ``actor`` and ``content`` as ``text``; any other key is refused;
* a chat message (a line with ``role`` or ``tool_calls``) is read as
  :func:`~episeg.interfaces.messages.turns_from_messages` reads it for
  ``POST /v1/messages`` and MCP: tool calls kept as ``[tool call]`` lines, a
  user message of only Anthropic ``tool_result`` parts is the tool's turn
  (``tool-error`` / ``tool-success``); the line's ``ts``, ``id``, ``user``,
  ``session`` and ``type`` are kept, ``text`` is read as ``content``, the
  message keys ``name`` and ``tool_call_id`` are ignored (as the service
  ignores them), and the role aliases ``agent``/``bot`` (assistant) and
  ``human`` (user) are read too;
* ``ts`` may be absent only with ``assign_ts=True``: the turn then gets the
  previous turn's ``ts + 1`` (the first gets 0), or, when ``recorded_ts``
  gives the last time already recorded in the turn's (user, session), a time
  after that one, so a second file for a session goes on where the first ended;
* ``user``/``session`` given to :func:`iter_turns` fill turns that lack them.

>>> lines = ['\\ufeff{"actor": "user", "text": "hi", "ts": 1}', '',
...          '{"role": "agent", "text": "hello", "ts": 2}']
>>> [(t.actor.value, t.text) for t in iter_turns(lines)]
[('user', 'hi'), ('assistant', 'hello')]
>>> [t.text for t in iter_turns(['{"role": "user", "content": "deploy?"}'], assign_ts=True)]
['deploy?']
>>> result = ('{"role": "user", "content": '
...           '[{"type": "tool_result", "content": "E", "is_error": true}]}')
>>> [(t.actor.value, t.type.value) for t in iter_turns([result], assign_ts=True)]
[('tool', 'tool-error')]
>>> [t.ts for t in iter_turns(['{"actor": "user", "text": "again"}'], assign_ts=True,
...                            recorded_ts=lambda user, session: 41.0)]
[42.0]
>>> list(iter_turns(['{"actor": "user", "ts": 1}']))
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: line 1: missing required field 'text'
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from episeg.errors import TurnValidationError
from episeg.interfaces.messages import message_text, turns_from_messages
from episeg.strict_json import DuplicateKeyError, loads_strict
from episeg.types import Turn

__all__ = ["RecordedTs", "iter_turns", "numbered_turns", "read_transcript", "write_transcript"]

RecordedTs = Callable[[str, str], float | None]
"""(user, session) -> the last ts already recorded in that session, or ``None``."""

_ALIASES = {"role": "actor", "speaker": "actor", "content": "text"}
_ACTOR_ALIASES = {
    "agent": "assistant",
    "bot": "assistant",
    "human": "user",
    "developer": "system",
    "function": "tool",
}
_MESSAGE_IGNORED = ("name", "tool_call_id")  # OpenAI message keys that name no turn field


def iter_turns(
    lines: Iterable[str | bytes],
    *,
    user: str | None = None,
    session: str | None = None,
    assign_ts: bool = False,
    recorded_ts: RecordedTs | None = None,
) -> Iterator[Turn]:
    """Parse JSONL lines into turns, raising ``TurnValidationError`` with the line."""
    for _, turn in numbered_turns(
        lines, user=user, session=session, assign_ts=assign_ts, recorded_ts=recorded_ts
    ):
        yield turn


def numbered_turns(
    lines: Iterable[str | bytes],
    *,
    user: str | None = None,
    session: str | None = None,
    assign_ts: bool = False,
    recorded_ts: RecordedTs | None = None,
) -> Iterator[tuple[int, Turn]]:
    """:func:`iter_turns` with each turn's 1-based line number (to name it in later errors)."""
    previous_ts: float | None = None
    recorded: dict[tuple[str, str], float | None] = {}
    for number, raw in enumerate(lines, start=1):
        text = _decode(raw, number)
        if number == 1:
            text = text.removeprefix("\ufeff")
        if not text.strip():
            continue
        try:
            data = loads_strict(text)
        except json.JSONDecodeError as exc:
            raise TurnValidationError(
                f"invalid JSON: {exc.msg} at column {exc.colno}", line=number
            ) from None
        except DuplicateKeyError as exc:  # json.loads would keep the last one silently
            raise TurnValidationError(f"invalid JSON: {exc}", line=number) from None
        except RecursionError:
            raise TurnValidationError("invalid JSON: nested too deeply", line=number) from None
        if not isinstance(data, dict):
            raise TurnValidationError(
                f"expected a JSON object, got {type(data).__name__}", line=number
            )
        try:
            fields = _normalise(data, user, session)
            stamp = "ts" not in fields and assign_ts
            turn = Turn.from_dict({**fields, "ts": 0.0} if stamp else fields)
            if stamp:
                key = (turn.user, turn.session)
                if recorded_ts is not None and key not in recorded:
                    recorded[key] = recorded_ts(*key)
                known = [t for t in (previous_ts, recorded.get(key)) if t is not None]
                turn = dataclasses.replace(turn, ts=max(known) + 1.0 if known else 0.0)
        except TurnValidationError as exc:
            raise TurnValidationError(exc.message, line=number) from None
        except TypeError as exc:
            raise TurnValidationError(str(exc), line=number) from None
        previous_ts = turn.ts
        yield number, turn


def read_transcript(path: str | Path, **options: Any) -> list[Turn]:
    """Read a whole JSONL file (bytes, so invalid UTF-8 is reported by line)."""
    with Path(path).open("rb") as handle:
        return list(iter_turns(handle, **options))


def write_transcript(turns: Iterable[Turn], path: str | Path) -> None:
    """Write turns as JSONL that :func:`read_transcript` reads back."""
    with Path(path).open("w", encoding="utf-8") as handle:
        for turn in turns:
            handle.write(json.dumps(turn.to_dict(), ensure_ascii=False) + "\n")


def _decode(raw: str | bytes, number: int) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TurnValidationError(f"invalid UTF-8 at byte {exc.start}", line=number) from None


def _normalise(data: dict[str, Any], user: str | None, session: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    message = "role" in data or "tool_calls" in data
    for key, value in data.items():
        if message and key in _MESSAGE_IGNORED:
            continue
        name = _ALIASES.get(key, key)
        if name in out:
            raise TurnValidationError(f"field {name!r} given twice (as {key!r})")
        out[name] = value
    actor = out.get("actor")
    if isinstance(actor, str):
        out["actor"] = _ACTOR_ALIASES.get(actor.strip().lower(), actor)
    if message:
        out.update(_as_message(out))
    elif isinstance(out.get("text"), list):  # chat content parts: their text, joined
        out["text"] = message_text(out["text"])
    if user is not None:
        out.setdefault("user", user)
    if session is not None:
        out.setdefault("session", session)
    return out


def _as_message(out: dict[str, Any]) -> dict[str, Any]:
    """Actor, text and type of a chat-message line, as ``POST /v1/messages`` reads it."""
    message = {"role": out.get("actor"), "content": out.pop("text", None)}
    if "tool_calls" in out:
        message["tool_calls"] = out.pop("tool_calls")
    try:
        [turn] = turns_from_messages([message], user="default", session="default", ts=0.0)
    except TurnValidationError as exc:
        raise TurnValidationError(exc.message.removeprefix("message 0: ")) from None
    derived: dict[str, Any] = {"actor": turn.actor.value, "text": turn.text}
    if turn.type is not None and "type" not in out:
        derived["type"] = turn.type.value
    return derived
