"""Chroma-backed :class:`~episeg.typing.EpisodeStore`, one collection per tenant.

:class:`ChromaBackend` owns the client (embedded ``PersistentClient`` by
default, ``HttpClient`` against a ``chroma run`` server) and hands out
tenant-bound stores with :meth:`ChromaBackend.store_for`. A store can only
ever address its own tenant's collection (see :mod:`episeg.store.tenants`),
and every record it reads is checked against the tenant stamped into its
metadata: a mismatch is logged as an error and the record is dropped.

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
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import chromadb
import httpx
import numpy as np
from chromadb.config import Settings
from chromadb.errors import ChromaError, NotFoundError

from episeg.errors import StoreError, StoreUnavailableError, TenantError
from episeg.store.codec import RECALL_FIELDS, decode, encode, recall_metadata
from episeg.store.tenants import collection_name, validate_tenant
from episeg.store.turns import TurnMatch, TurnRows, turn_collection_name
from episeg.types import Episode

__all__ = ["ChromaBackend", "ChromaEpisodeStore"]

log = logging.getLogger(__name__)
_WRITE_BATCH = 5000
# limit/offset/n_results cross into Chroma's Rust core as 32-bit integers (OverflowError above)
_CHROMA_MAX_INT = 2**31 - 1
# The document (the transcript, for people browsing the collection) is derivable
# from the turns in the metadata, so reads skip it: ~20% faster queries.
_READ_INCLUDE: Any = ["metadatas", "embeddings"]
# sync_threshold=1: the vector index persists after every write, so Chroma purges its
# write-ahead log (table embeddings_queue, which holds each record's document and
# metadata) at once; with the default 1,000 a forgotten text stays in that log until
# 1,000 more writes (issue 12, forget). Costs ~40% per small write (measured 2026-12-03).
_HNSW: Any = {"hnsw": {"space": "cosine", "sync_threshold": 1}}


@contextmanager
def _translate(what: str) -> Iterator[None]:
    """Map chromadb/httpx failures to :class:`StoreUnavailableError` / :class:`StoreError`."""
    try:
        yield
    except (httpx.TransportError, ConnectionError, TimeoutError) as exc:
        raise StoreUnavailableError(f"Chroma store unreachable during {what}: {exc}") from exc
    except ChromaError as exc:
        raise StoreError(f"Chroma rejected {what}: {exc}") from exc
    except httpx.HTTPStatusError as exc:
        raise StoreError(f"Chroma server refused {what}: {exc}") from exc
    except ValueError as exc:
        if "could not connect" in str(exc).lower():
            raise StoreUnavailableError(f"Chroma store unreachable during {what}: {exc}") from exc
        raise StoreError(f"Chroma rejected {what}: {exc}") from exc


class ChromaBackend:
    """A Chroma client and the factory for tenant-bound stores.

    Use :meth:`persistent` (embedded, one process) or :meth:`http` (a
    ``chroma run`` server shared by many processes); the constructor takes an
    existing ``chromadb`` client.
    """

    def __init__(self, client: Any) -> None:
        self._client = client
        self.path: Path | None = None  # the folder of an embedded store (None: a server)

    @classmethod
    def persistent(cls, path: str | Path, *, allow_reset: bool = False) -> ChromaBackend:
        """Embedded ``chromadb.PersistentClient`` storing under ``path``."""
        settings = Settings(anonymized_telemetry=False, allow_reset=allow_reset)
        with _translate(f"opening {path}"):
            backend = cls(chromadb.PersistentClient(path=str(path), settings=settings))
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
    ) -> ChromaBackend:
        """``chromadb.HttpClient`` against a running ``chroma run`` server.

        Raises
        ------
        StoreUnavailableError
            If the server does not answer.
        """
        settings = Settings(anonymized_telemetry=False)
        with _translate(f"connecting to {host}:{port}"):
            client = chromadb.HttpClient(
                host=host, port=port, ssl=ssl, headers=dict(headers or {}), settings=settings
            )
        return cls(client)

    def heartbeat(self) -> int:
        """The server's heartbeat (nanoseconds); raises if the store is down."""
        with _translate("heartbeat"):
            return int(self._client.heartbeat())

    def store_for(self, tenant: str) -> ChromaEpisodeStore:
        """The store bound to ``tenant`` (its collection is created on first use)."""
        return ChromaEpisodeStore(tenant, client=self._client)

    def drop_tenant(self, tenant: str) -> bool:
        """Delete ``tenant``'s episode and turn collections (and their log); False if none.

        Raises
        ------
        TenantError
            For an invalid tenant id.
        """
        found = False
        for name in (collection_name(tenant), turn_collection_name(tenant)):
            with _translate(f"dropping the collections of tenant {tenant!r}"):
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
        """Every tenant with an episode collection here, sorted."""
        with _translate("list tenants"):
            collections = self._client.list_collections()
        found = set()
        for col in collections:
            owner = (col.metadata or {}).get("episeg_tenant")
            if isinstance(owner, str) and col.name == collection_name(owner):
                found.add(owner)
        return sorted(found)


