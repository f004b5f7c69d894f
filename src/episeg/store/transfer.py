"""Export a tenant's episodes as JSONL lines; import a checked file all-or-nothing.

:func:`export_lines` streams one tenant's store in the format of
:mod:`episeg.store.portability` (archived episodes included, with the turn
vectors when the store keeps them: ``turn_vectors``). :func:`import_episodes`
writes episodes that :func:`~episeg.store.import_check.read_export` already
checked: an id already stored with the same content is skipped (re-importing
a file is idempotent), an id stored with other content is an
:class:`~episeg.errors.ImportConflictError` before anything is written, and if
the store fails midway the episodes this call added are deleted again.

"Content" is every field but the recall state (``recall_count``,
``last_accessed``, ``strength``, ``archived``: what using memory changes) and
the vectors, which count as equal within :data:`VECTOR_TOLERANCE` (a cosine
Chroma collection re-normalises a vector it is given, moving a component by
up to one float32 step).

>>> import numpy as np
>>> from episeg.store.import_check import read_export
>>> from episeg.testing import InMemoryBackend
>>> from episeg.types import Episode, Turn
>>> backend = InMemoryBackend()
>>> ep = Episode(id="e1", user="alice", session="s", summary="deploy v2",
...              turns=(Turn(actor="user", text="deploy v2", ts=1.0, session="s"),),
...              opened_at=1.0, closed_at=1.0, embedding=np.array([0.6, 0.8], np.float32))
>>> backend.store_for("alice").add([ep])
>>> lines = list(export_lines(backend.store_for("alice"), embedder_name="hashing"))
>>> len(lines), lines[0][:40]
(3, '{"format":"episeg-export","version":1,"e')
>>> report = import_episodes(backend.store_for("bob"), read_export(lines, tenant="bob"))
>>> report.imported, import_episodes(backend.store_for("bob"), read_export(lines, tenant="bob"))
(('e1',), ImportReport(imported=(), unchanged=('e1',)))
>>> "".join(export_lines(backend.store_for("bob"), embedder_name="hashing")) == "".join(lines)
True
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from episeg.errors import ImportConflictError, StoreError
from episeg.store.portability import episode_line, episode_record, header_line, trailer_line
from episeg.types import Episode
from episeg.typing import EpisodeStore

__all__ = ["VECTOR_TOLERANCE", "ImportReport", "export_lines", "import_episodes"]

log = logging.getLogger(__name__)

VECTOR_TOLERANCE = 1e-6
"""Largest difference per vector component that still counts as the same content."""

_PAGE = 500
_WRITE = 500
_STATE = ("recall_count", "last_accessed", "strength", "archived", "embedding", "turn_embeddings")


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did: the ids it wrote, and those already stored with the same content."""

    imported: tuple[str, ...]
    unchanged: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"imported": list(self.imported), "unchanged": list(self.unchanged)}


def _with_turn_vectors(store: Any, page: Sequence[Episode]) -> list[Episode]:
    read = getattr(store, "turn_vectors", None)
    if read is None:
        return list(page)
    found: dict[str, np.ndarray] = read([e.id for e in page if e.turns])
    return [
        dataclasses.replace(e, turn_embeddings=found[e.id])
        if e.id in found and len(found[e.id]) == len(e.turns)
        else e
        for e in page
    ]


def _pages(store: EpisodeStore) -> Iterator[list[Episode]]:
    """Every episode once (archived too), page by page in storage order.

    The ids are read first and the pages by id: paging by offset, a delete
    between two pages moved the next page past an episode that was stored
    the whole time, which the file then silently lacked.
    """
    ids = store.episode_ids()
    for at in range(0, len(ids), _PAGE):
        page = store.get(ids[at : at + _PAGE])  # one deleted meanwhile is simply absent
        if page:
            yield _with_turn_vectors(store, page)


def export_lines(
    store: EpisodeStore, *, embedder_name: str, dim: int | None = None
) -> Iterator[str]:
    """The export file of ``store``'s tenant, line by line (each ``\\n``-terminated).

    ``dim`` defaults to the length of the stored vectors (``None`` for a
    tenant without episodes). Pages are read as the lines are consumed, so a
    large tenant streams; an episode written during the export may be missing
    from it, never in it twice.

    Raises
    ------
    StoreError
        If a stored vector does not have ``dim`` values.
    """
    pages = _pages(store)
    first = next(pages, [])
    if dim is None and first and first[0].embedding is not None:
        dim = int(np.asarray(first[0].embedding).size)
    yield header_line(embedder_name, dim)
    count = 0
    for page in itertools.chain([first], pages) if first else ():  # read as consumed
        for episode in page:
            size = None if episode.embedding is None else int(np.asarray(episode.embedding).size)
            if size != dim:
                raise StoreError(f"episode {episode.id!r} has a vector of {size} values, not {dim}")
            count += 1
            yield episode_line(episode)
    yield trailer_line(count)


def _content(episode: Episode) -> dict[str, Any]:
    record = episode_record(episode)
    return {k: v for k, v in record.items() if k not in _STATE}


def _same(stored: Episode, incoming: Episode) -> bool:
    if _content(stored) != _content(incoming):
        return False
    if stored.embedding is None or incoming.embedding is None:
        return stored.embedding is None and incoming.embedding is None
    a = np.asarray(stored.embedding, dtype=np.float32).ravel()
    b = np.asarray(incoming.embedding, dtype=np.float32).ravel()
    return a.shape == b.shape and bool(np.max(np.abs(a - b), initial=0.0) <= VECTOR_TOLERANCE)


def import_episodes(store: EpisodeStore, episodes: Sequence[Episode]) -> ImportReport:
    """Write ``episodes`` (already checked, of ``store``'s tenant) all-or-nothing.

    Raises
    ------
    ImportConflictError
        If an id is stored with other content (nothing is written).
    StoreError
        If the store fails; the episodes this call added are deleted again
        (a ``kill -9`` midway can leave some: importing the file again completes it).
    """
    stored = {e.id: e for e in store.get([e.id for e in episodes])} if episodes else {}
    conflicts = tuple(e.id for e in episodes if e.id in stored and not _same(stored[e.id], e))
    if conflicts:
        shown = ", ".join(conflicts[:5]) + (" ..." if len(conflicts) > 5 else "")
        raise ImportConflictError(
            f"{len(conflicts)} episode id(s) already stored with other content ({shown}); "
            "nothing imported (forget them first to replace them)",
            ids=conflicts,
        )
    new = [e for e in episodes if e.id not in stored]
    written: list[str] = []
    try:
        for start in range(0, len(new), _WRITE):
            chunk = new[start : start + _WRITE]
            written.extend(e.id for e in chunk)  # before the call: a failed add may be partial
            store.add(chunk)
    except Exception:
        try:
            store.delete(written)
        except StoreError as exc:  # the store is down: the caller sees the first failure
            log.error("could not undo a failed import of %d episodes: %s", len(written), exc)
        raise
    return ImportReport(
        imported=tuple(e.id for e in new),
        unchanged=tuple(e.id for e in episodes if e.id in stored),
    )
