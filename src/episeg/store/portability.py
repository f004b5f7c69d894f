"""The episeg export format (JSONL, version 1): one tenant's episodes, line by line.

A file is UTF-8 text, one JSON object per line, ``\\n``-terminated:

1. a **header**: ``{"format": "episeg-export", "version": 1, "episeg": "<version>",
   "embedder": {"name": ..., "dim": ...}, "vectors": "float32-le-base64"}``;
2. one line per **episode**: every field of :class:`~episeg.types.Episode` under
   its own name except ``user`` (the tenant comes from whoever imports, never
   from the file); turns as :meth:`Turn.to_dict <episeg.types.Turn.to_dict>`
   without ``user``; verdicts as :meth:`Verdict.to_dict`; salience with every
   field of :class:`~episeg.types.Salience`; ``embedding`` and ``turn_embeddings``
   as base64 of the little-endian float32 bytes (the turn matrix row by row),
   so every bit of a vector survives; fields added to ``Episode`` later are
   carried by name (:func:`episode_record`);
3. a **trailer**: ``{"end": "episeg-export", "episodes": N}``; a file without
   it (a cut-off download) is refused.

Blank lines are ignored. :func:`episeg.store.import_check.read_export`
checks the whole file before anything is written and names the line of the
first problem (:class:`~episeg.errors.ExportFormatError`).

>>> import numpy as np
>>> from episeg.types import Episode, Turn
>>> ep = Episode(id="e1", user="alice", session="s", summary="deploy v2",
...              turns=(Turn(actor="user", text="deploy v2", ts=1.0, id="s:0",
...                          user="alice", session="s"),),
...              opened_at=1.0, closed_at=1.0, embedding=np.array([0.6, 0.8], np.float32))
>>> line = episode_line(ep)
>>> line[:60]
'{"id":"e1","session":"s","turns":[{"actor":"user","text":"de'
>>> back = episode_from_record(json.loads(line), tenant="bob")
>>> back.user, back.turns[0].user, back.embedding.tolist() == ep.embedding.tolist()
('bob', 'bob', True)
>>> trailer_line(1).rstrip()
'{"end":"episeg-export","episodes":1}'
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import math
import types
import typing
from collections.abc import Mapping
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from episeg.errors import StoreError
from episeg.store.usermeta import validate_metadata
from episeg.types import Episode, Salience, Turn, Verdict
from episeg.types.episode import MAX_EPISODE_ID, turn_problem
from episeg.types.turn import MAX_TS, check_name

__all__ = [
    "FORMAT",
    "VECTORS",
    "VERSION",
    "episode_from_record",
    "episode_line",
    "episode_record",
    "header_line",
    "trailer_line",
]

FORMAT = "episeg-export"
VERSION = 1
VECTORS = "float32-le-base64"
_F32 = np.dtype("<f4")


def _episeg_version() -> str:
    try:
        return version("episeg")
    except PackageNotFoundError:  # a source tree that is not installed
        return "0+unknown"


def _dumps(obj: Mapping[str, Any]) -> str:
    """Compact JSON; ASCII escapes only for a line that is not valid UTF-8 (lone surrogates)."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text + "\n"


def header_line(embedder_name: str, dim: int | None) -> str:
    """The first line: format, version, this episeg's version and the embedder."""
    return _dumps(
        {
            "format": FORMAT,
            "version": VERSION,
            "episeg": _episeg_version(),
            "embedder": {"name": embedder_name, "dim": dim},
            "vectors": VECTORS,
        }
    )


def trailer_line(count: int) -> str:
    """The last line: how many episode lines came before it."""
    return _dumps({"end": FORMAT, "episodes": count})


def _vector_text(matrix: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(matrix, dtype=_F32).tobytes()).decode("ascii")


def _plain(value: Any) -> Any:
    """A JSON-ready form of a field value of any type episeg uses."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, np.ndarray):
        return _vector_text(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    raise StoreError(f"cannot export a value of type {type(value).__name__}")


def _turn_record(turn: Turn) -> dict[str, Any]:
    out = turn.to_dict()
    out.pop("user", None)
    return out


_ENCODERS: dict[str, Any] = {
    "turns": lambda turns: [_turn_record(t) for t in turns],
    "boundary_verdicts": lambda vs: [v.to_dict() for v in vs],
    "closing_verdicts": lambda vs: [v.to_dict() for v in vs],
}


def episode_record(episode: Episode) -> dict[str, Any]:
    """Every field of ``episode`` but ``user``, JSON-ready, in the dataclass's field order."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Episode):
        if f.name == "user":
            continue
        value = getattr(episode, f.name)
        out[f.name] = _ENCODERS.get(f.name, _plain)(value) if value is not None else None
    return out


def episode_line(episode: Episode) -> str:
    """One episode as its export line (``\\n``-terminated).

    Raises
    ------
    StoreError
        If the episode holds a value JSON cannot carry (a non-finite number).
    """
    try:
        return _dumps(episode_record(episode))
    except ValueError as exc:
        raise StoreError(f"episode {episode.id!r} cannot be exported: {exc}") from None


@cache
def _hints() -> dict[str, Any]:
    return typing.get_type_hints(Episode)


