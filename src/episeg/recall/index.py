"""What recall keeps in memory per tenant: a catalogue of episodes and two BM25 indexes.

:class:`TenantIndex` is built from one tenant-bound store (every episode, archived ones
included, read page by page) and kept current by the writes through :class:`IndexedStore`.
It holds, per episode, what ranking and filtering need without reading the store (session,
times, turn count, salience, recall state, user metadata) and two lexical indexes
(:class:`~episeg.recall.lexical.LexicalIndex`): one over single turns, keyed
``(episode id, position)``, and one over whole episodes, keyed by id.

Freshness: writes through :class:`IndexedStore` update the index at once; writes by anyone else
(another process on a shared ``chroma run`` server) are noticed when the store's episode count
no longer matches, and the index is rebuilt from the store. Tenant isolation holds by
construction: the index is filled only from its own tenant's store, and recall reads every
returned episode through that same store (or its cache, ``recent``).

>>> import tempfile, numpy as np
>>> from episeg.store import ChromaBackend
>>> from episeg.types import Episode, Turn
>>> store = IndexedStore(ChromaBackend.persistent(tempfile.mkdtemp()).store_for("alice"))
>>> ep = Episode(id="e1", user="alice", session="s", summary="", opened_at=0.0,
...              closed_at=0.0, turns=(Turn(actor="user", text="deploy v2 to prod", ts=0.0),),
...              embedding=np.array([1.0, 0.0], np.float32))
>>> store.add([ep])
>>> [key for key, _ in store.index.turns.top("deploy", k=3)], len(store.index)
([('e1', 0)], 1)
"""

from __future__ import annotations

import builtins
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from episeg.errors import StoreError
from episeg.recall.card import EpisodeCard, with_state
from episeg.recall.episode_cache import EpisodeCache
from episeg.recall.tenant_index import TenantIndex
from episeg.types import Episode
from episeg.typing import EpisodeStore

__all__ = ["EpisodeCard", "IndexedStore", "TenantIndex"]

log = logging.getLogger(__name__)


class IndexedStore:
    """A tenant-bound store whose writes also keep a :class:`TenantIndex` current.

    Implements :class:`~episeg.typing.EpisodeStore` by delegation; ``add`` fills missing turn
    vectors with ``embed_turns`` (when given) so the store's turn index holds every turn.
    Writes by others are noticed through the store's count, read at most every
    ``check_interval`` seconds. ``recent`` caches up to ``cache_episodes`` decoded episodes
    for recall (see its module); ``warm_cache`` fills it whenever the index is built or loaded.
    """

    def __init__(
        self,
        store: EpisodeStore,
        *,
        embed_turns: Callable[[Sequence[str]], np.ndarray] | None = None,
        check_interval: float = 1.0,
        cache_episodes: int = 256,
        warm_cache: bool = False,
    ) -> None:
        self._store = store
        self._embed_turns = embed_turns
        self._check_interval = check_interval
        self._checked_at = -math.inf
        self._index: TenantIndex | None = None
        self._known_count = -1
        self._lock = threading.RLock()
        self.recent = EpisodeCache(cache_episodes)
        self.warm_cache = warm_cache

    @property
    def tenant(self) -> str:
        return self._store.tenant

    @property
    def inner(self) -> EpisodeStore:
        """The wrapped store."""
        return self._store

    @property
    def index(self) -> TenantIndex:
        """The tenant's index, (re)built from the store when it is missing or stale."""
        with self._lock:
            now = time.monotonic()
            if self._index is not None and now - self._checked_at < self._check_interval:
                return self._index
            count = self._store.count()
            self._checked_at = now
            if self._index is None or count != self._known_count:
                self.recent.clear()
                self._index = self._fresh_index(count)
                self._known_count = count
            return self._index

    def _fresh_index(self, count: int) -> TenantIndex:
        """A new index of everything in the store (which holds ``count`` episodes)."""
        return TenantIndex.build(self._store, on_page=self._keep if self.warm_cache else None)

    def _keep(self, index: TenantIndex, page: builtins.list[Episode]) -> None:
        """Warm ``recent`` with a page the index build read anyway (under ``_lock``)."""
        if len(self.recent) < self.recent.capacity:
            self.recent.put(page, index.cards)

    def add(self, episodes: Sequence[Episode]) -> None:
        """The store's ``add``; a re-added id's card keeps the recall state the store kept."""
        filled = [self._with_turn_vectors(ep) for ep in episodes]
        with self._lock:
            add_merged = getattr(self._store, "add_merged", None)  # tells what it kept
            if add_merged is not None:
                filled = add_merged(filled)
            else:  # the store's rule (keep a stored id's recall state), from the cards
                self._store.add(filled)
                cards = {} if self._index is None else self._index.cards
                filled = [with_state(ep, cards.get(ep.id)) for ep in filled]
            if self._index is not None:
                new = {ep.id for ep in filled} - set(self._index.cards)
                self._index.add(filled)
                self._known_count += len(new)
                if self.warm_cache:
                    self._keep_added([ep.id for ep in filled], self._index.cards)

    def _keep_added(self, ids: builtins.list[str], cards: dict[str, EpisodeCard]) -> None:
        """Resident: keep the stored copies of just-added episodes (read back, exact)."""
        try:
            self.recent.put(self._store.get(ids), cards)
        except StoreError as exc:  # the write stands; these are read when recalled
            log.warning("tenant %s: added episodes not cached (%s)", self.tenant, exc)

    def get(self, ids: Sequence[str]) -> builtins.list[Episode]:
        return self._store.get(ids)

    def query(self, embedding: np.ndarray, k: int) -> builtins.list[tuple[Episode, float]]:
        return self._store.query(embedding, k)

    def query_turns(self, embedding: np.ndarray, k: int, *, where: Any = None) -> Any:
        """The wrapped store's turn query, or ``None`` if it has no turn index."""
        query_turns = getattr(self._store, "query_turns", None)
        return None if query_turns is None else query_turns(embedding, k, where=where)

    def list_episodes(
        self, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> builtins.list[Episode]:
        return self._store.list_episodes(
            limit=limit, offset=offset, include_archived=include_archived
        )

    def count(self) -> int:
        return self._store.count()

    def episode_ids(self) -> builtins.list[str]:
        return self._store.episode_ids()

    def update(self, episodes: Sequence[Episode]) -> None:
        with self._lock:
            self._store.update(episodes)
            if self._index is not None:
                cards = self._index.cards
                before = {ep.id: cards.get(ep.id) for ep in episodes}
                self._index.update_state(episodes)
                self.recent.refresh(episodes, before, cards)

    def revise(self, episodes: Sequence[Episode]) -> None:
        """The store's ``revise`` (a user's edit); edited episodes are indexed again."""
        with self._lock:
            self._store.revise(episodes)
            self.recent.drop([ep.id for ep in episodes])
            if self._index is not None:  # recall state is not revised: cards keep theirs
                self._index.revise_cards(episodes)

    def delete(self, ids: Sequence[str]) -> None:
        with self._lock:
            self._store.delete(ids)
            self.recent.drop(ids)
            if self._index is not None:
                before = len(self._index)
                self._index.remove(ids)
                self._known_count -= before - len(self._index)

    def _with_turn_vectors(self, ep: Episode) -> Episode:
        if ep.turn_embeddings is not None or self._embed_turns is None or not ep.turns:
            return ep
        vectors = np.asarray(self._embed_turns([t.text for t in ep.turns]), dtype=np.float32)
        return replace(ep, turn_embeddings=vectors)
