"""Export and import for :class:`~episeg.memory.Memory`: a tenant as a JSONL file and back.

:class:`MemoryTransfer` is the part of the facade that moves a tenant's
memory between stores. It is a mixin: ``Memory`` builds the parts it
declares. The format is :mod:`episeg.store.portability` (a header with the
embedder, one line per episode with every field and its vectors, a
trailer); :meth:`~MemoryTransfer.import_episodes` checks the whole file first
(:func:`~episeg.store.import_check.read_export`), then writes under the
tenant's lock through the tenant's indexed store, so recall's lexical index
and turn vectors see the imported episodes at once. The tenant is always the
caller's ``user``: a file exported from alice and imported as bob lands in
bob's collections only (each tenant has its own, so ids never meet alice's).

>>> import io, tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None,
...              scorer=None)
>>> _ = mem.observe(Turn(actor="user", text="renew the TLS cert", ts=1.0, user="erin"))
>>> _ = mem.flush("erin")
>>> file = io.StringIO()
>>> mem.export_to("erin", file)
1
>>> report = mem.import_episodes("gus", io.StringIO(file.getvalue()))
>>> len(report.imported), mem.recall("gus", "TLS cert", k=1)[0].episode.summary
(1, 'renew the TLS cert')
>>> mem.import_episodes("gus", io.StringIO(file.getvalue())).imported   # idempotent
()
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, cast

from episeg.store.import_check import read_export
from episeg.store.tenants import validate_tenant
from episeg.store.transfer import ImportReport, export_lines, import_episodes
from episeg.typing import Embedder

if TYPE_CHECKING:
    from episeg.recall.index import IndexedStore

__all__ = ["MemoryTransfer"]


class MemoryTransfer:
    """:meth:`export`, :meth:`export_to`, :meth:`import_episodes`."""

    embedder: Embedder

    if TYPE_CHECKING:  # provided by Memory and its other mixins

        def store(self, user: str) -> IndexedStore: ...

        def tenant_lock(self, user: str) -> threading.RLock: ...

    def export(self, user: str) -> Iterator[str]:
        """``user``'s episodes (archived too) as export lines, read page by page as consumed.

        Each line ends with ``\\n``; ``"".join(...)`` is the file. Nothing is written.
        """
        store = self.store(validate_tenant(user)).inner
        return export_lines(store, embedder_name=self.embedder.name, dim=self.embedder.dim)

    def export_to(self, user: str, file: IO[str] | IO[bytes]) -> int:
        """Write ``user``'s export to a text or binary file-like; return the episode count."""
        count = -2  # the header and the trailer are not episodes
        binary = isinstance(file, io.RawIOBase | io.BufferedIOBase) or "b" in getattr(
            file, "mode", ""
        )
        for line in self.export(user):
            if binary:
                cast(IO[bytes], file).write(line.encode("utf-8"))
            else:
                cast(IO[str], file).write(line)
            count += 1
        return count

    def import_episodes(self, user: str, source: Iterable[str | bytes]) -> ImportReport:
        """Import an export file (any iterable of its lines) into ``user``'s memory.

        All or nothing: every line is checked first; an episode already stored
        with the same content is skipped (importing a file twice changes
        nothing); an id stored with other content is a conflict. The file's
        own tenant is ignored: its episodes become ``user``'s.

        Raises
        ------
        ExportFormatError
            A malformed line (``.line``), another format version, or vectors of
            another embedder than this memory's; nothing is written.
        ImportConflictError
            An id already stored with other content (``.ids``); nothing is written.
        TenantError, StoreError
            An invalid ``user``; the store failed (what this call added is removed).
        """
        tenant = validate_tenant(user)
        model = (self.embedder.name, self.embedder.dim)
        episodes = read_export(source, tenant=tenant, embedder=model)
        with self.tenant_lock(tenant):
            return import_episodes(self.store(tenant), episodes)
