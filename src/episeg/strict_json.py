"""JSON objects whose keys are each given once: every reader of outside JSON uses it.

Python's parser keeps the last of two equal keys without a word, so
``{"user": "alice", ..., "user": "bob"}`` would file alice's turn under bob, and
``{"text": "the real text", "text": ""}`` would store an empty turn. A duplicate is
an error here (a ``ValueError``, so readers that refuse malformed JSON refuse it too).

>>> loads_strict('{"a": 1, "b": {"a": 2}}')
{'a': 1, 'b': {'a': 2}}
>>> loads_strict('{"user": "alice", "user": "bob"}')
Traceback (most recent call last):
...
episeg.strict_json.DuplicateKeyError: key 'user' given twice in one object
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["DuplicateKeyError", "loads_strict", "unique_keys"]


class DuplicateKeyError(ValueError):
    """A JSON object named one key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {key[:80]!r} given twice in one object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for :func:`json.loads`: the object, or :class:`DuplicateKeyError`."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return obj


def loads_strict(text: str | bytes, **kwargs: Any) -> Any:
    """:func:`json.loads` refusing an object with a key given twice."""
    return json.loads(text, object_pairs_hook=unique_keys, **kwargs)
