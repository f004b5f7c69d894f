"""An in-memory store backend: every ``EpisodeStore`` method, no Chroma, for fast tests.

:class:`InMemoryBackend` implements :class:`~episeg.typing.StoreBackend` and its
stores every :class:`~episeg.typing.EpisodeStore` method with the Chroma store's
semantics (the shared conformance suite in ``tests/store/test_conformance.py``
runs against both). Each episode goes through the Chroma record codec, so what
comes back is exactly what Chroma would return. ``down = True`` makes every call
raise :class:`~episeg.errors.StoreUnavailableError` (an outage), and ``writes``
logs every episode id ``add`` received, repeats included.

>>> import numpy as np
>>> from episeg.types import Episode, Turn
>>> backend = InMemoryBackend()
>>> store = backend.store_for("alice")
>>> ep = Episode(id="e1", user="alice", session="s", summary="deploy", opened_at=0.0,
...              closed_at=1.0, turns=(Turn(actor="user", text="deploy", ts=0.0),),
...              embedding=np.array([1.0, 0.0], dtype=np.float32))
>>> store.add([ep])
>>> [(e.id, round(sim, 3)) for e, sim in store.query(np.array([1.0, 0.0]), k=1)]
[('e1', 1.0)]
>>> backend.tenants(), backend.store_for("bob").count()
(['alice'], 0)
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Sequence

import numpy as np

from episeg.errors import EpisodeNotFoundError, StoreError, StoreUnavailableError
from episeg.store.codec import decode, encode
from episeg.store.tenants import validate_tenant
from episeg.types import Episode

__all__ = ["InMemoryBackend", "InMemoryEpisodeStore"]


class InMemoryBackend:
    """Tenant-bound in-memory stores (implements :class:`~episeg.typing.StoreBackend`)."""

    def __init__(self) -> None:
        self.tenant_rows: dict[str, dict[str, Episode]] = {}
        """Per tenant: episode id -> stored episode, in first-write order."""
        self.writes: list[str] = []
        self.down = False

    def check(self) -> None:
        """Raise :class:`StoreUnavailableError` while :attr:`down` is set."""
        if self.down:
            raise StoreUnavailableError("in-memory store is down (simulated outage)")

    def store_for(self, tenant: str) -> InMemoryEpisodeStore:
        self.check()
        return InMemoryEpisodeStore(validate_tenant(tenant), self)

    def tenants(self) -> list[str]:
        self.check()
        return sorted(t for t, rows in self.tenant_rows.items() if rows)

    def heartbeat(self) -> int:
        self.check()
        return 1


class InMemoryEpisodeStore:
    """One tenant's episodes in an :class:`InMemoryBackend` (implements ``EpisodeStore``)."""

    def __init__(self, tenant: str, backend: InMemoryBackend) -> None:
        self._tenant = tenant
        self._backend = backend

    @property
    def tenant(self) -> str:
        return self._tenant

    @property
    def _rows(self) -> dict[str, Episode]:
        self._backend.check()
        return self._backend.tenant_rows.setdefault(self._tenant, {})

    def add(self, episodes: Sequence[Episode]) -> None:
        """Upsert by id; a stored id keeps its recall state (as in Chroma)."""
        rows = self._rows
        for episode in episodes:
            self._backend.writes.append(episode.id)
            rec = encode(episode, tenant=self._tenant)
            stored = decode(rec.id, rec.document, rec.metadata, rec.embedding)
            old = rows.get(episode.id)
            if old is not None:
                stored = _with_recall_state(stored, old)
            rows[episode.id] = stored

    def get(self, ids: Sequence[str]) -> builtins.list[Episode]:
        rows = self._rows
        return [rows[i] for i in dict.fromkeys(ids) if i in rows]

    def query(
        self, embedding: np.ndarray, k: int, *, include_archived: bool = False
    ) -> builtins.list[tuple[Episode, float]]:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        query = np.asarray(embedding, dtype=np.float32).ravel()
        hits = []
        for episode in self._rows.values():
            if episode.archived and not include_archived:
                continue
            vector = np.asarray(episode.embedding, dtype=np.float32).ravel()
            norm = float(np.linalg.norm(query) * np.linalg.norm(vector))
            hits.append((episode, float(query @ vector) / norm if norm else 0.0))
        hits.sort(key=lambda hit: -hit[1])
        return hits[:k]

    def list_episodes(
        self, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> builtins.list[Episode]:
        if limit < 1 or offset < 0:
            raise ValueError(f"need limit >= 1 and offset >= 0, got {limit}, {offset}")
        shown = [e for e in self._rows.values() if include_archived or not e.archived]
        return shown[offset : offset + limit]

    def count(self) -> int:
        return len(self._rows)

    def episode_ids(self) -> builtins.list[str]:
        return list(self._rows)

    def update(self, episodes: Sequence[Episode]) -> None:
        """Rewrite the recall state; an id this tenant does not hold raises ``StoreError``."""
        rows = self._rows
        missing = sorted({e.id for e in episodes} - set(rows))
        if missing:
            raise StoreError(f"update: episode(s) {missing} are not in tenant {self._tenant!r}")
        for episode in episodes:
            rows[episode.id] = _with_recall_state(rows[episode.id], episode)

    def revise(self, episodes: Sequence[Episode]) -> None:
        """Rewrite summary, salience, pin and user metadata; all or none (as in Chroma)."""
        rows = self._rows
        missing = sorted({e.id for e in episodes} - set(rows))
        if missing:
            raise EpisodeNotFoundError(
                f"tenant {self._tenant!r} has no episode(s) {missing}; nothing changed"
            )
        for episode in episodes:
            rows[episode.id] = dataclasses.replace(
                rows[episode.id],
                summary=episode.summary,
                salience=episode.salience,
                pinned=episode.pinned,
                metadata=dict(episode.metadata),
            )

    def delete(self, ids: Sequence[str]) -> None:
        rows = self._rows
        for i in ids:
            rows.pop(i, None)


def _with_recall_state(episode: Episode, state: Episode) -> Episode:
    """``episode`` with the recall state (count, last access, strength, archived) of ``state``."""
    return dataclasses.replace(
        episode,
        recall_count=state.recall_count,
        last_accessed=state.last_accessed,
        strength=state.strength,
        archived=state.archived,
    )
