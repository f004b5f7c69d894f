"""The turn vectors of one tenant's episodes, in a second Chroma collection.

The episode stays the unit of memory; its turns are indexed too, so recall
can find an episode by the turn that matches. Each tenant has its own turn
collection (``tu_`` + the same hash as its episode collection, stamped with
the tenant like every row in it), so a turn query can only ever see that
tenant's turns, as with episodes. Rows are derived data: they are written
and deleted together with their episode by
:class:`~episeg.store.chroma.ChromaEpisodeStore`, and an episode stored
without turn vectors simply has no rows (recall still finds it through its
episode vector and the lexical index).

Row id ``<episode id>:<position>``; metadata: ``tenant``, ``episode``,
``pos`` (0-based position in the episode), ``session``, ``ts`` (float,
seconds since the epoch; Chroma floats keep about 7 digits of a time, so
time-range filters are approximate and recall re-checks the range against
the episode); ``archived`` is not copied (recall checks the episode).

A query reads ids and distances only (fetching metadata would cost ~25 us a
row): the episode id and position come from the row id. A row's episode is
then looked up through the tenant's own catalogue and episode store, so a row
that does not belong there can never surface as a hit.

>>> from episeg.store.turns import turn_collection_name
>>> turn_collection_name("alice")[:3]
'tu_'
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from episeg.errors import StoreError, TenantError
from episeg.store.tenants import collection_name
from episeg.types import Episode

__all__ = ["TurnMatch", "TurnRows", "turn_collection_name", "turn_row_id"]

_CHROMA_MAX_INT = 2**31 - 1
_WRITE_BATCH = 5000
EXACT_MAX_ROWS = 50_000
"""The most turn rows a short answer of the vector index is re-scored over exactly."""
log = logging.getLogger(__name__)


def turn_row_id(episode_id: str, position: int) -> str:
    """The id of an episode's turn row: ``<episode id>:<position>``.

    >>> turn_row_id("e1", 2)
    'e1:2'
    """
    return f"{episode_id}:{position}"


def turn_collection_name(tenant: str) -> str:
    """The Chroma collection that holds ``tenant``'s turn vectors (validates first)."""
    return "tu_" + collection_name(tenant)[3:]


@dataclass(frozen=True, slots=True)
class TurnMatch:
    """One turn found by a vector query: its episode, position and cosine similarity."""

    episode_id: str
    position: int
    similarity: float


