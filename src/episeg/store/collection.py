"""One tenant's episodes in one Chroma collection: :class:`ChromaEpisodeStore`.

Made by :meth:`episeg.store.ChromaBackend.store_for`. Every record read is
checked against the tenant stamped into its metadata: a mismatch is logged
as an error and the record is dropped. A tenant's collections are made by its
first write, never by a read (:mod:`episeg.store.tenant_collections`): a
tenant with none reads as empty. Writes of recall state (``update``)
and of what a user edits (``revise``: summary, salience, pin, user metadata)
touch disjoint metadata keys, so neither undoes the other.

>>> import dataclasses, tempfile
>>> import numpy as np
>>> from episeg.store import ChromaBackend
>>> from episeg.types import Episode, Turn
>>> store = ChromaBackend.persistent(tempfile.mkdtemp()).store_for("alice")
>>> ep = Episode(id="e1", user="alice", session="s", summary="deploy",
...              turns=(Turn(actor="user", text="deploy v2", ts=0.0),),
...              opened_at=0.0, closed_at=1.0, embedding=np.array([1.0, 0.0], np.float32))
>>> store.add([ep])
>>> store.revise([dataclasses.replace(ep, summary="v2 to prod", pinned=True)])
>>> [(got.summary, got.pinned) for got in store.get(["e1"])]
[('v2 to prod', True)]
"""

from __future__ import annotations

import builtins
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from episeg.errors import ArgumentError, EpisodeNotFoundError, StoreError
from episeg.store.chroma_io import CHROMA_MAX_INT, READ_INCLUDE, vanished_retry
from episeg.store.codec import RECALL_FIELDS, decode, encode, recall_metadata, user_metadata
from episeg.store.tenant_collections import (
    Handles,
    TenantCollections,
    delete,
    nearest,
    update,
    upsert,
    write_turns,
)
from episeg.store.turns import TurnMatch
from episeg.types import Episode

__all__ = ["ChromaEpisodeStore"]

log = logging.getLogger(__name__)
_WRITE_BATCH = 5000  # Chroma's max batch is ~5,461 (F14)


