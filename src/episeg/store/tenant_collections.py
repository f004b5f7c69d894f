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
is seen at once. Once found or made, the handles are kept.

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

import threading
from typing import Any

from chromadb.errors import NotFoundError

from episeg.errors import TenantError
from episeg.store.chroma_io import open_collection, translate
from episeg.store.tenants import collection_name, validate_tenant
from episeg.store.turns import TurnRows, turn_collection_name

__all__ = ["TenantCollections"]


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
        self._pair: tuple[Any, TurnRows] | None = None
        self.find()  # an existing tenant is opened (and its stamp checked) now

    def find(self) -> tuple[Any, TurnRows] | None:
        """The tenant's (episode collection, turn rows), or ``None`` if it has none yet."""
        if self._pair is None:
            with self._lock:
                if self._pair is None and self._exists():
                    self._pair = self._open()
        return self._pair

    def create(self) -> tuple[Any, TurnRows]:
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

    def _open(self) -> tuple[Any, TurnRows]:
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