def _required() -> set[str]:
    return {
        f.name
        for f in dataclasses.fields(Episode)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    } - {"user"}


def _vectors(text: Any, rows: int | None, dim: int | None, name: str) -> np.ndarray:
    if not isinstance(text, str):
        raise ValueError(f"{name} must be a base64 string")
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    vector = np.frombuffer(raw, dtype=_F32).astype(np.float32)
    width = dim if dim is not None else (vector.size // rows if rows else vector.size)
    expected = (rows if rows is not None else 1) * width
    if len(raw) % 4 or vector.size != expected or width == 0:
        shape = f"{rows} x {width}" if rows is not None else str(width)
        raise ValueError(f"{name} holds {len(raw)} bytes, not {shape} float32 values")
    if not np.isfinite(vector).all():
        raise ValueError(f"{name} holds a non-finite value (NaN or infinity)")
    return vector if rows is None else vector.reshape(rows, width)


def _generic(name: str, value: Any) -> Any:
    """A field without its own decoder, shaped by its type hint (tuple, float, mapping)."""
    if value is None:
        return None
    hint = _hints().get(name)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        hint, origin = args[0], typing.get_origin(args[0])
    if origin is tuple or hint is tuple:
        if not isinstance(value, list):
            raise ValueError(f"{name} must be a list, got {value!r}")
        return tuple(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    base = origin or hint
    if isinstance(base, type) and issubclass(base, Mapping):
        base = dict
    if base in (bool, int, float, str, dict) and (
        not isinstance(value, base) or (base is int and isinstance(value, bool))
    ):
        raise ValueError(f"{name} must be of type {base.__name__}, got {value!r}")
    return value


def episode_from_record(
    record: Mapping[str, Any], *, tenant: str, dim: int | None = None
) -> Episode:
    """Rebuild an episode of ``tenant`` from :func:`episode_record`'s output.

    Raises
    ------
    ValueError, KeyError, TypeError, EpisegError
        For a missing, unknown or malformed field
        (:func:`~episeg.store.import_check.read_export` adds the line).
    """
    known = {f.name for f in dataclasses.fields(Episode)} - {"user"}
    unknown = sorted(set(record) - known)
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}: written by a newer episeg?")
    missing = sorted(_required() - set(record))
    if missing:
        raise ValueError(f"missing field(s) {missing}")
    if not isinstance(record["turns"], list):
        raise ValueError("turns must be a list")
    n_turns = len(record["turns"])
    values: dict[str, Any] = {"user": tenant}
    for name, value in record.items():
        if name == "turns":
            values[name] = tuple(Turn.from_dict({**t, "user": tenant}) for t in value)
        elif name in ("boundary_verdicts", "closing_verdicts"):
            values[name] = tuple(Verdict.from_dict(v) for v in value)
        elif name == "salience":
            values[name] = None if value is None else Salience(**value)
        elif name == "embedding":
            values[name] = None if value is None else _vectors(value, None, dim, name)
        elif name == "turn_embeddings":
            values[name] = None if value is None else _vectors(value, n_turns, dim, name)
        else:
            values[name] = _generic(name, value)
    if not isinstance(values["id"], str) or not values["id"]:
        raise ValueError(f"id must be a non-empty string, got {values['id']!r}")
    if values.get("embedding") is None:
        raise ValueError("embedding is missing: an episode is stored with its vector")
    if len(values["id"]) > MAX_EPISODE_ID:
        raise ValueError(f"id has {len(values['id'])} characters, at most {MAX_EPISODE_ID}")
    check_name("id", values["id"])  # the rules of turn and session ids
    check_name("session", values.get("session"))
    _check_values(values)
    if values.get("metadata") is not None:  # the rules every write is held to (usermeta)
        values["metadata"] = validate_metadata(values["metadata"])
    episode = Episode(**values)
    problem = turn_problem(episode)  # the rules store_episodes holds its turns to
    if problem is not None:
        raise ValueError(problem)
    return episode


def _check_values(values: Mapping[str, Any]) -> None:
    """What no stored episode can hold: no turn, a non-finite time or strength, a bad order."""
    if not values["turns"]:
        raise ValueError("turns is empty: an episode holds at least one turn")
    for name in ("opened_at", "closed_at", "strength", "last_accessed"):
        value = values.get(name)
        if value is not None and not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
        if value is not None and name != "strength" and abs(value) > MAX_TS:
            raise ValueError(f"{name} {value!r} is not a time in seconds (|t| <= {MAX_TS:.0e})")
    if values["opened_at"] > values["closed_at"]:
        raise ValueError(
            f"opened_at {values['opened_at']!r} is after closed_at {values['closed_at']!r}"
        )
    if values.get("recall_count", 0) < 0 or values.get("strength", 1.0) <= 0:
        raise ValueError("recall_count must not be negative, strength must be > 0")
    if values.get("recall_count", 0) >= 2**63:
        raise ValueError(f"recall_count {values['recall_count']} does not fit 64 bits")
    for verdict in (*values.get("boundary_verdicts", ()), *values.get("closing_verdicts", ())):
        if not math.isfinite(verdict.score):
            raise ValueError(f"a {verdict.signal} verdict's score is {verdict.score!r}")
