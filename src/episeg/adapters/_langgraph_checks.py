"""Checks of ``EpisegStore`` operations, made before anything is read or written.

:func:`value_json` is the JSON text an item's value is stored as, or
:class:`~episeg.errors.ArgumentError` when JSON would not give the value back
exactly: a ``dict`` key that is not a ``str`` (``{1: "vim"}`` would read back as
``{"1": "vim"}``), a ``tuple`` (read back as a ``list``) or anything JSON cannot
hold. LangGraph's ``InMemoryStore`` keeps such values only because it keeps the
Python objects; its ``PostgresStore`` (JSON) changes them as JSON does. episeg
refuses them instead of changing them silently; the error names the key and the
place in the value.

:func:`check_key` refuses a key an item id cannot hold: empty, with a control,
format or surrogate character, or making the id ``lg:<namespace>:<key>`` longer
than :data:`~episeg.types.episode.MAX_EPISODE_ID` characters.

>>> value_json(PutOp(("alice", "prefs"), "k", {"b": [1, 2.5], "a": None}))
'{"a": null, "b": [1, 2.5]}'
>>> try:
...     value_json(PutOp(("alice", "prefs"), "ids", {"by_id": {1: "vim"}}))
... except ArgumentError as exc:
...     print(str(exc).split(": ", 1)[1].split(";")[0])
value['by_id'] has the key 1 (int)
"""

from __future__ import annotations

import json
from typing import Any

from langgraph.store.base import GetOp, ListNamespacesOp, Op, PutOp, SearchOp

from episeg.adapters._langgraph_filter import check_filter
from episeg.adapters._langgraph_ids import episode_id, session
from episeg.errors import ArgumentError, TurnValidationError
from episeg.store.tenants import validate_tenant
from episeg.types.episode import MAX_EPISODE_ID
from episeg.types.turn import check_name

__all__ = ["check_key", "check_op", "tenant_of", "value_json"]

_NOTHING = "nothing was written, the stored value is unchanged"


def tenant_of(namespace: tuple[str, ...]) -> str:
    """The tenant of ``namespace`` (its first element), checked."""
    if not namespace:
        raise ArgumentError("a namespace needs at least one element: the tenant")
    return validate_tenant(namespace[0])


def _exact(value: Any, where: str) -> str | None:
    """Where in ``value`` JSON would not give it back (``None``: nowhere)."""
    if value is None or isinstance(value, str | bool | int | float):
        return None
    if isinstance(value, dict):
        for key, part in value.items():
            if not isinstance(key, str):
                return f"{where} has the key {key!r} ({type(key).__name__})"
            found = _exact(part, f"{where}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(value, list):
        return next((f for n, p in enumerate(value) if (f := _exact(p, f"{where}[{n}]"))), None)
    return f"{where} is a {type(value).__name__}"


def value_json(op: PutOp) -> str:
    """The value of ``op`` as the JSON text stored (and read back), or a typed error."""
    where = f"the value of key {op.key!r} in namespace {tuple(op.namespace)!r}"
    value = dict(op.value or {})
    try:
        problem = _exact(value, "value")
    except RecursionError:  # Python's own limit: json.dumps would hit it too
        raise ArgumentError(f"{where} is nested too deeply to store ({_NOTHING})") from None
    if problem:
        raise ArgumentError(
            f"{where} is not JSON that reads back unchanged: {problem}; JSON keeps str "
            f"keys, lists, numbers, strings, true/false and null only ({_NOTHING})"
        )
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        text.encode("utf-8")  # a lone surrogate: no UTF-8 store can hold the text
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise ArgumentError(f"{where} is not JSON text ({_NOTHING}): {exc}") from exc
    return text


def check_key(namespace: tuple[str, ...], key: object) -> None:
    """Refuse a key (or namespace) an item id cannot hold, naming it."""
    what = f"the key {key!r:.80} of namespace {namespace!r:.200} cannot be used"
    if not isinstance(key, str) or not key:
        raise ArgumentError(f"{what}: a key is a non-empty string")
    try:
        check_name("key", key)
        for label in namespace[1:]:
            check_name("namespace element", label)
        check_name("namespace", session(namespace))
    except TurnValidationError as exc:
        raise ArgumentError(f"{what}: {exc}") from None
    if len(episode_id(namespace, key)) > MAX_EPISODE_ID:
        raise ArgumentError(
            f"{what}: the item id 'lg:<namespace>:<key>' would be "
            f"{len(episode_id(namespace, key))} characters, over {MAX_EPISODE_ID}"
        )


def check_op(op: Op) -> str | None:
    """Check one operation of a batch without running it; a put's JSON text."""
    if isinstance(op, GetOp):
        tenant_of(tuple(op.namespace))
    elif isinstance(op, SearchOp):
        tenant_of(tuple(op.namespace_prefix))
        check_filter(op.filter)
    elif isinstance(op, PutOp):
        namespace = tuple(op.namespace)
        tenant_of(namespace)
        if op.value is not None:
            check_key(namespace, op.key)
            return value_json(op)
    elif not isinstance(op, ListNamespacesOp):
        raise ArgumentError(f"unknown store operation {type(op).__name__}")
    return None
