"""Request bodies of the clients: turns and messages with ids, batches, recall, used, import.

Every turn and message gets an ``id`` when the caller gave none (``c-`` and
32 hex digits), so the same body sent again is skipped by the service
instead of recorded twice (:mod:`episeg.client.retrying`).

>>> turn_body({"actor": "user", "text": "hi", "id": "t1"})
{'actor': 'user', 'text': 'hi', 'id': 't1'}
>>> turn_body({"actor": "user", "text": "hi"})["id"][:2]  # made when the caller gave none
'c-'
>>> recall_body("deploy", 3, {"max_words": 200, "session": None})
{'query': 'deploy', 'k': 3, 'max_words': 200}
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from episeg.client.wire import ExportData, TurnInput
from episeg.errors import RecallArgumentError, TurnValidationError
from episeg.types import Turn

__all__ = [
    "export_body",
    "messages_body",
    "recall_body",
    "sent_ids",
    "turn_body",
    "turns_body",
    "used_body",
    "with_id",
]


def with_id(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with an ``id`` (``c-`` and 32 hex digits) if it had none: a re-send is skipped."""
    if body.get("id") is None:
        body["id"] = f"c-{uuid.uuid4().hex}"
    return body


def turn_body(turn: TurnInput) -> dict[str, Any]:
    if isinstance(turn, Turn):
        body = turn.to_dict()
        if body.get("user") == "default":
            del body["user"]
        return with_id(body)
    if not isinstance(turn, Mapping):
        raise TurnValidationError(f"a turn is a Turn or a mapping, got {type(turn).__name__}")
    return with_id(dict(turn))


def _list_of(items: Iterable[Any], call: str, what: str) -> list[Any]:
    """``items`` as a list; one turn or message where a list of them is due is refused.

    >>> _list_of({"actor": "user", "text": "hi"}, "observe_batch", "turns")
    Traceback (most recent call last):
    episeg.errors.TurnValidationError: observe_batch takes a list of turns, got one dict
    """
    if isinstance(items, Mapping | Turn | str | bytes):
        raise TurnValidationError(f"{call} takes a list of {what}, got one {type(items).__name__}")
    return list(items)


def turns_body(turns: Iterable[TurnInput]) -> list[dict[str, Any]]:
    return [turn_body(t) for t in _list_of(turns, "observe_batch", "turns")]


def messages_body(messages: Iterable[Mapping[str, Any]], session: str) -> dict[str, Any]:
    listed = _list_of(messages, "observe_messages", "messages")
    for m in listed:
        if not isinstance(m, Mapping):
            raise TurnValidationError(f"a message is a mapping, got {type(m).__name__}")
    return {"messages": [with_id(dict(m)) for m in listed], "session": session}


def used_body(episode_ids: Iterable[str]) -> dict[str, Any]:
    if isinstance(episode_ids, str | bytes):
        raise RecallArgumentError(
            f"episode_ids must be a collection of ids, got the string {episode_ids!r}"
        )
    return {"episode_ids": list(episode_ids)}


def sent_ids(body: Any) -> tuple[str, ...]:
    """The turn or message ids a request body carries (for :class:`NoAnswerError`)."""
    items = body.get("messages", [body]) if isinstance(body, dict) else body
    if not isinstance(items, list):
        return ()
    return tuple(str(i["id"]) for i in items if isinstance(i, dict) and i.get("id") is not None)


def recall_body(query: str, k: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """The recall request: options left at ``None`` are not sent (the service's defaults)."""
    return {"query": query, "k": k, **{n: v for n, v in options.items() if v is not None}}


def export_body(data: ExportData) -> bytes:
    """An export file as the bytes ``POST /v1/import`` takes.

    >>> export_body(["a\\n", b"b\\n"])
    b'a\\nb\\n'
    """
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, bytes):
        return data
    return b"".join(x.encode("utf-8") if isinstance(x, str) else x for x in data)
