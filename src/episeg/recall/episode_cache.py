"""Recently recalled episodes of one tenant, decoded, so a repeated hit skips the store read.

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
  :meth:`~EpisodeCache.clear` entries, so erased text does not stay in memory.

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

    def drop(self, ids: Sequence[str]) -> None:
        """Forget these episodes (deleted: their text must not stay in memory)."""
        with self._lock:
            for i in ids:
                self._entries.pop(i, None)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
