"""User metadata of an episode: a flat ``{str: str | int | float | bool}`` mapping.

Users attach their own labels to an episode (``{"project": "auth", "ticket":
4211, "done": True}``) through :meth:`episeg.memory.Memory.update_episode`,
and recall can keep only episodes whose metadata matches
(:func:`matches`). The rules, checked by :func:`validate_metadata` (a
:class:`~episeg.errors.MetadataError` names what is wrong, nothing is
written):

* at most :data:`MAX_KEYS` keys; a key is 1-64 characters of ASCII letters,
  digits and ``_.:-``, starting with a letter, digit or ``_``;
* a value is a ``str`` (at most :data:`MAX_VALUE_LENGTH` characters of valid
  text), a ``bool``, an ``int`` within 64 bits or a finite ``float``;
  ``None``, lists and mappings are refused (the mapping is flat).

In Chroma each key is stored as ``meta.<key>`` (:data:`PREFIX`: episeg's own
keys never start with it, so a user key cannot overwrite one), its value
JSON-encoded, so the type and every bit of a float come back exactly.

>>> meta = validate_metadata({"project": "auth", "ticket": 4211, "done": True})
>>> stored = to_chroma(meta)
>>> stored["meta.project"], stored["meta.ticket"]
('"auth"', '4211')
>>> from_chroma({**stored, "summary": "x"}) == meta
True
>>> matches(meta, {"project": "auth"}), matches(meta, {"ticket": "4211"})
(True, False)
>>> validate_metadata({"tags": ["a"]})
Traceback (most recent call last):
...
episeg.errors.MetadataError: metadata value of 'tags' must be a str, int, float or bool, got list
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from episeg.errors import MetadataError

__all__ = [
    "MAX_KEYS",
    "MAX_VALUE_LENGTH",
    "PREFIX",
    "MetaScalar",
    "from_chroma",
    "matches",
    "to_chroma",
    "validate_metadata",
]

MetaScalar = str | int | float | bool
PREFIX = "meta."
MAX_KEYS = 32
MAX_VALUE_LENGTH = 1024
_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:\-]{0,63}")
_INT64 = 2**63


def validate_metadata(metadata: object, *, what: str = "metadata") -> dict[str, MetaScalar]:
    """``metadata`` as a plain dict if it follows the module's rules.

    Raises
    ------
    MetadataError
        Not a mapping, too many keys, a bad key or a value of the wrong kind.
    """
    if not isinstance(metadata, Mapping):
        raise MetadataError(f"{what} must be a mapping of str to scalars, got {_kind(metadata)}")
    if len(metadata) > MAX_KEYS:
        raise MetadataError(f"{what} has {len(metadata)} keys; at most {MAX_KEYS} are allowed")
    out: dict[str, MetaScalar] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise MetadataError(
                f"{what} key {key!r} must be 1-64 ASCII letters, digits or _.:- "
                "(starting with a letter, digit or _)"
            )
        out[key] = _scalar(key, value, what)
    return out


def _scalar(key: str, value: object, what: str) -> MetaScalar:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -_INT64 <= value < _INT64:
            raise MetadataError(f"{what} value of {key!r} is outside the 64-bit integer range")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MetadataError(f"{what} value of {key!r} must be finite, got {value!r}")
        return float(value)
    if isinstance(value, str):
        if len(value) > MAX_VALUE_LENGTH:
            raise MetadataError(
                f"{what} value of {key!r} has {len(value)} characters; "
                f"at most {MAX_VALUE_LENGTH} are allowed"
            )
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise MetadataError(f"{what} value of {key!r} is not valid text") from None
        return value
    raise MetadataError(
        f"{what} value of {key!r} must be a str, int, float or bool, got {_kind(value)}"
    )


def _kind(value: object) -> str:
    return "None" if value is None else type(value).__name__


def to_chroma(metadata: Mapping[str, MetaScalar]) -> dict[str, str]:
    """The Chroma metadata entries of (already validated) user ``metadata``."""
    return {PREFIX + k: json.dumps(v, ensure_ascii=False) for k, v in metadata.items()}


def from_chroma(stored: Mapping[str, Any]) -> dict[str, MetaScalar]:
    """The user metadata held in a Chroma record's metadata (other keys are ignored).

    Raises
    ------
    MetadataError
        If a ``meta.`` entry is not a JSON-encoded scalar (not written by episeg).
    """
    out: dict[str, MetaScalar] = {}
    for name, raw in stored.items():
        if not name.startswith(PREFIX):
            continue
        key = name[len(PREFIX) :]
        try:
            value = json.loads(str(raw))
        except json.JSONDecodeError:
            raise MetadataError(f"stored metadata {name!r} is not JSON: {raw!r}") from None
        out[key] = _scalar(key, value, "stored metadata")
    return dict(sorted(out.items()))


def matches(metadata: Mapping[str, MetaScalar], wanted: Mapping[str, MetaScalar]) -> bool:
    """Whether ``metadata`` holds every key of ``wanted`` with an equal value of the same type.

    ``1`` does not match ``True`` nor ``1.0``: exact match, type included.

    >>> matches({"n": 1}, {"n": True}), matches({"n": 1}, {}), matches({}, {"n": 1})
    (False, True, False)
    """
    for key, value in wanted.items():
        if key not in metadata:
            return False
        held = metadata[key]
        if type(held) is not type(value) or held != value:
            return False
    return True
