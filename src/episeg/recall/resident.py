"""Fill a tenant's episode cache from its store, so recall serves its hits from memory.

Recall ends with a store read of the episodes it returns; at 10^5 episodes that
read is about half the cost of the nearest-turn query (docs/RESULTS.md). With
``recall.warm_cache`` on and ``recall.cache_episodes`` at least the tenant's
size, every episode is read once when the tenant's index is made and kept
decoded in :class:`~episeg.recall.episode_cache.EpisodeCache`, and recall reads
nothing more from Chroma than its turn query.

When the index is *built* from the store, the build's own pages fill the cache
(``IndexedStore`` passes them on, no second read). When a saved index is
*loaded* (:class:`~episeg.recall.persistent_store.PersistentIndexedStore`), nothing has
been read yet, so :func:`fill_cache` pages through the store. Each episode is kept
only if the card it gives is the card the index holds for it: an episode the
saved index describes differently is left to be read on demand, never served
from a stale copy. The caller holds the store's writers off meanwhile (the
index is made under the indexed store's lock).

>>> import tempfile
>>> from episeg.recall.index import TenantIndex
>>> from episeg.store import ChromaBackend
>>> from episeg.types import Episode, Turn
>>> import numpy as np
>>> store = ChromaBackend.persistent(tempfile.mkdtemp()).store_for("alice")
>>> store.add([Episode(id=f"e{i}", user="alice", session="s", summary="", opened_at=float(i),
...                    closed_at=float(i), turns=(Turn(actor="user", text="hi", ts=float(i)),),
...                    embedding=np.array([1.0, 0.0], np.float32)) for i in range(3)])
>>> index, cache = TenantIndex.build(store), EpisodeCache(capacity=2)
>>> fill_cache(store, index, cache), len(cache)
(2, 2)
"""

from __future__ import annotations

import logging

from episeg.recall.episode_cache import EpisodeCache
from episeg.recall.index import EpisodeCard, TenantIndex
from episeg.typing import EpisodeStore

__all__ = ["fill_cache"]

log = logging.getLogger(__name__)

_PAGE = 500


def fill_cache(store: EpisodeStore, index: TenantIndex, cache: EpisodeCache) -> int:
    """Read ``store``'s episodes into ``cache`` until it is full; returns how many it kept.

    Only episodes whose :meth:`EpisodeCard.of` equals ``index``'s card are kept
    (under that card object), so an entry is never staler than the index.
    """
    kept = skipped = offset = 0
    while len(cache) < cache.capacity:
        page = store.list_episodes(limit=_PAGE, offset=offset, include_archived=True)
        current = [ep for ep in page if index.cards.get(ep.id) == EpisodeCard.of(ep)]
        skipped += len(page) - len(current)
        kept += cache.put(current, index.cards)
        if len(page) < _PAGE:
            break
        offset += _PAGE
    if skipped:
        log.warning(
            "tenant %s: %d stored episode(s) differ from the saved recall index; "
            "they are read from the store when recalled",
            store.tenant,
            skipped,
        )
    if len(cache) >= cache.capacity and len(index) > cache.capacity:
        log.info(
            "tenant %s: episode cache full at %d of %d episodes (recall.cache_episodes)",
            store.tenant,
            cache.capacity,
            len(index),
        )
    return kept
