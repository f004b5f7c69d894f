"""Zero the unused slots and the deleted vectors of embedded Chroma's files before it opens them.

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

Also: Chroma deletes a vector by *marking* its slot (hnswlib's deleted flag),
so the embedding of an erased turn or episode stayed in ``data_level0.bin``.
The vectors of slots marked deleted are zeroed too (links and labels are left:
search still walks through such a node, now far from every query; recall@10
against exact search, real MiniLM vectors: -0.003 with 10% of a store
deleted, -0.007 with 30%, -0.028 with half, docs/RELIABILITY.md). A segment is
read again for that whenever its ``data_level0.bin`` changed since the last
pass (56-572 ms for the 507 MB of a 10^5-episode store, warm or cold page cache;
~1 ms when unchanged).

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
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from episeg.store.orphans import remove_orphan_segments

__all__ = ["HEADER", "STATE", "Layout", "processes_using", "scrub_segment", "scrub_store"]

log = logging.getLogger("episeg.store")
# hnswlib persistHeader: version (int), offsetLevel0, max_elements, cur_element_count,
# size_data_per_element, label_offset, offsetData (size_t), maxlevel (int), enterpoint
# (uint), maxM, maxM0, M (size_t), mult (double), ef_construction (size_t): 100 bytes
HEADER = struct.Struct("<iqqqqqqiIqqqdq")
_VERSION = 1
STATE = "episeg-scrubbed.txt"
"""The segments already scrubbed, one ``name capacity size mtime_ns`` line each (the last two
of ``data_level0.bin`` after the pass), in the store folder."""
_CHUNK = 1 << 20
_DELETED = 0x01  # hnswlib's DELETE_MARK, in byte 2 of a slot's level-0 link list header
_LABEL = 8  # bytes of the label that ends every slot
_FRESH_NS = 2_000_000_000  # a vector file changed this recently is read again next time
Done = tuple[int, tuple[int, int] | None]  # capacity, (size, mtime_ns) of data_level0.bin


@dataclass(frozen=True)
class Layout:
    """A segment's slots as its ``header.bin`` describes them (byte offsets within a slot)."""

    version: int
    capacity: int  # slots allocated (max_elements)
    count: int  # slots in use (cur_element_count)
    per_element: int  # bytes per slot: level-0 links, vector, label
    vector_at: int
    label_at: int

    @classmethod
    def read(cls, segment: Path) -> Layout:
        """Parse ``segment/header.bin``; ``ValueError`` if it is not :data:`HEADER`'s size.

        >>> import tempfile
        >>> seg = Path(tempfile.mkdtemp())
        >>> _ = (seg / "header.bin").write_bytes(HEADER.pack(1, 0, 10, 3, 16, 8, 4, 0, 0, 16,
        ...                                                   32, 16, 0.36, 100))
        >>> Layout.read(seg)
        Layout(version=1, capacity=10, count=3, per_element=16, vector_at=4, label_at=8)
        """
        raw = (segment / "header.bin").read_bytes()
        if len(raw) != HEADER.size:
            raise ValueError(f"header of {len(raw)} bytes")
        f = HEADER.unpack(raw)
        return cls(f[0], f[2], f[3], f[4], vector_at=f[6], label_at=f[5])


def scrub_store(folder: Path) -> int:
    """Zero unused slots and deleted vectors of the segments under ``folder``; bytes rewritten.

    Unused slots stay clean once zeroed (Chroma never writes one again), and a
    vector file unchanged since the last pass holds no new deletion, so the
    segments done are listed in ``folder/``:data:`STATE` and skipped while
    their ``data_level0.bin`` is unchanged; unused slots are zeroed again only
    when the capacity changed. The cost of an open is the segments written
    since the last one.
    """
    if not folder.is_dir():
        return 0
    remove_orphan_segments(folder)  # the folders of deleted collections: whole, not slots
    state = folder / STATE
    done = _read_state(state)
    seen: dict[str, Done] = {}
    zeroed = 0
    for header in sorted(folder.glob("*/header.bin")):
        segment = header.parent
        capacity = _capacity(segment)
        prior = done.get(segment.name)
        stamp = _stamp(segment)
        if capacity is not None and stamp is not None and prior == (capacity, stamp):
            seen[segment.name] = (capacity, stamp)
            continue
        try:
            rewritten = scrub_segment(segment, tail=prior is None or prior[0] != capacity)
        except OSError as exc:  # e.g. a read-only store: it still opens, and says so
            log.warning(
                "could not zero the unused slots and deleted vectors of %s (%s): stale "
                "text and erased vectors may stay in Chroma's vector files",
                segment.name,
                exc,
            )
            continue
        if rewritten is not None and capacity is not None:
            seen[segment.name] = (capacity, _stamp(segment))
            zeroed += rewritten
    if seen != done:
        try:
            _write_state(state, seen)
        except OSError as exc:
            log.warning("could not record the scrubbed segments in %s (%s)", state, exc)
    if zeroed:
        log.info("zeroed %d bytes of unused slots and deleted vectors in Chroma's files", zeroed)
    return zeroed


