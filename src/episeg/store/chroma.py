"""The Chroma backend: one client, tenant-bound stores, one collection pair per tenant.

:class:`ChromaBackend` owns the client (embedded ``PersistentClient`` by
default, ``HttpClient`` against a ``chroma run`` server) and hands out
tenant-bound stores (:class:`~episeg.store.collection.ChromaEpisodeStore`)
with :meth:`ChromaBackend.store_for`. A store can only ever address its own
tenant's collection (see :mod:`episeg.store.tenants`), and every record it
reads is checked against the tenant stamped into its metadata.

Embeddings are always passed explicitly; collections are created with
``embedding_function=None`` and cosine space. Telemetry is off.

>>> import tempfile
>>> import numpy as np
>>> from episeg.store import ChromaBackend
>>> from episeg.types import Episode, Turn
>>> backend = ChromaBackend.persistent(tempfile.mkdtemp())
>>> store = backend.store_for("alice")
>>> ep = Episode(id="e1", user="alice", session="s", summary="deploy",
...              turns=(Turn(actor="user", text="deploy v2", ts=0.0),),
...              opened_at=0.0, closed_at=1.0, embedding=np.array([1.0, 0.0], np.float32))
>>> store.add([ep]); store.add([ep]); store.count()
1
>>> [(e.id, round(sim, 3)) for e, sim in store.query(np.array([1.0, 0.0]), k=5)]
[('e1', 1.0)]
>>> backend.store_for("bob").get(["e1"])
[]
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import chromadb
from chromadb.api.shared_system_client import SharedSystemClient
from chromadb.config import Settings
from chromadb.errors import NotFoundError

from episeg.config.memory import StoreConfig
from episeg.store.chroma_io import translate
from episeg.store.collection import ChromaEpisodeStore
from episeg.store.scrub import scrub_store
from episeg.store.tenants import collection_name
from episeg.store.turns import turn_collection_name

__all__ = ["ChromaBackend", "ChromaEpisodeStore"]


@cache
def _settings(allow_reset: bool) -> Settings:
    """Chroma's settings for an embedded client, built once (pydantic: ~8 ms each)."""
    return Settings(anonymized_telemetry=False, allow_reset=allow_reset)


class ChromaBackend:
    """A Chroma client and the factory for tenant-bound stores.

    Use :meth:`persistent` (embedded, one process) or :meth:`http` (a
    ``chroma run`` server shared by many processes); the constructor takes an
    existing ``chromadb`` client. ``sync_threshold`` is how many writes a
    collection takes before Chroma persists its vector index and purges its
    log (:class:`~episeg.config.StoreConfig`: 1, the default, purges an erased
    text at once and rewrites the index on every write).

    Raises
    ------
    ConfigError
        If ``sync_threshold`` is not a positive integer.
    """

    def __init__(self, client: Any, *, sync_threshold: int = 1) -> None:
        self._client = client
        self.sync_threshold = StoreConfig(sync_threshold=sync_threshold).sync_threshold
        self.path: Path | None = None  # the folder of an embedded store (None: a server)

    @classmethod
    def persistent(
        cls, path: str | Path, *, allow_reset: bool = False, sync_threshold: int = 1
    ) -> ChromaBackend:
        """Embedded ``chromadb.PersistentClient`` storing under ``path``.

        Unless this process has ``path`` open already, the unused slots of its
        vector files and the vectors of deleted slots are zeroed first
        (:mod:`episeg.store.scrub`): Chroma writes unused slots as the heap
        left them, which can hold erased text, and only marks a deleted vector.
        """
        StoreConfig(sync_threshold=sync_threshold)  # a bad value fails before opening anything
        with _opening, translate(f"opening {path}"):
            if not _open_here(Path(path)):
                scrub_store(Path(path))
            client = chromadb.PersistentClient(path=str(path), settings=_settings(allow_reset))
        backend = cls(client, sync_threshold=sync_threshold)
        backend.path = Path(path)
        return backend

    @classmethod
    def http(
        cls,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        ssl: bool = False,
        headers: Mapping[str, str] | None = None,
        sync_threshold: int = 1,
    ) -> ChromaBackend:
        """``chromadb.HttpClient`` against a running ``chroma run`` server.

        Raises
        ------
        StoreUnavailableError
            If the server does not answer.
        """
        StoreConfig(sync_threshold=sync_threshold)
        settings = Settings(anonymized_telemetry=False)
        with translate(f"connecting to {host}:{port}"):
            client = chromadb.HttpClient(
                host=host, port=port, ssl=ssl, headers=dict(headers or {}), settings=settings
            )
        return cls(client, sync_threshold=sync_threshold)

    def heartbeat(self) -> int:
        """The server's heartbeat (nanoseconds); raises if the store is down."""
        with translate("heartbeat"):
            return int(self._client.heartbeat())

    def store_for(self, tenant: str) -> ChromaEpisodeStore:
        """The store bound to ``tenant`` (its collections are made by its first write)."""
        return ChromaEpisodeStore(tenant, client=self._client, sync_threshold=self.sync_threshold)

    def drop_tenant(self, tenant: str) -> bool:
        """Delete ``tenant``'s episode and turn collections (and their log); False if none.

        Raises
        ------
        TenantError
            For an invalid tenant id.
        """
        found = False
        for name in (collection_name(tenant), turn_collection_name(tenant)):
            with translate(f"dropping the collections of tenant {tenant!r}"):
                try:
                    col = self._client.get_collection(name)
                except (NotFoundError, ValueError):
                    continue
                if (col.metadata or {}).get("episeg_tenant") != tenant:
                    continue  # never another tenant's collection
                self._client.delete_collection(name)
                found = True
        return found

    def tenants(self) -> builtins.list[str]:
        """Every tenant with at least one stored episode here, sorted.

        Reads never make a collection (:mod:`episeg.store.tenant_collections`),
        but a tenant whose every episode was deleted keeps its empty one; such a
        tenant is not listed (one ``count`` per collection).
        """
        with translate("list tenants"):
            collections = self._client.list_collections()
            found = set()
            for col in collections:
                owner = (col.metadata or {}).get("episeg_tenant")
                if isinstance(owner, str) and col.name == collection_name(owner) and col.count():
                    found.add(owner)
        return sorted(found)


_opening = threading.Lock()  # the open-here check, the scrub and the client: one at a time


def _open_here(path: Path) -> bool:
    """Whether a Chroma client of this process has the embedded store at ``path`` open.

    ``True`` also when chromadb no longer keeps its clients where this looks
    (the scrub is then skipped rather than risked under an open store).
    """
    systems = getattr(SharedSystemClient, "_identifier_to_system", None)
    if not isinstance(systems, dict):
        return True
    target = path.resolve()
    return any(Path(key).resolve() == target for key in list(systems) if key)