class TurnRows:
    """Reads and writes the turn rows of one tenant (a thin layer over a collection).

    Raises
    ------
    TenantError
        When the collection is stamped with another tenant.
    """

    def __init__(self, tenant: str, collection: Any) -> None:
        owner = (collection.metadata or {}).get("episeg_tenant")
        if owner != tenant:
            raise TenantError(f"collection {collection.name} belongs to {owner!r}, not {tenant!r}")
        self._tenant = tenant
        self._col = collection

    def upsert(self, episodes: Sequence[Episode]) -> None:
        """Write the turn rows of ``episodes`` that carry ``turn_embeddings``."""
        ids: list[str] = []
        metas: list[dict[str, Any]] = []
        vectors: list[np.ndarray] = []
        for ep in episodes:
            if ep.turn_embeddings is None:
                continue
            matrix = np.asarray(ep.turn_embeddings, dtype=np.float32)
            if matrix.ndim != 2 or matrix.shape[0] != len(ep.turns):
                raise StoreError(
                    f"episode {ep.id!r} has {len(ep.turns)} turns but turn_embeddings of "
                    f"shape {matrix.shape}"
                )
            if not np.all(np.isfinite(matrix)):
                raise StoreError(f"episode {ep.id!r} has non-finite turn embeddings")
            for pos, turn in enumerate(ep.turns):
                ids.append(turn_row_id(ep.id, pos))
                metas.append(
                    {
                        "tenant": self._tenant,
                        "episode": ep.id,
                        "pos": pos,
                        "session": ep.session,
                        "ts": float(turn.ts),
                    }
                )
                vectors.append(matrix[pos])
        for start in range(0, len(ids), _WRITE_BATCH):
            end = start + _WRITE_BATCH
            self._col.upsert(
                ids=ids[start:end],
                metadatas=metas[start:end],
                embeddings=np.stack(vectors[start:end]),
            )

    def trim(self, turn_counts: Mapping[str, int]) -> None:
        """Delete the rows of these episodes at positions ``>=`` their given turn count.

        For an episode replaced by a version with fewer turns: the rows past its
        end would stay searchable and make its rows disagree with its turns.
        Matched by metadata, so rows left by an earlier interrupted write go too.
        """
        by_count: dict[int, list[str]] = {}
        for episode_id, n in turn_counts.items():
            by_count.setdefault(max(int(n), 0), []).append(episode_id)
        for n, ids in sorted(by_count.items()):
            for start in range(0, len(ids), _WRITE_BATCH):
                self._col.delete(
                    where={
                        "$and": [
                            {"tenant": self._tenant},
                            {"episode": {"$in": ids[start : start + _WRITE_BATCH]}},
                            {"pos": {"$gte": n}},
                        ]
                    }
                )

    def delete_episodes(self, episode_ids: Sequence[str]) -> None:
        """Delete every turn row of these episodes."""
        ids = list(episode_ids)
        for start in range(0, len(ids), _WRITE_BATCH):  # SQLite: <= 32,766 variables a statement
            self._col.delete(where={"episode": {"$in": ids[start : start + _WRITE_BATCH]}})

    def count(self) -> int:
        return int(self._col.count())

    def vectors(self, episode_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The turn vectors of these episodes, one row per position (for export).

        An episode without rows, or with a gap in its positions, is left out.
        """
        unique = list(dict.fromkeys(episode_ids))
        rows: dict[str, dict[int, np.ndarray]] = {}
        for start in range(0, len(unique), _WRITE_BATCH):
            where = {"episode": {"$in": unique[start : start + _WRITE_BATCH]}}
            res = self._col.get(where=where, include=["embeddings"])
            for row_id, vector in zip(res["ids"], res["embeddings"], strict=True):
                place = _place(row_id)
                if place is not None:
                    rows.setdefault(place[0], {})[place[1]] = np.asarray(vector, np.float32)
        return {
            eid: np.stack([found[p] for p in range(len(found))])
            for eid, found in rows.items()
            if set(found) == set(range(len(found)))
        }

    def query(
        self, embedding: np.ndarray, k: int, *, where: Mapping[str, Any] | None = None
    ) -> list[TurnMatch]:
        """The ``k`` nearest turns, best first (optionally filtered by ``where``)."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        vector = np.asarray(embedding, dtype=np.float32).reshape(1, -1)
        res = self._col.query(
            query_embeddings=vector,
            n_results=min(k, _CHROMA_MAX_INT),
            where=dict(where) if where else None,
            include=["distances"],
        )
        out = _matches(res["ids"][0], [1.0 - float(d) for d in res["distances"][0]])
        if len(res["ids"][0]) < k:  # short: all there is, or rows the vector index lost
            return self._exact_if_short(vector[0], k, where, out)
        return out

    def _exact_if_short(
        self, vector: np.ndarray, k: int, where: Mapping[str, Any] | None, found: list[TurnMatch]
    ) -> list[TurnMatch]:
        """``found``, or the exact nearest rows when more rows match ``where`` than it holds.

        Chroma's vector index (HNSW) can answer short when it holds many identical
        vectors (a few hundred copies of "ok, thanks" or of one tool output): an
        exact match then drops out of the answer, and a ``where``-filtered query may
        return nothing. When the rows matching ``where`` outnumber the answer, they
        are scored exactly (cosine, as the collection's space), up to
        :data:`EXACT_MAX_ROWS` rows; beyond that the short answer stands, logged.
        """
        clause = dict(where) if where else None
        rows = (
            int(self._col.count())
            if clause is None
            else len(self._col.get(where=clause, include=[])["ids"])
        )
        if rows <= len(found):
            return found
        if rows > EXACT_MAX_ROWS:
            log.warning(
                "the turn index answered %d of %d matching rows; too many to score exactly",
                len(found),
                rows,
            )
            return found
        res = self._col.get(where=clause, include=["embeddings"])
        matrix = np.asarray(res["embeddings"], dtype=np.float32).reshape(len(res["ids"]), -1)
        norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(vector))
        cosines = np.divide(matrix @ vector, norms, out=np.zeros(len(norms)), where=norms > 0)
        order = np.argsort(-cosines, kind="stable")[:k].tolist()
        out = _matches([res["ids"][n] for n in order], [float(cosines[n]) for n in order])
        log.info("the turn index answered %d of %d rows: scored them exactly", len(found), rows)
        return out


def _place(row_id: object) -> tuple[str, int] | None:
    """``(episode id, position)`` of a row id made by :func:`turn_row_id`, else None.

    >>> _place("e1:2"), _place("stray")
    (('e1', 2), None)
    """
    episode_id, _, pos = str(row_id).rpartition(":")
    return (episode_id, int(pos)) if episode_id and pos.isdigit() else None


def _matches(row_ids: Sequence[object], similarities: Sequence[float]) -> list[TurnMatch]:
    """The rows as matches, in order (a row id not made by :func:`turn_row_id` is skipped)."""
    out = []
    for row_id, similarity in zip(row_ids, similarities, strict=True):
        place = _place(row_id)
        if place is not None:
            out.append(TurnMatch(place[0], place[1], similarity))
    return out
