"""A tenant's indexed store whose recall index is kept on disk between runs.

:class:`PersistentIndexedStore` is :class:`~episeg.recall.index.IndexedStore`
with its index loaded from, and written through to, an
:class:`~episeg.recall.snapshot.IndexSnapshot` (see that module for the files
and when a saved index is trusted).

>>> import tempfile
>>> from pathlib import Path
>>> from episeg.testing import InMemoryBackend
>>> store = PersistentIndexedStore(InMemoryBackend().store_for("u"), Path(tempfile.mkdtemp()))
>>> len(store.index)
0
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from episeg.recall.index import IndexedStore, TenantIndex
from episeg.recall.resident import fill_cache
from episeg.recall.snapshot import IndexSnapshot, PersistentIndex
from episeg.types import Episode
from episeg.typing import EpisodeStore

__all__ = ["PersistentIndexedStore"]


class PersistentIndexedStore(IndexedStore):
    """An :class:`IndexedStore` whose index lives in ``folder`` between runs.

    On first use the snapshot is loaded if it holds as many episodes as the
    store; otherwise the index is rebuilt from the store and saved. With
    ``warm_cache`` the episode cache is filled either way (:mod:`.resident`).
    """

    def __init__(self, store: EpisodeStore, folder: Path, **kwargs: Any) -> None:
        super().__init__(store, **kwargs)
        self.snapshot = IndexSnapshot(folder)

    def _fresh_index(self, count: int) -> TenantIndex:
        index = PersistentIndex(self.snapshot)
        index.quiet = True
        if self.snapshot.load(into=index) is None or len(index) != count:
            index = PersistentIndex(self.snapshot)
            index.quiet = True
            TenantIndex.build(
                self.inner, into=index, on_page=self._keep if self.warm_cache else None
            )
            self.snapshot.save(index)
        elif self.warm_cache:  # loaded: nothing read yet
            fill_cache(self.inner, index, self.recent)
        index.quiet = False
        return index

    # Every write first loads the index, so the snapshot sees it: a write to an
    # unloaded index would leave a stale snapshot whose count still matches
    # (an update or an erasure does not change the count).
    def add(self, episodes: Sequence[Episode]) -> None:
        if any(ep.id in self.index.cards for ep in episodes):  # replacing: the count stays
            with self.snapshot.writing():
                super().add(episodes)
        else:
            super().add(episodes)

    def update(self, episodes: Sequence[Episode]) -> None:
        _ = self.index
        with self.snapshot.writing():
            super().update(episodes)

    def delete(self, ids: Sequence[str]) -> None:
        _ = self.index
        super().delete(ids)

    def revise(self, episodes: Sequence[Episode]) -> None:
        _ = self.index
        with self.snapshot.writing():
            super().revise(episodes)
