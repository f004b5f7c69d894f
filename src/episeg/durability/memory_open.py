"""Recall that also sees the open segments: ``Memory.recall`` over stored and open turns.

:class:`OpenRecall` is a mixin of ``Memory``: ``Memory.recall`` asks the stored
episodes first, then :meth:`OpenRecall._with_open` reads the tenant's open
turns from the journal (as accepted, with their embeddings; the markers
stripped as the segmenter strips them), scores them with
:func:`~episeg.recall.open_segments.score_open` and merges both within the same
``k`` and word budget (:func:`~episeg.recall.open_segments.merge_open`). An
open hit has ``open=True`` and the id its episode will be stored under. A
closed episode still waiting in the outbox (its store write failed, or waits
for the retry) is recalled the same way, as an open hit under its id, until it
is stored: an accepted turn never drops out of recall between its episode's
close and the store (F122). The journal is read only for the asking tenant,
so recall stays tenant-bound.

>>> import tempfile
>>> from episeg.memory import Memory
>>> from episeg.testing import HashingEmbedder
>>> from episeg.types import Turn
>>> mem = Memory(path=tempfile.mkdtemp(), embedder=HashingEmbedder(), judge=None, scorer=None)
>>> _ = mem.observe(Turn(actor="user", text="water the ferns on friday", ts=1.0, user="carol"))
>>> [(h.open, [t.text for t in h.turns]) for h in mem.recall("carol", "ferns")]
[(True, ['water the ferns on friday'])]
>>> mem.recall("dave", "ferns")
[]
"""

from __future__ import annotations

import dataclasses
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from episeg.durability.ids import global_id
from episeg.durability.journal import Journal
from episeg.recall.hierarchical import HierarchicalRecaller
from episeg.recall.hits import Expand, RecallHit
from episeg.recall.open_corpus import OpenVersion
from episeg.recall.open_segments import OpenCorpus, OpenSegment, merge_open, score_open
from episeg.segmentation.episode import episode_id
from episeg.segmentation.signals.marker import scan_markers
from episeg.types import Actor, Turn
from episeg.typing import Embedder

__all__ = ["OpenRecall", "open_segments", "pending_segments"]


def open_segments(journal: Journal, user: str) -> list[OpenSegment]:
    """``user``'s open segments, one per session with open turns, as they will be stored."""
    by_session: defaultdict[str, list[tuple[Turn, np.ndarray]]] = defaultdict(list)
    for session, turn, vector in journal.open_turns(user):
        if turn.actor is Actor.ASSISTANT:
            turn = dataclasses.replace(turn, text=scan_markers(turn.text).text)
        by_session[session].append((turn, vector))
    out = []
    for session, rows in sorted(by_session.items()):
        first = rows[0][0].id or ""
        out.append(
            OpenSegment(
                id=global_id(journal.node, episode_id(user, session, first)),
                user=user,
                session=session,
                turns=tuple(t for t, _ in rows),
                vectors=np.stack([np.asarray(v, dtype=np.float32).reshape(-1) for _, v in rows]),
            )
        )
    return out


def pending_segments(
    journal: Journal, user: str, embed: Callable[[list[str]], np.ndarray]
) -> list[OpenSegment]:
    """``user``'s closed episodes waiting in the outbox, as segments (turns embedded anew).

    The outbox keeps an episode's vector, not its turns', so ``embed`` makes
    them; the caller keeps the result while the outbox stays the same.
    """
    out = []
    for episode in journal.pending(user):
        if not episode.turns or episode.archived:  # the store's recall would not return it
            continue
        vectors = np.asarray(embed([t.text for t in episode.turns]), dtype=np.float32)
        span = (episode.opened_at, episode.closed_at)  # store_episodes may give it wider times
        out.append(
            OpenSegment(
                episode.id, user, episode.session, episode.turns, vectors, episode.metadata, span
            )
        )
    return out


class OpenRecall:
    """The part of ``Memory`` that adds open segments to a recall (a mixin).

    ``MemoryRecall.recall`` hands its stored hits to :meth:`_with_open`.
    """

    journal: Journal
    embedder: Embedder
    _clock: Callable[[], float]
    _open_corpora: dict[str, tuple[OpenVersion, OpenCorpus]]  # tenant -> (version, corpus)
    _lock: threading.RLock
    _drops: dict[str, int]  # per tenant: how many times an erasure dropped its cached parts

    if TYPE_CHECKING:  # provided by MemoryRecall

        def _recaller(self, user: str) -> HierarchicalRecaller: ...

    def _with_open(
        self,
        user: str,
        query: str,
        vector: np.ndarray,
        hits: list[RecallHit],
        k: int,
        *,
        corpus: OpenCorpus,
        max_words: int | None,
        session: str | None,
        since: float | None,
        until: float | None,
        metadata: Mapping[str, object] | None,
        min_score: float | None,
        expand: Expand | str,
        context: int,
    ) -> list[RecallHit]:
        """``hits`` (stored, best first) with ``corpus``'s matching open segments merged in.

        ``corpus`` is :meth:`_open_corpus`, read *before* the stored hits (see there).
        ``vector`` is ``query``'s embedding, computed once for both. They are
        ranked with the same scoring and share ``k`` and ``max_words`` with the
        stored episodes (:mod:`episeg.recall.open_segments`).
        """
        if not corpus.segments:
            return hits
        recaller = self._recaller(user)
        opened = score_open(
            recaller,
            corpus,
            vector,
            query,
            hits,
            now=float(self._clock()),
            session=session,
            since=since,
            until=until,
            metadata=metadata,
        )
        if min_score is not None:
            opened = [o for o in opened if o.score >= min_score]
        stored = {hit.episode.id for hit in hits}  # an outbox episode stored meanwhile: once
        opened = [o for o in opened if o.segment.id not in stored]
        counted = recaller.params.count_summaries
        return merge_open(
            hits, opened, k, max_words, expand=expand, context=context, count_summaries=counted
        )

    def _open_corpus(self, tenant: str) -> OpenCorpus:
        """``tenant``'s open and outbox segments and indexes, rebuilt only when they changed.

        Read before the store, open turns before the outbox: an episode moves from
        the open turns to the outbox to the store, so one flushed during a recall is
        read in one of the three places, never in none (F186). The answer is kept
        only under a journal version that did not change while it was read (F187).
        """
        with self._lock:
            drops = self._drops.get(tenant, 0)
        version = self._journal_version(tenant)
        found = self._open_corpora.get(tenant)
        if found is not None and found[0] == version:
            return found[1]
        opened = open_segments(self.journal, tenant)
        corpus = OpenCorpus([*opened, *pending_segments(self.journal, tenant, self.embedder.embed)])
        with self._lock:  # an erasure since the read: serve this answer, keep no text of it
            if self._drops.get(tenant, 0) == drops and self._journal_version(tenant) == version:
                self._open_corpora[tenant] = (version, corpus)
        return corpus

    def _journal_version(self, tenant: str) -> OpenVersion:
        return (self.journal.open_version(tenant), self.journal.pending_version(tenant))
