"""Zero the unused slots of embedded Chroma's vector files before Chroma opens them.

Why: Chroma's HNSW index (its hnswlib fork) creates a segment with room for
more vectors than it holds and writes the whole buffer, unused slots included,
as the process heap left them (``data_level0.bin``, ``length.bin``;
chroma-core/chroma#7688). Those slots then hold stale process memory: SQLite
pages and strings with turn text of any tenant, including text
:meth:`Memory.forget <episeg.memory.Memory.forget>` has erased everywhere else.
Chroma never writes an unused slot again (later writes touch only the slots in
use, and a slot is cleared when it is taken), so zeroing them once removes the
stale bytes for good. Measured (docs/RELIABILITY.md): an erased text was left in
a vector file after 41 of 300 runs of the forget scenario.

:func:`scrub_store` does it for every segment of a store folder. It must run
while no Chroma in any process has the store open (a slot taken meanwhile
could be zeroed on disk): :meth:`~episeg.store.ChromaBackend.persistent` calls
it before it opens the client, unless this process already has that folder
open. So an erasure is complete on disk at the latest when the store is next
opened; segments made while it is open keep their stale slots until then.

A segment whose header is not the one this code knows (another persistence
version, sizes that do not fit its files, a torn file) is left alone and
logged: :mod:`episeg.store.repair` handles torn segments.

>>> import tempfile
>>> scrub_store(Path(tempfile.mkdtemp()))  # no segments: nothing to do
0
"""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path

__all__ = ["HEADER", "STATE", "scrub_segment", "scrub_store"]

log = logging.getLogger("episeg.store")
# hnswlib persistHeader: version (int), offsetLevel0, max_elements, cur_element_count,
# size_data_per_element, label_offset, offsetData (size_t), maxlevel (int), enterpoint
# (uint), maxM, maxM0, M (size_t), mult (double), ef_construction (size_t): 100 bytes
HEADER = struct.Struct("<iqqqqqqiIqqqdq")
_VERSION = 1
STATE = "episeg-scrubbed.txt"
"""The segments already scrubbed, one ``name capacity`` line each, in the store folder."""
_CHUNK = 1 << 20


def scrub_store(folder: Path) -> int:
    """Zero the unused slots of the vector segments under ``folder`` not yet done; bytes rewritten.

    A segment once scrubbed stays clean (Chroma never writes an unused slot
    again), so the ones done are listed in ``folder/``:data:`STATE` with their
    capacity and skipped at the next open unless their capacity changed: the
    cost of an open is the new segments, not the whole store.
    """
    if not folder.is_dir():
        return 0
    state = folder / STATE
    done = _read_state(state)
    seen: dict[str, int] = {}
    zeroed = 0
    for header in sorted(folder.glob("*/header.bin")):
        segment = header.parent
        capacity = _capacity(header)
        if capacity is not None and done.get(segment.name) == capacity:
            seen[segment.name] = capacity
            continue
        try:
            rewritten = scrub_segment(segment)
        except OSError as exc:  # e.g. a read-only store: it still opens, and says so
            log.warning(
                "could not zero the unused slots of %s (%s): stale text may stay "
                "in Chroma's vector files",
                segment.name,
                exc,
            )
            continue
        if rewritten is not None and capacity is not None:
            seen[segment.name] = capacity
            zeroed += rewritten
    if seen != done:
        try:
            _write_state(state, seen)
        except OSError as exc:
            log.warning("could not record the scrubbed segments in %s (%s)", state, exc)
    if zeroed:
        log.info("zeroed %d bytes of unused slots in Chroma's vector files", zeroed)
    return zeroed


def _capacity(header: Path) -> int | None:
    try:
        raw = header.read_bytes()
        return int(HEADER.unpack(raw)[2]) if len(raw) == HEADER.size else None
    except OSError:
        return None


def _read_state(state: Path) -> dict[str, int]:
    try:
        lines = state.read_text(encoding="utf-8").splitlines()
        return {name: int(cap) for name, cap in (line.split() for line in lines if line)}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # unreadable: scrub everything again (safe)
        log.warning("re-scrubbing every vector segment: %s unreadable (%s)", state, exc)
        return {}


def _write_state(state: Path, done: dict[str, int]) -> None:
    tmp = state.with_name(state.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.writelines(f"{name} {cap}\n" for name, cap in sorted(done.items()))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, state)


def scrub_segment(segment: Path) -> int | None:
    """Zero ``data_level0.bin`` and ``length.bin`` past the slots in use; bytes rewritten.

    ``None`` when the segment was left alone (logged): an unknown persistence
    version, sizes that do not fit, a torn or missing file.
    """
    try:
        raw = (segment / "header.bin").read_bytes()
        data, length = segment / "data_level0.bin", segment / "length.bin"
        if len(raw) != HEADER.size or not data.is_file() or not length.is_file():
            raise ValueError(
                f"header of {len(raw)} bytes, data/length files present: "
                f"{data.is_file()}/{length.is_file()}"
            )
        fields = HEADER.unpack(raw)
        version, max_elements, count, per_element = fields[0], fields[2], fields[3], fields[4]
        if version != _VERSION or not 0 <= count <= max_elements or per_element <= 0:
            raise ValueError(f"version {version}, {count} of {max_elements} slots, {per_element} B")
        if data.stat().st_size < count * per_element or length.stat().st_size < count * 4:
            raise ValueError("files shorter than the slots in use (torn)")
    except (OSError, ValueError, struct.error) as exc:
        log.warning("left Chroma vector segment %s as it is: %s", segment.name, exc)
        return None
    return _zero_tail(data, count * per_element, max_elements * per_element) + _zero_tail(
        length, count * 4, max_elements * 4
    )


def _zero_tail(path: Path, start: int, end: int) -> int:
    """Overwrite the non-zero chunks of ``path[start:end]`` (clipped to its size) with zeros."""
    zeroed = 0
    with path.open("r+b") as f:
        end = min(end, os.fstat(f.fileno()).st_size)
        for at in range(start, end, _CHUNK):
            size = min(_CHUNK, end - at)
            f.seek(at)
            if f.read(size).count(0) != size:
                f.seek(at)
                f.write(bytes(size))
                zeroed += size
        if zeroed:
            f.flush()
            os.fsync(f.fileno())
    return zeroed