class ChromaEpisodeStore:
    """One tenant's episodes in one Chroma collection (implements ``EpisodeStore``).

    Parameters
    ----------
    tenant
        The tenant id (see :func:`episeg.store.tenants.validate_tenant`).
    client
        A ``chromadb`` client; prefer :meth:`ChromaBackend.store_for`.

    Raises
    ------
    TenantError
        For an invalid tenant id, or when the collection belongs to another
        tenant (a hash collision or tampering).
    """

    def __init__(self, tenant: str, *, client: Any) -> None:
        self._tenant = validate_tenant(tenant)
        with _translate(f"opening the collection of tenant {tenant!r}"):
            self._col = client.get_or_create_collection(
                collection_name(tenant),
                embedding_function=None,
                configuration=_HNSW,
                metadata={"episeg_tenant": tenant},
            )
        owner = (self._col.metadata or {}).get("episeg_tenant")
        if owner != tenant:
            raise TenantError(f"collection {self._col.name} belongs to {owner!r}, not {tenant!r}")
        with _translate(f"opening the turn collection of tenant {tenant!r}"):
            turn_col = client.get_or_create_collection(
                turn_collection_name(tenant),
                embedding_function=None,
                configuration=_HNSW,
                metadata={"episeg_tenant": tenant},
            )
        self._turns = TurnRows(tenant, turn_col)

    @property
    def tenant(self) -> str:
        return self._tenant

    def add(self, episodes: Sequence[Episode]) -> None:
        """Upsert ``episodes`` by id: re-adding an id replaces it, never duplicates.

        Within one call a repeated id keeps its last occurrence. Re-adding a
        stored id keeps its stored recall state (count, last access,
        strength, archived), so replaying ingestion never undoes
        reinforcement; change that state with :meth:`update`.
        """
        latest = {ep.id: encode(ep, tenant=self._tenant) for ep in episodes}
        records = list(latest.values())
        for start in range(0, len(records), _WRITE_BATCH):
            chunk = records[start : start + _WRITE_BATCH]
            with _translate("add"):
                stored = self._col.get(ids=[r.id for r in chunk], include=["metadatas"])
            kept = {
                i: m
                for i, m in zip(stored["ids"], stored["metadatas"], strict=True)
                if self._owns(i, m)
            }
            for r in chunk:
                if r.id in kept:
                    r.metadata.pop("last_accessed", None)
                    r.metadata.update({f: kept[r.id][f] for f in RECALL_FIELDS if f in kept[r.id]})
            with _translate("add"):
                self._col.upsert(
                    ids=[r.id for r in chunk],
                    documents=[r.document for r in chunk],
                    metadatas=[r.metadata for r in chunk],
                    embeddings=np.stack([r.embedding for r in chunk]),
                )
        with _translate("add (turn vectors)"):
            self._turns.upsert(list({ep.id: ep for ep in episodes}.values()))

    def get(self, ids: Sequence[str]) -> builtins.list[Episode]:
        """This tenant's episodes with these ids, in the order asked; unknown ids are skipped."""
        if not ids:
            return []
        with _translate("get"):
            res = self._col.get(ids=list(dict.fromkeys(ids)), include=_READ_INCLUDE)
        found = {ep.id: ep for ep in self._decode_rows(res)}
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def query(
        self, embedding: np.ndarray, k: int, *, include_archived: bool = False
    ) -> builtins.list[tuple[Episode, float]]:
        """The ``k`` nearest episodes with their cosine similarity, best first.

        Archived episodes are excluded unless ``include_archived``. They are
        dropped after an unfiltered nearest-neighbour search (a Chroma
        ``where`` filter costs ~45x at 10^5 rows); when that leaves fewer
        than ``k``, the search is repeated with twice as many neighbours.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        vector = np.asarray(embedding, dtype=np.float32).reshape(1, -1)
        n = min(k if include_archived else k + 8, _CHROMA_MAX_INT)
        while True:
            with _translate("query"):
                res = self._col.query(
                    query_embeddings=vector, n_results=n, include=[*_READ_INCLUDE, "distances"]
                )
            ids = res["ids"][0]
            rows = {
                "ids": ids,
                "metadatas": res["metadatas"][0],
                "embeddings": res["embeddings"][0],
            }
            sims = {i: 1.0 - float(d) for i, d in zip(ids, res["distances"][0], strict=True)}
            hits = [
                (ep, sims[ep.id])
                for ep in self._decode_rows(rows)
                if include_archived or not ep.archived
            ]
            if len(hits) >= k or len(ids) < n or n == _CHROMA_MAX_INT:
                return hits[:k]
            n = min(n * 2, _CHROMA_MAX_INT)

    def list_episodes(
        self, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> builtins.list[Episode]:
        """A page of this tenant's episodes in storage order.

        ``limit`` and ``offset`` beyond Chroma's 32-bit range mean "all" and
        "past the end" (no collection is that large), not an overflow.
        """
        if limit < 1 or offset < 0:
            raise ValueError(f"need limit >= 1 and offset >= 0, got {limit}, {offset}")
        if offset > _CHROMA_MAX_INT:
            return []
        limit = min(limit, _CHROMA_MAX_INT)
        where = None if include_archived else {"archived": False}
        with _translate("list"):
            res = self._col.get(where=where, limit=limit, offset=offset, include=_READ_INCLUDE)
        return self._decode_rows(res)

    def count(self) -> int:
        """Number of stored episodes, archived ones included."""
        with _translate("count"):
            return int(self._col.count())

    def update(self, episodes: Sequence[Episode]) -> None:
        """Rewrite the recall metadata (count, last access, strength, archived).

        Raises
        ------
        StoreError
            If any id is not one of this tenant's episodes (nothing is written).
        """
        if not episodes:
            return
        self._require_owned([ep.id for ep in episodes], "update")
        latest = {ep.id: recall_metadata(ep) for ep in episodes}
        ids = list(latest)
        for start in range(0, len(ids), _WRITE_BATCH):  # Chroma's max batch is ~5,461 (F14)
            chunk = ids[start : start + _WRITE_BATCH]
            with _translate("update"):
                self._col.update(ids=chunk, metadatas=[latest[i] for i in chunk])

    def delete(self, ids: Sequence[str]) -> None:
        """Delete these episodes of this tenant; unknown ids are ignored."""
        if not ids:
            return
        with _translate("delete"):
            res = self._col.get(ids=list(dict.fromkeys(ids)), include=["metadatas"])
        owned = [i for i, m in zip(res["ids"], res["metadatas"], strict=True) if self._owns(i, m)]
        if owned:
            with _translate("delete"):
                self._col.delete(ids=owned)
                self._turns.delete_episodes(owned)

    def query_turns(
        self, embedding: np.ndarray, k: int, *, where: Mapping[str, Any] | None = None
    ) -> builtins.list[TurnMatch]:
        """The ``k`` turns nearest to ``embedding`` (see :mod:`episeg.store.turns`).

        Turns of archived episodes are included: the caller checks the episode.
        """
        with _translate("query (turns)"):
            return self._turns.query(embedding, k, where=where)

    def _require_owned(self, ids: Sequence[str], what: str) -> None:
        with _translate(what):
            res = self._col.get(ids=list(dict.fromkeys(ids)), include=["metadatas"])
        owned = {i for i, m in zip(res["ids"], res["metadatas"], strict=True) if self._owns(i, m)}
        missing = sorted(set(ids) - owned)
        if missing:
            raise StoreError(
                f"cannot {what} unknown episode id(s) {missing[:5]} for tenant {self._tenant!r}"
            )

    def _owns(self, id: str, metadata: Mapping[str, Any] | None) -> bool:
        owner = (metadata or {}).get("tenant")
        if owner != self._tenant:
            log.error(
                "record %r in the collection of tenant %r is stamped %r; dropped",
                id,
                self._tenant,
                owner,
            )
            return False
        return True

    def _decode_rows(self, res: Mapping[str, Any]) -> builtins.list[Episode]:
        embeddings = res.get("embeddings")
        out: builtins.list[Episode] = []
        for n, (id, meta) in enumerate(zip(res["ids"], res["metadatas"], strict=True)):
            if self._owns(id, meta):
                out.append(decode(id, None, meta, None if embeddings is None else embeddings[n]))
        return out
