"""The in-memory store for fast in-process replay tests: ``episeg.testing.InMemoryBackend``.

It keeps every ``add`` call (``writes``) so a test can see a write that happened
twice, and stores each episode through the Chroma record codec, as the real
store does. The real Chroma store is used by the kill -9 and outage tests.
"""

from __future__ import annotations

from episeg.testing import InMemoryBackend, InMemoryEpisodeStore
from episeg.types import Episode


class MemBackend(InMemoryBackend):
    """:class:`InMemoryBackend` plus the flat ``rows`` view (id -> episode) these tests read."""

    @property
    def rows(self) -> dict[str, Episode]:
        return {i: e for rows in self.tenant_rows.values() for i, e in rows.items()}


MemStore = InMemoryEpisodeStore
