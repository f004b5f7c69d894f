"""The read path of :class:`~episeg.memory.Memory`: per-tenant stores, recall, reinforcement.

:class:`MemoryRecall` is the part of the facade that reads: one
:class:`~episeg.recall.index.IndexedStore` and one
:class:`~episeg.recall.hierarchical.HierarchicalRecaller` per tenant, built
on first use and cached (:meth:`MemoryRecall._drop_tenant_cache` forgets them
after an erasure). It is a mixin: ``Memory`` builds the parts it declares.

>>> import tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None,
...              scorer=None)
>>> _ = mem.observe(Turn(actor="user", text="water the ferns", ts=1.0, user="carol"))
>>> stored = mem.flush()
>>> [e.summary for e in mem.episodes("carol")], mem.store("carol").tenant
(['water the ferns'], 'carol')
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from episeg.config import EpisegConfig
from episeg.errors import RecallArgumentError
from episeg.recall.arguments import check_ids, check_listing, check_recall_arguments
from episeg.recall.forgetting import MaintenanceReport, maintain
from episeg.recall.hierarchical import Expand, HierarchicalRecaller, RecallHit
from episeg.recall.index import IndexedStore
from episeg.recall.open_corpus import OpenCorpus, OpenVersion
from episeg.recall.persistent_store import PersistentIndexedStore
from episeg.store.chroma_io import rebuilt_retry
from episeg.store.tenants import collection_name, validate_tenant
from episeg.store.usermeta import MetaScalar, validate_metadata
from episeg.types import Episode
from episeg.typing import Embedder, ScoredEpisode, StoreBackend

__all__ = ["MemoryRecall"]

_T = TypeVar("_T")


class MemoryRecall:
    """Stores, recall, reinforcement and maintenance: the reading half of ``Memory``."""

    config: EpisegConfig
    embedder: Embedder
    backend: StoreBackend
    path: Path
    _clock: Callable[[], float]
    _lock: threading.RLock
    _stores: dict[str, IndexedStore]
    _recallers: dict[str, HierarchicalRecaller]
    _open_corpora: dict[str, tuple[OpenVersion, OpenCorpus]]
    _drops: dict[str, int]  # per tenant: how many times its cached parts were dropped

    if TYPE_CHECKING:  # provided by OpenRecall (durability.memory_open) and MemoryWrites

        def rebuild_store(self, user: str) -> int: ...

        def tenant_lock(self, user: str) -> threading.RLock: ...

        def _with_open(
            self,
            user: str,
            query: str,
            vector: np.ndarray,
            hits: list[RecallHit],
            k: int,
            **options: Any,
        ) -> list[RecallHit]: ...

        def _open_corpus(self, tenant: str) -> Any: ...

    def store(self, user: str) -> IndexedStore:
        """The store bound to ``user``'s tenant (created on first use).

        Writes through it also keep recall's lexical index and catalogue current.
        """
        tenant = validate_tenant(user)
        while True:
            with self._lock:
                found = self._stores.get(tenant)
                generation = self._drops.get(tenant, 0)
            if found is not None:
                return found
            # built outside the lock: a slow store server delays this tenant only
            made = PersistentIndexedStore(  # the index is kept on disk between runs
                self.backend.store_for(tenant),
                self.path / "recall" / collection_name(tenant),
                embed_turns=self.embedder.embed,
                cache_episodes=self.config.recall.cache_episodes,
                warm_cache=self.config.recall.warm_cache,
            )
            with self._lock:  # an erasure dropped the tenant meanwhile: its index may be stale
                if self._drops.get(tenant, 0) == generation:
                    return self._stores.setdefault(tenant, made)

    def episodes(
        self, user: str, *, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> list[Episode]:
        """``user``'s stored episodes in the store's listing order.

        Raises
        ------
        RecallArgumentError
            ``limit`` is not an integer >= 1 or ``offset`` not one >= 0.
        """
        check_listing(limit, offset)
        return self._healing(
            user,
            lambda: self.store(user).list_episodes(
                limit=limit, offset=offset, include_archived=include_archived
            ),
        )

    def _healing(self, user: str, read: Callable[[], _T]) -> _T:
        """``read()``; if Chroma tore ``user``'s vector segment, rebuild it and read again."""
        return rebuilt_retry(read, lambda: self.rebuild_store(user), user)

    def recall(
        self,
        user: str,
        query: str,
        k: int = 5,
        *,
        max_words: int | None = None,
        since: float | None = None,
        until: float | None = None,
        session: str | None = None,
        expand: Expand | str = Expand.TURNS,
        context: int = 0,
        neighbours: int = 0,
        metadata: Mapping[str, MetaScalar] | None = None,
        min_score: float | None = None,
    ) -> list[RecallHit]:
        """The ``k`` best of ``user``'s episodes for ``query``, each with its matching turns.

        ``max_words`` caps the words of all returned turns together (``None``:
        no cap), taking the best turns first across hits: pass the budget rather
        than cutting an unbudgeted answer yourself, which lists each hit's turns in
        conversation order (on LoCoMo dev that cut lost 0.18 evidence recall at
        200 words, docs/RESULTS.md); ``since``/``until`` (seconds since the epoch) keep episodes
        overlapping that range, ``session`` one session, ``metadata`` those
        whose user metadata holds every given key with an equal value (type
        included: ``1`` is not ``True``); ``min_score`` drops hits scoring
        below it. ``expand="episode"`` returns whole episodes, ``context`` adds
        turns around each match and ``neighbours`` lists adjacent episodes. See
        :mod:`episeg.recall.hierarchical`. Nothing is written: the same
        question gets the same answer until memory changes.

        Raises
        ------
        MetadataError
            A malformed ``metadata`` filter.
        RecallArgumentError
            A malformed argument (:func:`~episeg.recall.arguments.check_recall_arguments`):
            ``k`` < 1, a non-string query, a non-finite ``since``/``until``/``min_score``,
            ``since`` after ``until``...
        """
        check_recall_arguments(
            query,
            k,
            max_words=max_words,
            since=since,
            until=until,
            context=context,
            neighbours=neighbours,
            min_score=min_score,
        )
        k = int(k)  # numpy numbers are accepted; Chroma's filters take plain ones
        since, until = (None if t is None else float(t) for t in (since, until))
        wanted = None if metadata is None else validate_metadata(metadata, what="metadata filter")
        # One query vector serves the stored episodes and the open segments.
        vector = np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        # open turns, then the outbox, then the store: an episode moves that way, so one
        # flushed meanwhile is read in one of the three places (F186)
        corpus = self._open_corpus(validate_tenant(user))
        hits = self._healing(
            user,
            lambda: self._recaller(user).recall(
                vector,
                k,
                text=query,
                max_words=max_words,
                since=since,
                until=until,
                session=session,
                expand=expand,
                context=context,
                neighbours=neighbours,
                metadata=wanted,
            ),
        )
        if min_score is not None:
            hits = [h for h in hits if h.score >= min_score]
        return self._with_open(  # the open segments too (episeg.durability.memory_open)
            user,
            query,
            vector,
            hits,
            k,
            corpus=corpus,
            max_words=max_words,
            session=session,
            since=since,
            until=until,
            metadata=wanted,
            min_score=min_score,
            expand=expand,
            context=context,
        )

    def confirm_used(self, user: str, episode_ids: Collection[str]) -> list[Episode]:
        """Record that these of ``user``'s episodes were used: reinforce them (strength grows).

        Raises
        ------
        EpisodeNotFoundError
            If an id is not one of ``user``'s episodes (nothing is written).
        RecallArgumentError
            If ``episode_ids`` is one string (its characters are not ids), or
            holds anything but non-empty strings (nothing is written).
        """
        ids = check_ids("episode_ids", episode_ids)
        recaller = self._recaller(user)
        with self.tenant_lock(recaller.store.tenant):  # a read-modify-write of recall state
            return recaller.confirm_used(ids)

    def feedback(
        self, user: str, results: Sequence[ScoredEpisode], used_ids: Collection[str]
    ) -> tuple[float, float, float]:
        """Tell recall which of ``results`` were used: they are reinforced (:meth:`confirm_used`).

        Returns the recall weights (recency, importance, relevance), which no
        longer learn from feedback: on LoCoMo every non-zero recency or
        importance weight lowered evidence recall (docs/RESULTS.md).

        Raises
        ------
        RecallArgumentError
            If a used id is not among ``results``.
        """
        used_ids = check_ids("used_ids", used_ids)  # a mixed list sorted into a TypeError (F158)
        unknown = sorted(set(used_ids) - {r.episode.id for r in results})
        if unknown:
            raise RecallArgumentError(f"used id(s) {unknown[:5]} are not among the recall results")
        recaller = self._recaller(user)
        with self.tenant_lock(recaller.store.tenant):
            recaller.confirm_used(sorted(used_ids))
        return recaller.params.weights

    def recaller(self, user: str) -> HierarchicalRecaller:
        """The recaller of ``user``'s tenant (for evaluation and custom calls)."""
        return self._recaller(user)

    def maintain(self, user: str, *, archive: bool = False) -> MaintenanceReport:
        """Decay never-recalled episodes; with ``archive`` hide faded ones from recall.

        Raises
        ------
        RecallArgumentError
            ``archive`` is not True or False (``"no"`` would have archived).
        """
        if not isinstance(archive, bool):
            raise RecallArgumentError(f"archive must be True or False, got {archive!r:.80}")
        store = self.store(user)
        lock = self.tenant_lock(store.tenant)
        return maintain(store, self.config, float(self._clock()), archive=archive, lock=lock)

    # -- internals --------------------------------------------------------------------
    def _recaller(self, user: str) -> HierarchicalRecaller:
        while True:
            store = self.store(user)
            with self._lock:
                if self._stores.get(store.tenant) is not store:
                    continue  # dropped by an erasure since: take the tenant's current store
                found = self._recallers.get(store.tenant)
                if found is None or found.store is not store:
                    found = self._recallers[store.tenant] = HierarchicalRecaller(
                        store, self.embedder, config=self.config, clock=self._clock
                    )
                return found

    def _drop_tenant_cache(self, tenant: str) -> None:
        """Forget ``tenant``'s cached index, recaller and open corpus (they hold text)."""
        with self._lock:
            self._drops[tenant] = self._drops.get(tenant, 0) + 1  # a store built before is stale
            self._stores.pop(tenant, None)
            self._recallers.pop(tenant, None)
            self._open_corpora.pop(tenant, None)
