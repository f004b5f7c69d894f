"""Remove vector-segment folders that embedded Chroma no longer lists, before it opens them.

Why: when a collection is deleted (``forget(all=True)`` drops a tenant's two
collections; a rebuild of a torn segment drops and re-creates them), Chroma
removes the collection and its segments from ``chroma.sqlite3`` but leaves each
vector segment's folder (``<segment id>/``: ``data_level0.bin``, ``header.bin``,
``length.bin``, ``link_lists.bin``, ``index_metadata.pickle``) on disk. Nothing
reads such a folder again, and nothing marks its vectors deleted, so
:func:`~episeg.store.scrub.scrub_store` did not zero them: every vector of an
erased tenant (and of a rebuilt one's old segment) stayed in its files
(docs/RELIABILITY.md F162).

:func:`remove_orphan_segments` deletes a folder only when all of these hold:
its name is a UUID, it holds ``header.bin``, ``chroma.sqlite3`` beside it could
be read, and that database's ``segments`` table does not list the name. It
runs where the scrub runs: before this process's Chroma opens the folder and
never while another process has it open.

>>> import tempfile
>>> remove_orphan_segments(Path(tempfile.mkdtemp()))  # no database: nothing is touched
[]
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import uuid
from contextlib import closing
from pathlib import Path

__all__ = ["remove_orphan_segments"]

log = logging.getLogger("episeg.store")


def remove_orphan_segments(folder: Path) -> list[str]:
    """Delete the segment folders under ``folder`` that its Chroma database does not list.

    Returns the names removed. A database that cannot be read (missing,
    locked, another schema) removes nothing and is logged.
    """
    database = folder / "chroma.sqlite3"
    if not database.is_file():
        return []
    listed = _listed_segments(database)
    if listed is None:
        return []
    removed = []
    for header in sorted(folder.glob("*/header.bin")):
        segment = header.parent
        if segment.name in listed or not _is_uuid(segment.name):
            continue
        try:
            shutil.rmtree(segment)
        except OSError as exc:
            log.warning("could not remove the unlisted vector segment %s: %s", segment, exc)
            continue
        removed.append(segment.name)
    if removed:
        log.info("removed %d vector segment folder(s) Chroma no longer lists", len(removed))
    return removed


def _listed_segments(database: Path) -> set[str] | None:
    try:
        uri = f"{database.resolve().as_uri()}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True)) as db:
            rows = db.execute("SELECT id FROM segments").fetchall()
    except sqlite3.Error as exc:
        log.warning("could not read the segments of %s (%s): no folder removed", database, exc)
        return None
    return {str(row[0]) for row in rows}


def _is_uuid(name: str) -> bool:
    try:
        return str(uuid.UUID(name)) == name
    except ValueError:
        return False
