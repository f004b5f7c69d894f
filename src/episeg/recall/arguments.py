"""The arguments of :meth:`Memory.recall <episeg.memory.Memory.recall>`, checked before any work.

A wrong kind or range is a :class:`~episeg.errors.RecallArgumentError`
naming the argument, never a bare ``TypeError`` from deep inside, a store
error for a NaN time (Chroma refusing the ``where`` clause), or an empty
answer for a range that ends before it starts or a session that is not a
string (no session id could equal it).

>>> check_recall_arguments("deploy", 5, since=10.0, until=20.0)
>>> check_recall_arguments("deploy", 0)
Traceback (most recent call last):
...
episeg.errors.RecallArgumentError: k must be an integer >= 1, got 0
>>> check_query("login \\ud800 401")
Traceback (most recent call last):
...
episeg.errors.RecallArgumentError: query holds a lone surrogate '\\ud800' (undecodable ...
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping

from episeg.errors import RecallArgumentError
from episeg.recall.hits import Expand

__all__ = [
    "check_ids",
    "check_listing",
    "check_query",
    "check_recall_arguments",
    "check_session",
]


def _count(name: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise RecallArgumentError(f"{name} must be an integer >= {least}, got {value!r}")


def _finite(name: str, value: object) -> None:
    if value is None:
        return
    try:  # an int too large for a float (10**400) is not a finite time or score either
        finite = isinstance(value, numbers.Real) and math.isfinite(float(value))
    except OverflowError:
        finite = False
    if isinstance(value, bool) or not finite:
        raise RecallArgumentError(f"{name} must be a finite number, got {value!r:.80}")


def check_listing(limit: object, offset: object) -> None:
    """Raise :class:`~episeg.errors.RecallArgumentError` unless ``limit`` >= 1, ``offset`` >= 0.

    >>> check_listing("5", 0)
    Traceback (most recent call last):
    ...
    episeg.errors.RecallArgumentError: limit must be an integer >= 1, got '5'
    """
    _count("limit", limit, 1)
    _count("offset", offset, 0)


def check_ids(name: str, ids: object) -> list[str]:
    """``ids`` as a list of non-empty strings; :class:`~episeg.errors.RecallArgumentError` else.

    One string is refused (its characters are not ids), as is anything not a
    collection, or a collection holding something other than a non-empty string.

    >>> check_ids("episode_ids", ["e1", 5])
    Traceback (most recent call last):
    ...
    episeg.errors.RecallArgumentError: episode_ids must hold non-empty strings, got 5
    """
    if isinstance(ids, str | bytes):
        raise RecallArgumentError(f"{name} must be a collection of ids, got the string {ids!r:.80}")
    if not isinstance(ids, Iterable) or isinstance(ids, Mapping):
        raise RecallArgumentError(f"{name} must be a collection of ids, got {type(ids).__name__}")
    listed = list(ids)
    for item in listed:
        if not isinstance(item, str) or not item:
            raise RecallArgumentError(f"{name} must hold non-empty strings, got {item!r:.80}")
    return listed


def check_session(session: object) -> None:
    """Raise :class:`~episeg.errors.RecallArgumentError` unless ``session`` is a name or None.

    An empty name is no session a turn can carry (:class:`~episeg.types.Turn` refuses it).

    >>> check_session(7)
    Traceback (most recent call last):
    ...
    episeg.errors.RecallArgumentError: session must be a string or None, got int 7
    """
    if session is not None and not isinstance(session, str):
        raise RecallArgumentError(
            f"session must be a string or None, got {type(session).__name__} {session!r}"
        )
    if session == "":
        raise RecallArgumentError("session must be a non-empty name or None, got ''")


def check_query(query: object) -> None:
    """Raise :class:`~episeg.errors.RecallArgumentError` unless ``query`` is UTF-8 text.

    A lone surrogate (a file name or pipe read with ``surrogateescape``) is
    refused as :class:`~episeg.types.Turn` refuses it; the embedder's
    tokenizer would raise a bare ``TypeError`` on it.
    """
    if not isinstance(query, str):
        raise RecallArgumentError(f"query must be a string, got {type(query).__name__}")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RecallArgumentError(
            f"query holds a lone surrogate {query[exc.start]!r} (undecodable input?): "
            "not UTF-8 text"
        ) from None


def check_recall_arguments(
    query: object,
    k: object,
    *,
    max_words: object = None,
    since: object = None,
    until: object = None,
    context: object = 0,
    neighbours: object = 0,
    min_score: object = None,
    session: object = None,
    expand: object = Expand.TURNS,
) -> None:
    """Raise :class:`~episeg.errors.RecallArgumentError` for the first malformed argument.

    An empty or blank query is one: it can match nothing (HTTP and MCP refuse it too).
    """
    check_query(query)
    if not str(query).strip():
        raise RecallArgumentError(f"query must hold some text, got {query!r:.40}")
    _count("k", k, 1)
    if max_words is not None:
        _count("max_words", max_words, 1)
    _count("context", context, 0)
    _count("neighbours", neighbours, 0)
    _finite("since", since)
    _finite("until", until)
    if since is not None and until is not None and since > until:  # type: ignore[operator]
        raise RecallArgumentError(f"since {since!r} is after until {until!r}")
    _finite("min_score", min_score)
    check_session(session)
    Expand.parse(expand)
