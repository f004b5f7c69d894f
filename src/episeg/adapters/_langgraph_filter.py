"""LangGraph's ``filter`` and namespace matching, as the installed ``langgraph`` applies them.

``SearchOp.filter`` is documented by LangGraph as exact matches or the comparison
operators ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt`` and ``$lte``. :func:`matches`
mirrors ``langgraph.store.memory._compare_values`` / ``_apply_operator`` (langgraph
1.x, the InMemoryStore's semantics): a nested dict matches the listed fields of a
dict value, a list matches element by element, a dict with a ``$`` key is a set of
operators (all must hold), ``$gt``/``$gte``/``$lt``/``$lte`` compare ``float()`` of
both sides and ``$eq``/``$ne`` compare with ``==``. Those helpers are private to
langgraph (underscored, not exported), so they are mirrored here rather than imported.

Two deliberate differences, both where InMemoryStore raises a bare exception:

- an operator that is not one of the six, or an ordering operator whose operand
  ``float()`` refuses, is the caller's mistake: :func:`check_filter` raises
  :class:`~episeg.errors.ArgumentError` before anything is read (InMemoryStore raises
  ``ValueError`` only once an item is compared, and returns ``[]`` for an empty store);
- an item whose field ``float()`` refuses (missing, text, a list) does not match an
  ordering operator, as a SQL ``NULL`` does not in LangGraph's PostgresStore
  (InMemoryStore raises ``TypeError`` for the whole search). A tenant's conversation
  episodes hold no item fields, so they would otherwise break every such search.

>>> matches({"score": 5, "tags": {"lang": "en"}}, {"score": {"$gt": 4}, "tags": {"lang": "en"}})
True
>>> matches({"status": "draft"}, {"status": {"$ne": "draft"}}), matches({}, {"n": {"$lt": 1}})
(False, False)
>>> try:
...     check_filter({"score": {"$gt": 4, "$in": [1]}})
... except ArgumentError as exc:
...     print(str(exc).split(";")[0])
unsupported filter operator '$in' (for 'score')
>>> does_match("suffix", ("*", "v1"), ("alice", "docs", "v1"))
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from episeg.errors import ArgumentError

__all__ = ["check_filter", "does_match", "matches"]

_ORDER = {
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}
OPERATORS = frozenset({"$eq", "$ne", *_ORDER})


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def check_filter(where: Mapping[str, Any] | None, field: str = "") -> None:
    """Raise :class:`ArgumentError` for an operator LangGraph does not apply, or a bad operand."""
    for key, wanted in (where or {}).items():
        _check(wanted, f"{field}.{key}" if field else key)


def _check(wanted: Any, field: str) -> None:
    if isinstance(wanted, Mapping):
        if not any(str(k).startswith("$") for k in wanted):
            check_filter(wanted, field)
            return
        for op, operand in wanted.items():
            if op not in OPERATORS:
                raise ArgumentError(
                    f"unsupported filter operator {op!r} (for {field!r}); "
                    f"LangGraph's are {', '.join(sorted(OPERATORS))}"
                )
            if op in _ORDER and _number(operand) is None:
                raise ArgumentError(
                    f"filter operator {op} (for {field!r}) compares numbers; {operand!r} is not one"
                )
    elif isinstance(wanted, list | tuple):
        for n, part in enumerate(wanted):
            _check(part, f"{field}[{n}]")


def matches(value: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """Whether an item's ``value`` passes ``where`` (checked by :func:`check_filter`)."""
    return not where or all(_compare(value.get(k), w) for k, w in where.items())


def _compare(have: Any, wanted: Any) -> bool:
    """``langgraph.store.memory._compare_values``."""
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_apply(have, op, operand) for op, operand in wanted.items())
        if not isinstance(have, Mapping):
            return False
        return all(_compare(have.get(k), w) for k, w in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(have, list | tuple)
            and len(have) == len(wanted)
            and all(_compare(h, w) for h, w in zip(have, wanted, strict=True))
        )
    return bool(have == wanted)


def _apply(have: Any, op: str, operand: Any) -> bool:
    """``langgraph.store.memory._apply_operator`` (an incomparable field: no match)."""
    if op == "$eq":
        return bool(have == operand)
    if op == "$ne":
        return bool(have != operand)
    if op not in _ORDER:
        raise ArgumentError(f"unsupported filter operator {op!r}")
    a, b = _number(have), _number(operand)
    return a is not None and b is not None and bool(_ORDER[op](a, b))


def does_match(match_type: str, path: tuple[str, ...], namespace: tuple[str, ...]) -> bool:
    """``langgraph.store.memory._does_match``: ``path`` (``*`` any element) at one end."""
    if len(namespace) < len(path):
        return False
    if match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ArgumentError(f"unsupported namespace match type {match_type!r}")
    return all(p in ("*", n) for n, p in pairs)