class ChromaEpisodeStore:
    """One tenant's episodes in one Chroma collection (implements ``EpisodeStore``).

    Parameters
    ----------
    tenant
        The tenant id (see :func:`episeg.store.tenants.validate_tenant`).
    client
        A ``chromadb`` client; prefer :meth:`ChromaBackend.store_for`.
    sync_threshold
        Writes after which Chroma persists the vector index and purges its
        log (:class:`~episeg.config.StoreConfig`; set on existing collections).

    Raises
    ------
    TenantError
        For an invalid tenant id, or when a collection belongs to another tenant.
    """

    def __init__(self, tenant: str, *, client: Any, sync_threshold: int = 1) -> None:
        self._handles = TenantCollections(tenant, client=client, sync_threshold=sync_threshold)
        self._tenant = self._handles.tenant

    @property
    def tenant(self) -> str:
        return self._tenant

    def add(self, episodes: Sequence[Episode]) -> None:
        """Upsert ``episodes`` by id (see :meth:`add_merged`)."""
        self.add_merged(episodes)

    def add_merged(self, episodes: Sequence[Episode]) -> builtins.list[Episode]:
        """Upsert ``episodes`` by id: re-adding an id replaces it, never duplicates.

        Within one call a repeated id keeps its last occurrence. Re-adding a
        stored id keeps its stored recall state (count, last access,
        strength, archived), so replaying ingestion never undoes
        reinforcement (change it with :meth:`update`), and deletes the turn
        rows past the new version's last turn. Returns the episodes as
        written, one per id: a replaced one with the recall state kept (so
        :class:`~episeg.recall.index.IndexedStore`'s catalogue can match).
        """
        latest = {ep.id: ep for ep in episodes}
        records = [encode(ep, tenant=self._tenant) for ep in latest.values()]
        if not records:
            return []
        replaced: dict[str, int] = {}
        for start in range(0, len(records), _WRITE_BATCH):
            chunk = records[start : start + _WRITE_BATCH]
            kept = self._owned([r.id for r in chunk], "add")
            for r in chunk:
                if r.id in kept:
                    r.metadata.pop("last_accessed", None)
                    r.metadata.update({f: kept[r.id][f] for f in RECALL_FIELDS if f in kept[r.id]})
                    state = decode(r.id, None, r.metadata)  # what a read returns now
                    latest[r.id] = dataclasses.replace(
                        latest[r.id], **{f: getattr(state, f) for f in RECALL_FIELDS}
                    )
                    replaced[r.id] = len(latest[r.id].turns)
            rows = {
                "ids": [r.id for r in chunk],
                "documents": [r.document for r in chunk],
                "metadatas": [r.metadata for r in chunk],
                "embeddings": np.stack([r.embedding for r in chunk]),
            }  # a tenant's first write makes its collections
            self._handles.write("add", partial(upsert, rows))
        self._handles.write(
            "add (turn vectors)", partial(write_turns, replaced, [*latest.values()])
        )
        return list(latest.values())

    def get(self, ids: Sequence[str]) -> builtins.list[Episode]:
        """This tenant's episodes with these ids, in the order asked; unknown ids are skipped."""
        unique = list(dict.fromkeys(ids))
        decoded: dict[str, Episode] = {}
        for page in _pages(unique):  # one SQL statement holds at most 32,766 ids
            res = self._handles.read("get", partial(_read_rows, page), None)
            decoded.update((ep.id, ep) for ep in self._handles.decode_rows(res))
        return [decoded[i] for i in unique if i in decoded]

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
            raise ArgumentError(f"k must be >= 1, got {k}")
        vector = np.asarray(embedding, dtype=np.float32).reshape(1, -1)
        n = min(k if include_archived else k + 8, CHROMA_MAX_INT)
        while True:
            res = self._handles.read("query", partial(nearest, vector, n), None)
            if res is None:
                return []
            ids = res["ids"][0]
            rows = {
                "ids": ids,
                "metadatas": res["metadatas"][0],
                "embeddings": res["embeddings"][0],
            }
            sims = {i: 1.0 - float(d) for i, d in zip(ids, res["distances"][0], strict=True)}
            hits = [
                (ep, sims[ep.id])
                for ep in self._handles.decode_rows(rows)
                if include_archived or not ep.archived
            ]
            if len(hits) >= k or len(ids) < n or n == CHROMA_MAX_INT:
                return hits[:k]
            n = min(n * 2, CHROMA_MAX_INT)

    def list_episodes(
        self, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> builtins.list[Episode]:
        """A page of this tenant's episodes in storage order.

        ``limit`` and ``offset`` beyond Chroma's 32-bit range mean "all" and
        "past the end" (no collection is that large), not an overflow.
        """
        if limit < 1 or offset < 0:
            raise ArgumentError(f"need limit >= 1 and offset >= 0, got {limit}, {offset}")
        if offset > CHROMA_MAX_INT:
            return []
        page = {"limit": min(limit, CHROMA_MAX_INT), "offset": offset, "include": READ_INCLUDE}
        where = None if include_archived else {"archived": False}
        res = self._handles.read(
            "list", lambda h: vanished_retry(lambda: h[0].get(where=where, **page)), None
        )
        return self._handles.decode_rows(res)

    def count(self) -> int:
        """Number of stored episodes, archived ones included."""
        return int(self._handles.read("count", lambda h: h[0].count(), 0))

    def episode_ids(self) -> builtins.list[str]:
        """The ids of every stored episode, archived ones too, in storage order."""
        res = self._handles.read("list ids", lambda h: h[0].get(include=[]), None)
        return [] if res is None else list(res["ids"])

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
            metas = [latest[i] for i in chunk]
            self._handles.write("update", partial(update, {"ids": chunk, "metadatas": metas}))

    def revise(self, episodes: Sequence[Episode]) -> None:
        """Rewrite what a user may edit: summary, salience, pin and user metadata.

        One record update per episode, so each episode takes all of its
        fields or none; ``meta.`` keys no longer in ``episode.metadata`` are
        removed. Recall state and turns are not touched.

        Raises
        ------
        EpisodeNotFoundError
            If any id is not one of this tenant's episodes (nothing is written).
        """
        if not episodes:
            return
        latest = {ep.id: ep for ep in episodes}
        stored = self._owned(list(latest), "revise")
        missing = sorted(set(latest) - set(stored))
        if missing:
            raise EpisodeNotFoundError(
                f"tenant {self._tenant!r} has no episode(s) {missing[:5]}; nothing changed"
            )
        ids = list(latest)
        metas = [user_metadata(latest[i], stored[i]) for i in ids]
        for at in range(0, len(ids), _WRITE_BATCH):
            chunk = {"ids": ids[at : at + _WRITE_BATCH], "metadatas": metas[at : at + _WRITE_BATCH]}
            self._handles.write("revise", partial(update, chunk))

    def delete(self, ids: Sequence[str]) -> None:
        """Delete these episodes of this tenant; unknown ids are ignored."""
        if not ids:
            return
        owned = list(self._owned(ids, "delete"))
        for page in _pages(owned):  # the collections exist (they held these ids)
            self._handles.write("delete", partial(delete, page))

    def query_turns(
        self, embedding: np.ndarray, k: int, *, where: Mapping[str, Any] | None = None
    ) -> builtins.list[TurnMatch]:
        """The ``k`` turns nearest to ``embedding`` (see :mod:`episeg.store.turns`).

        Turns of archived episodes are included: the caller checks the episode.
        """
        return self._handles.read(
            "query (turns)", lambda h: h[1].query(embedding, k, where=where), []
        )

    def turn_vectors(self, episode_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored turn vectors of these episodes, rows by position (for export)."""
        return self._handles.read("get (turn vectors)", lambda h: h[1].vectors(episode_ids), {})

    def _owned(self, ids: Sequence[str], what: str) -> dict[str, Mapping[str, Any]]:
        """The stored metadata of those of ``ids`` that are this tenant's episodes."""
        owned: dict[str, Mapping[str, Any]] = {}
        for page in _pages(list(dict.fromkeys(ids))):
            res = self._handles.read(what, partial(_read_metadata, page), None)
            if res is not None:
                owned.update(
                    (i, m)
                    for i, m in zip(res["ids"], res["metadatas"], strict=True)
                    if self._handles.owns(i, m)
                )
        return owned

    def _require_owned(self, ids: Sequence[str], what: str) -> None:
        missing = sorted(set(ids) - set(self._owned(ids, what)))
        if missing:
            raise StoreError(
                f"cannot {what} unknown episode id(s) {missing[:5]} for tenant {self._tenant!r}"
            )


def _pages(ids: builtins.list[str]) -> builtins.list[builtins.list[str]]:
    """``ids`` in pages of :data:`_WRITE_BATCH`: Chroma binds every id of a call as one SQL
    variable, and SQLite refuses a statement with more than 32,766 (a tenant that large
    could not be erased, F107)."""
    return [ids[at : at + _WRITE_BATCH] for at in range(0, len(ids), _WRITE_BATCH)]


def _read_rows(ids: builtins.list[str], handles: Handles) -> Any:
    return vanished_retry(lambda: handles[0].get(ids=ids, include=READ_INCLUDE))


def _read_metadata(ids: builtins.list[str], handles: Handles) -> Any:
    return handles[0].get(ids=ids, include=["metadatas"])