def processes_using(folder: Path) -> list[int]:
    """Ids of the other processes with a file under ``folder`` open, from Linux's ``/proc``.

    Best effort: processes of other users (unreadable ``fd`` folders), other
    containers and other machines are not seen, and it is empty without ``/proc``.
    Used to refuse scrubbing the folder of a ``chroma run`` server still running.
    """
    root = folder.resolve()
    found: list[int] = []
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:  # gone, or not ours to read
            continue
        if any(_under(fd, root) for fd in fds):
            found.append(int(entry.name))
    return sorted(found)


def _under(fd: Path, root: Path) -> bool:
    try:
        target = Path(os.readlink(fd))
    except OSError:  # closed meanwhile
        return False
    return target == root or root in target.parents


def _stamp(segment: Path) -> tuple[int, int] | None:
    """Size and mtime of ``data_level0.bin``, or ``None`` if it is missing or just written.

    A file changed in the last :data:`_FRESH_NS` gets no stamp (the segment
    is read again at the next pass): a write by Chroma within the same mtime
    tick as this pass's would otherwise look like no change.
    """
    try:
        st = (segment / "data_level0.bin").stat()
    except OSError:
        return None
    return None if time.time_ns() - st.st_mtime_ns < _FRESH_NS else (st.st_size, st.st_mtime_ns)


def _capacity(segment: Path) -> int | None:
    try:
        return Layout.read(segment).capacity
    except (OSError, ValueError):
        return None


def _read_state(state: Path) -> dict[str, Done]:
    """``name -> (capacity, stamp)``; a line of the older ``name capacity`` form has no stamp."""
    try:
        done: dict[str, Done] = {}
        for line in state.read_text(encoding="utf-8").splitlines():
            name, *numbers = line.split()
            values = [int(n) for n in numbers]
            if len(values) not in (1, 3):
                raise ValueError(f"line {line!r}")
            done[name] = (values[0], (values[1], values[2]) if len(values) == 3 else None)
        return done
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # unreadable: scrub everything again (safe)
        log.warning("re-scrubbing every vector segment: %s unreadable (%s)", state, exc)
        return {}


def _write_state(state: Path, done: dict[str, Done]) -> None:
    tmp = state.with_name(state.name + ".tmp")
    lines = [
        f"{name} {cap}" + (f" {stamp[0]} {stamp[1]}" if stamp else "")
        for name, (cap, stamp) in sorted(done.items())
    ]
    with tmp.open("w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, state)


def scrub_segment(segment: Path, *, tail: bool = True) -> int | None:
    """Zero the vectors of deleted slots and (``tail``) the files past the slots in use.

    Returns the bytes rewritten (``data_level0.bin`` and ``length.bin``), or
    ``None`` when the segment was left alone (logged): an unknown persistence
    version, sizes that do not fit, a torn or missing file.
    """
    try:
        data, length = segment / "data_level0.bin", segment / "length.bin"
        if not data.is_file() or not length.is_file():
            raise ValueError(f"data/length files present: {data.is_file()}/{length.is_file()}")
        s = Layout.read(segment)
        if s.version != _VERSION or not 0 <= s.count <= s.capacity or s.per_element <= 0:
            raise ValueError(
                f"version {s.version}, {s.count} of {s.capacity} slots, {s.per_element} B"
            )
        if not 4 <= s.vector_at <= s.label_at == s.per_element - _LABEL:
            raise ValueError(f"vector at {s.vector_at}, label at {s.label_at} of {s.per_element} B")
        if data.stat().st_size < s.count * s.per_element or length.stat().st_size < s.count * 4:
            raise ValueError("files shorter than the slots in use (torn)")
    except (OSError, ValueError, struct.error) as exc:
        log.warning("left Chroma vector segment %s as it is: %s", segment.name, exc)
        return None
    zeroed = _zero_deleted(data, s.count, s.per_element, s.vector_at, s.label_at)
    if tail:
        zeroed += _zero_tail(data, s.count * s.per_element, s.capacity * s.per_element)
        zeroed += _zero_tail(length, s.count * 4, s.capacity * 4)
    return zeroed


def _zero_deleted(path: Path, count: int, per_element: int, start: int, end: int) -> int:
    """Zero bytes ``start:end`` (the vector) of every slot in use whose deleted flag is set."""
    if count == 0 or end == start:
        return 0
    slots = np.memmap(path, dtype=np.uint8, mode="r+", shape=(count, per_element))
    try:
        dead = np.flatnonzero(slots[:, 2] & _DELETED)
        dirty = dead[slots[dead, start:end].any(axis=1)] if dead.size else dead
        if dirty.size:
            slots[dirty, start:end] = 0
            slots.flush()
        return int(dirty.size) * (end - start)
    finally:
        del slots


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
