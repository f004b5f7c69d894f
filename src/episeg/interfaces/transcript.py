"""Reading transcripts: JSONL, one turn per line, with errors that name the line.

Rules (each documented, none silent):

* a line must be valid UTF-8 and one JSON object, else ``TurnValidationError``
  naming the line; blank lines are skipped (they hold no turn);
* fields: ``actor`` (user/assistant/tool/system), ``text``, ``ts`` (seconds),
  optional ``type``, ``id``, ``user``, ``session``; the aliases ``role`` and
  ``speaker`` are read as ``actor``, ``content`` as ``text`` (a list of chat
  content parts gives its ``text`` parts, joined), ``agent`` as ``assistant``,
  ``developer`` as ``system`` and ``function`` as ``tool``, so OpenAI-style
  ``{"role", "content"}`` messages read as turns; any other key is refused;
* ``ts`` may be absent only with ``assign_ts=True``: turn *n* then gets the
  previous turn's ``ts + 1`` (the first gets 0), so order is kept;
* ``user``/``session`` given to :func:`iter_turns` fill turns that lack them.

>>> lines = ['{"actor": "user", "text": "hi", "ts": 1}', '',
...          '{"role": "agent", "text": "hello", "ts": 2}']
>>> [(t.actor.value, t.text) for t in iter_turns(lines)]
[('user', 'hi'), ('assistant', 'hello')]
>>> [t.text for t in iter_turns(['{"role": "user", "content": "deploy?"}'], assign_ts=True)]
['deploy?']
>>> list(iter_turns(['{"actor": "user", "ts": 1}']))
Traceback (most recent call last):
...
episeg.errors.TurnValidationError: line 1: missing required field 'text'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from episeg.errors import TurnValidationError
from episeg.interfaces.messages import message_text
from episeg.types import Turn

__all__ = ["iter_turns", "numbered_turns", "read_transcript", "write_transcript"]

_ALIASES = {"role": "actor", "speaker": "actor", "content": "text"}
_ACTOR_ALIASES = {
    "agent": "assistant",
    "bot": "assistant",
    "human": "user",
    "developer": "system",
    "function": "tool",
}


def iter_turns(
    lines: Iterable[str | bytes],
    *,
    user: str | None = None,
    session: str | None = None,
    assign_ts: bool = False,
) -> Iterator[Turn]:
    """Parse JSONL lines into turns, raising ``TurnValidationError`` with the line."""
    for _, turn in numbered_turns(lines, user=user, session=session, assign_ts=assign_ts):
        yield turn


def numbered_turns(
    lines: Iterable[str | bytes],
    *,
    user: str | None = None,
    session: str | None = None,
    assign_ts: bool = False,
) -> Iterator[tuple[int, Turn]]:
    """:func:`iter_turns` with each turn's 1-based line number (to name it in later errors)."""
    previous_ts: float | None = None
    for number, raw in enumerate(lines, start=1):
        text = _decode(raw, number)
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TurnValidationError(
                f"invalid JSON: {exc.msg} at column {exc.colno}", line=number
            ) from None
        except RecursionError:
            raise TurnValidationError("invalid JSON: nested too deeply", line=number) from None
        if not isinstance(data, dict):
            raise TurnValidationError(
                f"expected a JSON object, got {type(data).__name__}", line=number
            )
        try:
            turn = Turn.from_dict(_normalise(data, user, session, assign_ts, previous_ts))
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


def _normalise(
    data: dict[str, Any],
    user: str | None,
    session: str | None,
    assign_ts: bool,
    previous_ts: float | None,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = _ALIASES.get(key, key)
        if name in out:
            raise TurnValidationError(f"field {name!r} given twice (as {key!r})")
        out[name] = value
    actor = out.get("actor")
    if isinstance(actor, str):
        out["actor"] = _ACTOR_ALIASES.get(actor.strip().lower(), actor)
    if isinstance(out.get("text"), list):  # chat content parts: their text, joined
        out["text"] = message_text(out["text"])
    if "ts" not in out and assign_ts:
        out["ts"] = 0.0 if previous_ts is None else previous_ts + 1.0
    if user is not None:
        out.setdefault("user", user)
    if session is not None:
        out.setdefault("session", session)
    return out
