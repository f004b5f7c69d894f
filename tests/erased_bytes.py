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

from pathlib import Path

from chromadb.api.shared_system_client import SharedSystemClient

from episeg.store import ChromaBackend
from episeg.store.scrub import Layout

__all__ = ["files_with", "reopened_files_with"]


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


def _read(path: Path, unused_slots: bool) -> bytes:
    raw = path.read_bytes()
    header = path.with_name("header.bin")
    if unused_slots or path.name not in ("data_level0.bin", "length.bin") or not header.is_file():
        return raw
    slots = Layout.read(path.parent)  # a torn header fails the test loudly
    return raw[: slots.count * (slots.per_element if path.name == "data_level0.bin" else 4)]
