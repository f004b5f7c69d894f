"""Reading an export file back: every line checked before anything is written.

:func:`read_export` turns the lines of an ``episeg-export`` file (see
:mod:`episeg.store.portability`) into episodes of the importing tenant, or
raises :class:`~episeg.errors.ExportFormatError` naming the line of the first
problem: no header, another format version or embedder, a line that is not JSON
(also one nested too deeply for the parser), a malformed episode
(including a value no stored episode can hold: NaN or infinity, no turn, opened
after it closed), an id given twice, a trailer missing (a cut-off file) or not
matching the count.

>>> import numpy as np
>>> from episeg.store.portability import episode_line, header_line, trailer_line
>>> from episeg.types import Episode, Turn
>>> ep = Episode(id="e1", user="alice", session="s", summary="deploy v2",
...              turns=(Turn(actor="user", text="deploy v2", ts=1.0, session="s"),),
...              opened_at=1.0, closed_at=1.0, embedding=np.array([0.6, 0.8], np.float32))
>>> lines = [header_line("hashing", 2), episode_line(ep), trailer_line(1)]
>>> [e.user for e in read_export(lines, tenant="bob", embedder=("hashing", 2))]
['bob']
>>> read_export(lines[:2], tenant="bob")
Traceback (most recent call last):
...
episeg.errors.ExportFormatError: line 2: the file ends without the trailer line (cut off?)
>>> read_export(lines, tenant="bob", embedder=("all-MiniLM-L6-v2", 384))
Traceback (most recent call last):
...
episeg.errors.ExportFormatError: line 1: vectors of embedder 'hashing' (dim 2) cannot be ...
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from episeg.errors import EpisegError, ExportFormatError
from episeg.store.portability import FORMAT, VECTORS, VERSION, episode_from_record
from episeg.strict_json import loads_strict
from episeg.types import Episode

__all__ = ["read_export"]


def _lines(source: Iterable[str | bytes]) -> Iterable[tuple[int, str]]:
    for number, raw in enumerate(source, start=1):
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ExportFormatError(f"not UTF-8 text: {exc}", line=number) from None
        if raw.strip():
            yield number, raw.lstrip("\ufeff") if number == 1 else raw


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _object(number: int, text: str) -> dict[str, Any]:
    try:
        obj = loads_strict(text, parse_constant=_no_constant)  # NaN, Infinity; a key twice
    except ValueError as exc:
        raise ExportFormatError(f"not JSON: {exc}", line=number) from None
    except RecursionError:  # the parser recurses once per level of nesting
        raise ExportFormatError("not JSON: nested too deeply", line=number) from None
    if not isinstance(obj, dict):
        raise ExportFormatError("not a JSON object", line=number)
    return obj


def _check_header(number: int, head: dict[str, Any], embedder: tuple[str, int] | None) -> Any:
    if head.get("format") != FORMAT:
        raise ExportFormatError(f"not an {FORMAT} file (no header line)", line=number)
    if head.get("version") != VERSION:
        raise ExportFormatError(
            f"format version {head.get('version')!r}; this episeg reads {VERSION}", line=number
        )
    if head.get("vectors") != VECTORS:
        raise ExportFormatError(f"vectors must be {VECTORS!r}", line=number)
    model = head.get("embedder")
    if not isinstance(model, dict) or not isinstance(model.get("name"), str):
        raise ExportFormatError("the header names no embedder", line=number)
    dim = model.get("dim")
    if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool) or dim < 1):
        raise ExportFormatError(
            f"embedder dim must be a positive integer, got {dim!r}", line=number
        )
    if embedder is None:
        return dim
    if model["name"] != embedder[0] or dim not in (None, embedder[1]):
        raise ExportFormatError(
            f"vectors of embedder {model['name']!r} (dim {dim}) cannot be recalled by this "
            f"memory's {embedder[0]!r} (dim {embedder[1]})",
            line=number,
        )
    return embedder[1]  # a header without its dim: every vector must have this memory's


def read_export(
    source: Iterable[str | bytes], *, tenant: str, embedder: tuple[str, int] | None = None
) -> list[Episode]:
    """Every episode of an export file, as episodes of ``tenant``; all lines are checked first.

    ``embedder`` (name, dim) is the importing memory's: a file made with
    another embedder is refused, since its vectors would not match the queries.

    Raises
    ------
    ExportFormatError
        For the first malformed line (its number in ``.line``): no header, another
        version or embedder, a bad episode, an id twice, a count or trailer that is off.
    """
    episodes: list[Episode] = []
    seen: dict[str, int] = {}
    dim: int | None = None
    last = 0
    headed = ended = False
    for number, text in _lines(source):
        last = number
        if ended:
            raise ExportFormatError("a line after the trailer", line=number)
        obj = _object(number, text)
        if not headed:  # the first non-blank line is the header
            dim = _check_header(number, obj, embedder)
            headed = True
            continue
        if "end" in obj:
            if obj != {"end": FORMAT, "episodes": len(episodes)}:
                raise ExportFormatError(
                    f"the trailer {obj} does not match the {len(episodes)} episode line(s)",
                    line=number,
                )
            ended = True
            continue
        try:
            _check_text(obj, "record")
            episode = episode_from_record(obj, tenant=tenant, dim=dim)
        except (EpisegError, ValueError, KeyError, TypeError, OverflowError) as exc:
            raise ExportFormatError(f"episode: {exc}", line=number) from None
        except RecursionError:  # e.g. the repr of a value nested hundreds of levels deep
            raise ExportFormatError("episode: a value nested too deeply", line=number) from None
        if episode.id in seen:
            raise ExportFormatError(
                f"episode id {episode.id!r} already on line {seen[episode.id]}", line=number
            )
        seen[episode.id] = number
        episodes.append(episode)
        if dim is None and episode.embedding is not None:
            dim = int(episode.embedding.size)  # no dim stated: the first vector sets it
    if not headed:
        raise ExportFormatError("empty file: no header line", line=max(last, 1))
    if not ended:
        raise ExportFormatError("the file ends without the trailer line (cut off?)", line=last)
    return episodes


def _check_text(value: Any, where: str) -> None:
    """Refuse a lone surrogate in any string of the record: Chroma and SQLite store UTF-8 only."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{where} holds a lone surrogate: not UTF-8 text") from None
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _check_text(key, where)
            _check_text(item, f"{where}.{key}" if where != "record" else str(key))
    elif isinstance(value, list):
        for item in value:
            _check_text(item, where)
