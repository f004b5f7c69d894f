"""Decoded episodes of one tenant kept in memory, so a hit found here skips the store read.

Recall ends with a store ``get`` of the (at most ``k``) episodes it returns;
at 10^5 episodes that read and its decoding cost about half the nearest-turn
query itself (docs/RESULTS.md). An :class:`EpisodeCache` keeps the last
``capacity`` episodes read (least recently used out), each with the
:class:`~episeg.recall.index.EpisodeCard` the tenant's index held when the
read began. An entry is served only while the index still holds that very
card object, so it is never staler than the index recall ranks with:

* every write through :class:`~episeg.recall.index.IndexedStore` (``add``,
  ``update``, ``revise``, ``delete``) replaces or removes the episode's card
  after writing the store, and a rebuilt or reloaded index has new cards;
* the card is taken before the read, so a write racing with the read leaves
  an entry that is never served;
* ``delete`` and an index rebuild also :meth:`~EpisodeCache.drop` /
  :meth:`~EpisodeCache.clear` entries, so erased text does not stay in memory;
* a recall-state write (``update``, e.g. the reinforcement write-back) moves
  an entry to the new card with the state written (:meth:`~EpisodeCache.refresh`),
  so the episodes recalled most are not the ones read again.

Filled only by recall's reads, the cache serves repeated hits. Filled ahead
(:meth:`~EpisodeCache.put`, ``IndexedStore(warm_cache=True)``: every episode
read when the index is built or loaded) and large enough for the tenant, it
holds the tenant resident and recall never reads Chroma for its hits: at 10^5
episodes recall then costs ~1.4x the raw turn query instead of ~2.2-2.4x, for
a few KB per episode (docs/RESULTS.md).

A write by another process that does not change the tenant's episode count
(e.g. an update through a second replica) is not seen by the index either;
the deployment routes each tenant to one replica (docs/DEPLOYMENT.md).

>>> from episeg.recall.index import EpisodeCard
>>> from episeg.types import Episode
>>> ep = Episode(id="e1", user="u", session="s", turns=(), summary="", opened_at=0.0,
...              closed_at=0.0)
>>> reads = []
>>> def read(ids):
...     reads.append(list(ids))
...     return [ep] if "e1" in ids else []
>>> cards = {"e1": EpisodeCard.of(ep)}
>>> cache = EpisodeCache(capacity=8)
>>> [e.id for e in cache.get(["e1", "gone"], cards, read)], reads
(['e1'], [['e1', 'gone']])
>>> _ = cache.get(["e1"], cards, read); reads  # served from the cache
[['e1', 'gone']]
>>> cards["e1"] = EpisodeCard.of(ep)  # a write replaced the card: read again
>>> _ = cache.get(["e1"], cards, read); reads[-1]
['e1']
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from episeg.types import Episode

__all__ = ["EpisodeCache"]

Read = Callable[[Sequence[str]], list[Episode]]


class EpisodeCache:
    """Up to ``capacity`` decoded episodes, each valid while its index card is current."""

    def __init__(self, capacity: int = 256) -> None:
        if capacity < 0:
            raise ValueError(f"capacity must be >= 0, got {capacity}")
        self.capacity = capacity
        self._entries: OrderedDict[str, tuple[object, Episode]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, ids: Sequence[str], cards: Mapping[str, object], read: Read) -> list[Episode]:
        """The episodes with these ids, in the order asked (unknown ids skipped), as ``read``.

        ``cards`` is the tenant's current catalogue (``TenantIndex.cards``);
        ``read`` the store's ``get``, called once for the ids not served here.
        """
        wanted = list(dict.fromkeys(ids))
        taken = {i: cards.get(i) for i in wanted}  # before the read: see the module docstring
        found: dict[str, Episode] = {}
        with self._lock:
            for i in wanted:
                entry = self._entries.get(i)
                if entry is not None and entry[0] is taken[i]:
                    found[i] = entry[1]
                    self._entries.move_to_end(i)
        missing = [i for i in wanted if i not in found]
        if missing:
            fresh = read(missing)
            with self._lock:
                for ep in fresh:
                    found[ep.id] = ep
                    card = taken.get(ep.id)
                    if card is not None and self.capacity:
                        self._entries[ep.id] = (card, ep)
                        self._entries.move_to_end(ep.id)
                while len(self._entries) > self.capacity:
                    self._entries.popitem(last=False)
        return [found[i] for i in wanted if i in found]

    def put(self, episodes: Sequence[Episode], cards: Mapping[str, object]) -> int:
        """Keep ``episodes`` (just read from the store) under their current ``cards``.

        Fills the cache ahead of recall (``warm_cache``): only the free room is
        filled, nothing is evicted for these. The caller holds the writers off
        while it reads and puts (the indexed store's lock), so each episode is
        the stored one its card describes. Episodes without a card are
        skipped; returns how many were kept.
        """
        kept = 0
        with self._lock:
            for ep in episodes:
                card = cards.get(ep.id)
                if card is None or (ep.id not in self._entries and self._full()):
                    continue
                self._entries[ep.id] = (card, ep)
                self._entries.move_to_end(ep.id)
                kept += 1
        return kept

    def _full(self) -> bool:
        return len(self._entries) >= self.capacity

    def refresh(
        self,
        episodes: Sequence[Episode],
        before: Mapping[str, object],
        after: Mapping[str, object],
    ) -> None:
        """Carry entries across a recall-state write (``update``) instead of dropping them.

        ``before`` / ``after`` are the cards of these ids just before and just
        after the write. An entry still under its ``before`` card takes the
        state the store now holds (``recall_count``, ``last_accessed``,
        ``strength``, ``archived``: what the store's ``update`` writes, typed as
        its read decodes them) and the ``after`` card; any other entry stays as it
        is (unserved, its card is gone).
        """
        with self._lock:
            for ep in episodes:
                entry = self._entries.get(ep.id)
                old, new = before.get(ep.id), after.get(ep.id)
                if entry is None or old is None or new is None or entry[0] is not old:
                    continue
                last = ep.last_accessed
                self._entries[ep.id] = (
                    new,
                    replace(
                        entry[1],
                        recall_count=int(ep.recall_count),
                        last_accessed=None if last is None else float(last),
                        strength=float(ep.strength),
                        archived=bool(ep.archived),
                    ),
                )

    def drop(self, ids: Sequence[str]) -> None:
        """Forget these episodes (deleted: their text must not stay in memory)."""
        with self._lock:
            for i in ids:
                self._entries.pop(i, None)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
