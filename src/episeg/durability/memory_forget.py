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

import dataclasses
import logging
from typing import TYPE_CHECKING

from episeg.durability.erase import clear_judge_summaries, erase_journal, erase_open, scrub
from episeg.durability.journal import Journal
from episeg.durability.memory_open import open_segments
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
        ``missing``. A forgotten turn id is accepted again. The id of a still
        open episode (a recall hit with ``open=True``) erases its open turns
        from the journal: the session goes on with a new episode.

        Raises
        ------
        ArgumentError
            Unless exactly one of ``episode``, ``session``, ``all=True`` is given,
            ``episode`` and ``session`` strings and ``all`` a bool.
        TenantError, StoreError, JournalError
            Invalid tenant; the store or journal failed (call again: erasure is idempotent).
        """
        _check_forget(episode, session, all)
        tenant = validate_tenant(user)
        with self.sessions.lock(tenant):
            store = self.store(tenant)
            opened: list[str] = []  # the sessions whose open episode has this id
            if episode is not None:
                erased = store.get([episode])
                pending = [e for e in self.journal.pending(tenant) if e.id == episode]
                erased = erased or pending
                opened = [o.session for o in open_segments(self.journal, tenant) if o.id == episode]
            else:
                erased = session_episodes(store.inner, None if all else session)
            folder = getattr(self.backend, "path", None)
            # an unfinished rebuild would add its copy back at the next start
            rebuilding = erase_from_rebuild(
                folder, tenant, episode=episode, session=session, everything=all
            )
            erased = list({e.id: e for e in [*erased, *rebuilding]}.values())
            ids = sorted({e.id for e in erased})
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
            for name in opened:
                turns += self._erase_open(tenant, name)
                keys.add((tenant, name))
            if opened:
                ids = sorted({*ids, episode or ""})
            clear_judge_summaries(self.journal, keys)  # it may quote the erased turns
            for key in sorted(keys):
                self.sessions.reload(*key)  # in-memory state and seen ids follow the journal
            # the store last: if the journal failed above, a retry still finds the episodes
            store.delete(ids)
            drop = getattr(self.backend, "drop_tenant", None)
            if all and drop is not None:
                drop(tenant)  # the collections go too, with Chroma's log of them
            self._drop_tenant_cache(tenant)
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

    def _erase_open(self, tenant: str, session: str) -> int:
        """Erase (tenant, session)'s open episode from the journal; return the turns erased.

        The episode is closed in memory without being stored, and the journal
        keeps the session's state after that close (with no judge summary,
        which may quote the erased turns). Whatever happens, the session is
        reloaded from the journal.
        """
        segmenter = self.sessions.enter(tenant, session)
        try:
            segmenter.flush(tenant, session)  # dropped: the open episode is never stored
            after = dataclasses.replace(
                segmenter.checkpoint(tenant, session), prediction_summary=""
            )
            return erase_open(self.journal, after)
        finally:
            self.sessions.reload(tenant, session)


def _check_forget(episode: object, session: object, everything: object) -> None:
    """Raise :class:`~episeg.errors.ArgumentError` unless ``forget``'s arguments name one thing.

    A session that is not a string would erase the journal's rows of its
    ``str()`` and none of the store's (R4-C2).

    >>> _check_forget(None, 123, False)
    Traceback (most recent call last):
    ...
    episeg.errors.ArgumentError: session must be a string, got int 123
    """
    if not isinstance(everything, bool):
        raise ArgumentError(f"all must be True or False, got {type(everything).__name__}")
    for name, value in (("episode", episode), ("session", session)):
        if value is not None and not isinstance(value, str):
            raise ArgumentError(
                f"{name} must be a string, got {type(value).__name__} {value!r:.80}"
            )
    if episode == "":
        raise ArgumentError("episode must be a non-empty id")
    if session == "":  # no turn carries it (Turn refuses it): erasing it would erase nothing
        raise ArgumentError("session must be a non-empty name")
    if sum((episode is not None, session is not None, everything)) != 1:
        raise ArgumentError("give exactly one of episode=, session= or all=True")
