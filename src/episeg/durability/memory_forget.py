"""Erasure for :class:`~episeg.memory.Memory`: one episode, one session or a tenant, everywhere.

:class:`MemoryForget` is the part of the facade that forgets: it erases from
the tenant-bound store (:mod:`episeg.store.erase`), recall's cached index,
the journal (:mod:`episeg.durability.erase`, then scrubbed) and an embedded
store's SQLite file, and reloads the affected sessions from the journal. It
is a mixin: ``Memory`` builds the parts it declares.

>>> import tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None,
...              scorer=None)
>>> _ = mem.observe(Turn(actor="user", text="my pin is 1234", ts=1.0, user="dan"))
>>> [e] = mem.flush("dan")
>>> report = mem.forget("dan", episode=e.id)
>>> report.episodes == (e.id,), mem.episodes("dan")
(True, [])
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from episeg.durability.erase import erase_journal, scrub
from episeg.durability.journal import Journal
from episeg.durability.sessions import SessionPool
from episeg.errors import ArgumentError
from episeg.store.erase import (
    ForgetReport,
    erase_from_rebuild,
    log_rows,
    session_episodes,
    vacuum_chroma,
)
from episeg.store.tenants import validate_tenant
from episeg.typing import StoreBackend

if TYPE_CHECKING:
    from episeg.recall.index import IndexedStore

__all__ = ["MemoryForget"]

log = logging.getLogger("episeg.memory")


class MemoryForget:
    """:meth:`forget`: the erasing part of ``Memory``."""

    backend: StoreBackend
    journal: Journal
    sessions: SessionPool

    if TYPE_CHECKING:  # provided by episeg.recall.memory_recall.MemoryRecall

        def store(self, user: str) -> IndexedStore: ...

        def _drop_tenant_cache(self, tenant: str) -> None: ...

    def forget(
        self,
        user: str,
        *,
        episode: str | None = None,
        session: str | None = None,
        all: bool = False,
    ) -> ForgetReport:
        """Erase one episode, one session or all of ``user``'s data, everywhere.

        Give exactly one of ``episode``, ``session``, ``all=True``. Erased
        from: the episode and turn collections (a whole tenant's are
        dropped), recall's lexical index and catalogue, the journal (turns,
        seen ids, outbox, checkpoints; then vacuumed and its WAL truncated)
        and an embedded store's SQLite file (vacuumed; ``log_rows`` of the
        report counts what Chroma's log still holds), and the file of a rebuild
        that could not finish (:func:`~episeg.store.erase.erase_from_rebuild`). Chroma may also have
        written the text into unused slots of a vector file as stale heap
        memory (chroma-core/chroma#7688), and it only marks an erased vector
        deleted; an embedded store zeroes both when it is next opened
        (:mod:`episeg.store.scrub`; a server's folder: ``episeg scrub DIR``). Archived episodes are
        in the same collection and go too; no per-tenant weights are kept on
        disk. Another tenant's episode id erases nothing: it is reported in
        ``missing``. A forgotten turn id is accepted again.

        Raises
        ------
        ArgumentError
            Unless exactly one of ``episode``, ``session``, ``all`` is given.
        TenantError, StoreError, JournalError
            Invalid tenant; the store or journal failed (call again: erasure is idempotent).
        """
        if sum((episode is not None, session is not None, all)) != 1:
            raise ArgumentError("give exactly one of episode=, session= or all=True")
        tenant = validate_tenant(user)
        with self.sessions.lock(tenant):
            store = self.store(tenant)
            if episode is not None:
                erased = store.get([episode])
                pending = [e for e in self.journal.pending(tenant) if e.id == episode]
                erased = erased or pending
            else:
                erased = session_episodes(store.inner, None if all else session)
            folder = getattr(self.backend, "path", None)
            # an unfinished rebuild would add its copy back at the next start
            rebuilding = erase_from_rebuild(
                folder, tenant, episode=episode, session=session, everything=all
            )
            erased = list({e.id: e for e in [*erased, *rebuilding]}.values())
            ids = sorted({e.id for e in erased})
            store.delete(ids)
            drop = getattr(self.backend, "drop_tenant", None)
            if all and drop is not None:
                drop(tenant)  # the collections go too, with Chroma's log of them
            self._drop_tenant_cache(tenant)
            keys = {(tenant, e.session) for e in erased}
            if session is not None:
                keys.add((tenant, session))
            if all:
                keys |= {(s.user, s.session) for s in self.journal.sessions() if s.user == tenant}
            turns = (
                erase_journal(
                    self.journal,
                    tenant,
                    session=session,
                    episodes=ids,
                    turn_ids=[(e.session, t) for e in erased for t in e.turn_ids],
                    everything=all,
                )
                if (ids or session is not None or all)
                else 0
            )
            for key in sorted(keys):
                self.sessions.reload(*key)  # in-memory state and seen ids follow the journal
            scrub(self.journal)
            left = log_rows(folder, tenant, erased)
            if left:
                log.warning(
                    "forget %s: %d row(s) of Chroma's log still hold erased records until it "
                    "next persists (store.sync_threshold %s)",
                    tenant,
                    left,
                    getattr(self.backend, "sync_threshold", "?"),
                )
            vacuumed = vacuum_chroma(folder)
        return ForgetReport(
            user=tenant,
            episodes=tuple(ids),
            turns=turns,
            missing=(episode,) if episode is not None and not ids else (),
            session=session,
            tenant=all,
            vacuumed=vacuumed,
            log_rows=left,
        )
