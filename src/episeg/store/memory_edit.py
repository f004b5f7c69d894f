"""Managing stored episodes for :class:`~episeg.memory.Memory`: get, edit, unarchive, tenants.

:class:`MemoryEdit` is the part of the facade a user manages memory with. It
is a mixin: ``Memory`` builds the parts it declares. Every call is bound to
one tenant's store, so another tenant's episode id is "not found"
(:class:`~episeg.errors.EpisodeNotFoundError`), never read or changed.

Edits (:class:`~episeg.store.edit.EpisodeEdit`) are validated whole before
anything is written, run under the tenant's write lock, and are one record
update in Chroma (all fields or none; Chroma persists it before answering,
as every store write). An episode still waiting in the journal's outbox
(the store was down when it closed) is written first; if the store is still
unreachable the edit is refused with
:class:`~episeg.errors.StoreUnavailableError` and nothing changes, so a
later replay of the outbox can never undo an edit.

>>> import tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None,
...              scorer=None)
>>> _ = mem.observe(Turn(actor="user", text="renew the TLS cert", ts=1.0, user="erin"))
>>> [e] = mem.flush("erin")
>>> edited = mem.update_episode("erin", e.id, pinned=True, salience=8, metadata={"team": "ops"})
>>> got = mem.episode("erin", e.id)
>>> got.pinned, got.salience.score, got.salience.scorer, got.metadata
(True, 8, 'user', {'team': 'ops'})
>>> mem.episode("frank", e.id)
Traceback (most recent call last):
...
episeg.errors.EpisodeNotFoundError: tenant 'frank' has no episode ...
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from episeg.errors import (
    ArgumentError,
    EpisodeEditError,
    EpisodeNotFoundError,
    StoreUnavailableError,
)
from episeg.store.edit import EpisodeEdit, unarchived
from episeg.store.tenants import validate_tenant
from episeg.store.usermeta import MetaScalar
from episeg.types import Episode
from episeg.typing import StoreBackend

if TYPE_CHECKING:
    from episeg.durability.journal import Journal
    from episeg.durability.outbox import PendingWriter
    from episeg.recall.index import IndexedStore

__all__ = ["MemoryEdit"]


class MemoryEdit:
    """:meth:`episode`, :meth:`update_episode`, :meth:`unarchive`, :meth:`tenants`."""

    backend: StoreBackend
    journal: Journal
    _writer: PendingWriter
    _clock: Callable[[], float]

    if TYPE_CHECKING:  # provided by Memory and its other mixins

        def store(self, user: str) -> IndexedStore: ...

        def tenant_lock(self, user: str) -> threading.RLock: ...

    def episode(self, user: str, episode_id: str) -> Episode:
        """One of ``user``'s stored episodes (archived ones too).

        Raises
        ------
        EpisodeNotFoundError
            If ``user`` has no stored episode by that id (another tenant's id included).
        ArgumentError
            If ``episode_id`` is not a non-empty string.
        """
        _check_id(episode_id)  # not Chroma's "rejected get", a store error
        found = self.store(user).get([episode_id])
        if not found:
            raise EpisodeNotFoundError(
                f"tenant {validate_tenant(user)!r} has no episode {episode_id!r}"
            )
        return found[0]

    def update_episode(
        self,
        user: str,
        episode_id: str,
        *,
        summary: str | None = None,
        pinned: bool | None = None,
        salience: int | None = None,
        metadata: Mapping[str, MetaScalar] | None = None,
    ) -> Episode:
        """Edit one of ``user``'s episodes; the given fields change together or none does.

        ``pinned``: never decayed nor archived by :meth:`maintain`.
        ``salience``: 1-10 set by the user; stored with scorer ``"user"``
        (the reason keeps the score it replaced) and never scored over.
        ``metadata``: a flat ``{str: str | int | float | bool}`` that replaces
        the user metadata whole (``{}`` clears it; :mod:`episeg.store.usermeta`).
        Returns the episode as stored now.

        Raises
        ------
        EpisodeEditError
            A malformed field (:class:`~episeg.errors.MetadataError` for metadata),
            or no field to change; nothing is written.
        EpisodeNotFoundError
            ``user`` has no such episode.
        StoreUnavailableError
            The store is down (nothing is written).
        """
        if summary is None and pinned is None and salience is None and metadata is None:
            raise EpisodeEditError("nothing to edit: give summary, pinned, salience or metadata")
        edit = EpisodeEdit(summary=summary, pinned=pinned, salience=salience, metadata=metadata)
        with self.tenant_lock(user):
            current = self._stored_for_edit(user, episode_id)
            edited = edit.apply(current)
            if edited is not current:
                self.store(user).revise([edited])
            return self.episode(user, episode_id)

    def unarchive(self, user: str, episode_id: str) -> Episode:
        """Bring one of ``user``'s archived episodes back into recall; return it.

        It counts as accessed now (retention 1), so the next maintenance pass
        does not archive it again at once. An episode that is not archived is
        returned unchanged.

        Raises
        ------
        EpisodeNotFoundError, StoreUnavailableError
            As :meth:`update_episode`.
        """
        with self.tenant_lock(user):
            current = self._stored_for_edit(user, episode_id)
            if current.archived:
                self.store(user).update([unarchived(current, now=float(self._clock()))])
            return self.episode(user, episode_id)

    def tenants(self) -> list[str]:
        """Every tenant with stored episodes or journaled open turns, sorted (for operators)."""
        stored = set(self.backend.tenants())
        journaled = {s.user for s in self.journal.sessions()}
        return sorted(stored | journaled)

    def _stored_for_edit(self, user: str, episode_id: str) -> Episode:
        tenant = validate_tenant(user)
        _check_id(episode_id)
        if any(e.id == episode_id for e in self.journal.pending(tenant)):
            self._writer.drain(tenant)  # store it first, so no outbox replay undoes the edit
            if any(e.id == episode_id for e in self.journal.pending(tenant)):
                raise StoreUnavailableError(
                    f"episode {episode_id!r} is still waiting for the store; try again later"
                )
        return self.episode(tenant, episode_id)


def _check_id(episode_id: object) -> None:
    if not isinstance(episode_id, str) or not episode_id:
        raise ArgumentError(f"episode_id must be a non-empty string, got {episode_id!r:.80}")
