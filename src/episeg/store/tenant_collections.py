"""A tenant's two Chroma collections, made by its first write and never by a read.

:class:`~episeg.store.collection.ChromaEpisodeStore` keeps one tenant's
episodes in one collection and their turn vectors in a second
(:mod:`episeg.store.turns`). Reading a tenant that never stored anything (a
mistyped user in ``episeg episodes``, a recall for a new user, an API key
whose tenant is still empty) finds no collection and reads as empty; only a
write creates them. Before this, every such read created two empty
collections, so a stream of reads for made-up tenants grew the store without
bound.

While a tenant has no collection, each read looks again (one Chroma call),
so a write by another process or replica on the same ``chroma run`` server
is seen at once. Once found or made, the handles are kept until Chroma says
their collections are gone (the tenant was erased under a read or a write,
``DELETE /v1/tenant``): :meth:`TenantCollections.read` then reads the tenant
as it is now (empty, or its new collections), and :meth:`TenantCollections.write`
writes to new ones, instead of failing on the dropped handles.

>>> import tempfile
>>> from episeg.store import ChromaBackend
>>> backend = ChromaBackend.persistent(tempfile.mkdtemp())
>>> handles = TenantCollections("alice", client=backend._client)
>>> handles.find() is None, backend._client.list_collections()
(True, [])
>>> episodes, turns = handles.create()
>>> handles.find()[0].name == episodes.name, len(backend._client.list_collections())
(True, 2)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
from chromadb.errors import NotFoundError

from episeg.errors import StoreError, TenantError
from episeg.store.chroma_io import READ_INCLUDE, open_collection, translate
from episeg.store.codec import decode
from episeg.store.tenants import collection_name, validate_tenant
from episeg.store.turns import TurnRows, turn_collection_name
from episeg.types import Episode

__all__ = ["Handles", "TenantCollections", "delete", "nearest", "update", "upsert", "write_turns"]

log = logging.getLogger("episeg.store.chroma")  # where the tenant-stamp errors were always logged

T = TypeVar("T")
Handles = tuple[Any, TurnRows]
"""The episode collection and the turn rows of one tenant."""


class TenantCollections:
    """The episode collection and turn rows of ``tenant``, opened when first needed.

    Raises
    ------
    TenantError
        For an invalid tenant id, or (here if the collections exist, else at
        :meth:`create`) when a collection is stamped with another tenant.
    """

    def __init__(self, tenant: str, *, client: Any, sync_threshold: int = 1) -> None:
        self.tenant = validate_tenant(tenant)
        self._client = client
        self._sync_threshold = sync_threshold
        self._lock = threading.Lock()
        self._pair: Handles | None = None
        self.find()  # an existing tenant is opened (and its stamp checked) now

    def find(self) -> Handles | None:
        """The tenant's (episode collection, turn rows), or ``None`` if it has none yet."""
        if self._pair is None:
            with self._lock:
                if self._pair is None and self._exists():
                    self._pair = self._open()
        return self._pair

    def create(self) -> Handles:
        """The tenant's (episode collection, turn rows), made if they do not exist."""
        if self._pair is None:
            with self._lock:
                if self._pair is None:
                    self._pair = self._open()
        return self._pair

    def _exists(self) -> bool:
        name = collection_name(self.tenant)
        with translate(f"looking up the collection of tenant {self.tenant!r}"):
            try:
                self._client.get_collection(name)
            except (NotFoundError, ValueError) as exc:
                if "could not connect" in str(exc).lower():
                    raise  # the server is down: translate says so
                return False
        return True

    def read(self, what: str, call: Callable[[Handles], T], empty: T) -> T:
        """``call(handles)`` under ``translate(what)``; ``empty`` if the tenant has no collections.

        Collections dropped under the read (the tenant erased meanwhile) read as
        the tenant is now: ``empty``, or once more on collections made since.
        """
        for attempt in (1, 2):
            found = self.find()
            if found is None:
                return empty
            try:
                with translate(what):
                    return call(found)
            except StoreError as exc:
                if attempt == 2 or not self._dropped(found, exc):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def write(self, what: str, call: Callable[[Handles], T]) -> T:
        """``call(handles)`` under ``translate(what)``, the collections made if needed.

        Collections dropped under the write (the tenant erased meanwhile) are
        made again and the write done once more: it came after the erasure.
        """
        for attempt in (1, 2):
            made = self.create()
            try:
                with translate(what):
                    return call(made)
            except StoreError as exc:
                if attempt == 2 or not self._dropped(made, exc):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def owns(self, id: str, metadata: Mapping[str, Any] | None) -> bool:
        """Whether a record read here is stamped with this tenant (a mismatch is logged)."""
        owner = (metadata or {}).get("tenant")
        if owner != self.tenant:
            message = "record %r in the collection of tenant %r is stamped %r; dropped"
            log.error(message, id, self.tenant, owner)
            return False
        return True

    def decode_rows(self, res: Mapping[str, Any] | None) -> list[Episode]:
        """The tenant's episodes of a read; a row whose vector is gone (deleted under the
        read) is skipped, as a read a moment later would not see it."""
        if res is None:  # the tenant has no collections
            return []
        embeddings = res.get("embeddings")
        out: list[Episode] = []
        for n, (id, meta) in enumerate(zip(res["ids"], res["metadatas"], strict=True)):
            if embeddings is not None and n >= len(embeddings):
                continue
            if self.owns(id, meta):
                out.append(decode(id, None, meta, None if embeddings is None else embeddings[n]))
        return out

    def _dropped(self, handles: Handles, exc: StoreError) -> bool:
        """Whether ``exc`` says these handles' collection is gone; if so, forget them."""
        if not isinstance(exc.__cause__, NotFoundError):
            return False
        with self._lock:
            if self._pair is handles:
                self._pair = None
        return True

    def _open(self) -> Handles:
        tenant, threshold = self.tenant, self._sync_threshold
        with translate(f"opening the collection of tenant {tenant!r}"):
            episodes = open_collection(
                self._client, collection_name(tenant), tenant, sync_threshold=threshold
            )
        owner = (episodes.metadata or {}).get("episeg_tenant")
        if owner != tenant:
            raise TenantError(f"collection {episodes.name} belongs to {owner!r}, not {tenant!r}")
        with translate(f"opening the turn collection of tenant {tenant!r}"):
            turns = open_collection(
                self._client, turn_collection_name(tenant), tenant, sync_threshold=threshold
            )
        return episodes, TurnRows(tenant, turns)


# What the store does with its handles, one Chroma call each (``partial`` binds the rows).
def upsert(rows: Mapping[str, Any], handles: Handles) -> None:
    handles[0].upsert(**rows)


def update(rows: Mapping[str, Any], handles: Handles) -> None:
    handles[0].update(**rows)


def delete(ids: list[str], handles: Handles) -> None:
    # turn rows first: if the episode row went first and the second call failed, a retry
    # would no longer find the episode (ownership is read from its row) nor its turn rows
    handles[1].delete_episodes(ids)
    handles[0].delete(ids=ids)


def nearest(vector: np.ndarray, n: int, handles: Handles) -> Any:
    return handles[0].query(
        query_embeddings=vector, n_results=n, include=[*READ_INCLUDE, "distances"]
    )


def write_turns(replaced: Mapping[str, int], episodes: list[Episode], handles: Handles) -> None:
    handles[1].trim(replaced)
    handles[1].upsert(episodes)
