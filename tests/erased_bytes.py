"""Where a forgotten text's bytes are on disk, for the erasure tests (issue 12).

Embedded Chroma writes a new vector segment's unused slots as the heap left
them (chroma-core/chroma#7688): any text the process held, an erased one too,
can be there until :mod:`episeg.store.scrub` zeroes them, which it does each
time the store is opened (never while this process has it open). So right after
``forget`` in the same process a test looks everywhere *but* those unused slots
(``unused_slots=False``: the bytes of ``data_level0.bin`` and ``length.bin``
past the slots in use are not read), and after the store is opened again
everywhere, as episeg promises.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

from chromadb.api.shared_system_client import SharedSystemClient

from episeg.store import ChromaBackend
from episeg.store.scrub import Layout

__all__ = ["files_with", "fts_trigrams", "reopened_files_with"]


def files_with(folder: Path, needle: str, *, unused_slots: bool = True) -> list[str]:
    """The files under ``folder`` whose bytes hold ``needle`` (UTF-8), relative, sorted."""
    data = needle.encode("utf-8")
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and data in _read(p, unused_slots)
    )


def reopened_files_with(folder: Path, needle: str) -> list[str]:
    """:func:`files_with`, every byte, once the embedded store ``folder/chroma`` is opened
    again as by a new process (which zeroes the unused slots)."""
    SharedSystemClient.clear_system_cache()
    ChromaBackend.persistent(folder / "chroma")
    return files_with(folder, needle)


def fts_trigrams(folder: Path, needle: str) -> list[str]:
    """The trigrams of ``needle`` still in the data blocks of Chroma's full-text index.

    Chroma indexes documents in an FTS5 table of trigrams; a deleted document's
    trigrams stay in its blocks until the index is merged, and a ``VACUUM`` copies
    them as they are: not the text itself (so :func:`files_with` misses them), but
    overlapping pieces from which a distinctive word can be rebuilt. Read from a copy
    of ``folder/chroma/chroma.sqlite3``.
    """
    grams = sorted({needle[i : i + 3] for i in range(len(needle) - 2)})
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "copy.sqlite3"
        shutil.copy(folder / "chroma" / "chroma.sqlite3", copy)
        db = sqlite3.connect(copy)
        try:
            rows = db.execute("SELECT block FROM embedding_fulltext_search_data").fetchall()
        finally:
            db.close()
    blocks = b"".join(row[0] or b"" for row in rows)
    return [gram for gram in grams if gram.encode("utf-8") in blocks]


def _read(path: Path, unused_slots: bool) -> bytes:
    raw = path.read_bytes()
    header = path.with_name("header.bin")
    if unused_slots or path.name not in ("data_level0.bin", "length.bin") or not header.is_file():
        return raw
    slots = Layout.read(path.parent)  # a torn header fails the test loudly
    return raw[: slots.count * (slots.per_element if path.name == "data_level0.bin" else 4)]
