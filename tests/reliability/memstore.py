"""An in-memory stand-in for ``ChromaBackend`` for fast in-process replay tests.

It keeps every ``add`` call so a test can see a write that happened twice, and
stores each episode through the Chroma record codec, as the real store does.
The real Chroma store is used by the kill -9 and outage tests.
"""

from __future__ import annotations

from collections.abc import Sequence

from episeg.errors import StoreUnavailableError
from episeg.store.codec import decode, encode
from episeg.types import Episode


class MemStore:
    def __init__(self, tenant: str, backend: MemBackend) -> None:
        self.tenant, self._backend = tenant, backend

    def add(self, episodes: Sequence[Episode]) -> None:
        if self._backend.down:
            raise StoreUnavailableError("simulated outage")
        for episode in episodes:
            self._backend.writes.append(episode.id)
            rec = encode(episode, tenant=self.tenant)  # what Chroma keeps, exactly
            self._backend.rows[episode.id] = decode(
                rec.id, rec.document, rec.metadata, rec.embedding
            )

    def count(self) -> int:
        return sum(1 for e in self._backend.rows.values() if e.user == self.tenant)

    def list(
        self, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> list[Episode]:
        mine = [e for e in self._backend.rows.values() if e.user == self.tenant]
        return mine[offset : offset + limit]


class MemBackend:
    def __init__(self) -> None:
        self.rows: dict[str, Episode] = {}
        self.writes: list[str] = []
        self.down = False

    def store_for(self, tenant: str) -> MemStore:
        if self.down:
            raise StoreUnavailableError("simulated outage")
        return MemStore(tenant, self)
