"""Hierarchical recall: find episodes by the turns inside them, return those turns.

The episode is the unit of memory; its turns are indexed too. For a query,
three ranked lists are fused by reciprocal rank fusion (RRF, ``k = 60``):

1. **dense turns**: the store's turn vectors nearest to the query (cosine at
   or above ``min_similarity``; a weaker match is not a match);
2. **lexical turns**: BM25 over single turns (``bm25s``, stemmed, stop words
   removed);
3. **lexical episodes**: BM25 over whole episodes; each matching episode
   contributes its turns in a row (best episode first, inside an episode the
   turns that lists 1-2 rank higher first, then in order), so an episode whose
   words match lends rank to its turns even when no single turn matches alone.

Measured on the LoCoMo dev conversations (docs/RESULTS.md): the episode list
is what lifts recall above a turn-level hybrid; an episode-*vector* list on
top did not help there and is not used. Relevance is the fused score;
recency, importance and reinforcement (retention after confirmed use) can be
added with ``weights`` but are 0 by default because on LoCoMo they lowered
evidence recall; they always break ties between equal relevance.

The ranked turns are then taken best first, skipping any turn that no longer
fits ``max_words`` (words = whitespace-separated tokens of the turn texts
returned; summaries and dates are not counted unless ``count_summaries``), for
at most ``k`` episodes, and grouped by episode: each :class:`RecallHit` carries the episode (id,
ISO start/end, summary) and its matched turns in conversation order.
``expand="episode"`` returns whole episodes instead (best first, each only if
it fits), ``context=n`` adds up to ``n`` turns on each side of a matched
turn (inside its episode, within the budget) and ``neighbours=n`` lists the
``n`` episodes before and after each hit in its session (ids and dates, no
turns). ``since``/``until`` (seconds since the epoch) keep episodes that
overlap the range; ``session`` keeps one session.

Recall never writes: reinforcement follows :meth:`confirm_used`, so the same
question gets the same answer whenever it is asked.

With ``overlap_reads`` (the default) the dense query runs on a worker thread
while the lexical lists are computed (:mod:`.overlap`, inside
:func:`.candidates.gather`); the hits are the same as with one step after the other.

Modules: :mod:`.candidates` (the three lists and their fusion), :mod:`.ranking`
(relevance + extra terms, budget packing), :mod:`.window` (session / time
filter), :mod:`.hits` (:class:`RecallHit`, :class:`Expand`), :mod:`.index` (the
tenant's catalogue and BM25 indexes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from episeg.config import EpisegConfig
from episeg.errors import EpisodeNotFoundError, RecallArgumentError
from episeg.recall.arguments import check_query, check_session
from episeg.recall.candidates import gather
from episeg.recall.forgetting import reinforce
from episeg.recall.hits import Expand, RecallHit, word_count
from episeg.recall.index import IndexedStore
from episeg.recall.ranking import rank, select
from episeg.recall.window import RecallWindow
from episeg.store.usermeta import MetaScalar
from episeg.types import Episode
from episeg.typing import Embedder

__all__ = ["Expand", "HierarchicalRecaller", "RecallHit", "word_count"]

Clock = Callable[[], float]


class HierarchicalRecaller:
    """Recall over one tenant's :class:`IndexedStore` (see the module docstring).

    Parameters
    ----------
    store, embedder
        The tenant's indexed store and the embedder its turns were embedded with.
    config
        ``config.recall`` holds the ranking tunables
        (:class:`~episeg.config.RecallConfig`); ``config.forgetting`` the
        strength rules of :meth:`confirm_used` and the reinforcement term.
    clock
        Returns "now" in seconds since the epoch.
    """

    def __init__(
        self,
        store: IndexedStore,
        embedder: Embedder,
        *,
        config: EpisegConfig | None = None,
        clock: Clock,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._config = config or EpisegConfig()
        self.params = self._config.recall
        self._clock = clock

    @property
    def store(self) -> IndexedStore:
        return self._store

    def recall(
        self,
        query: str | np.ndarray,
        k: int = 5,
        *,
        max_words: int | None = None,
        text: str | None = None,
        since: float | None = None,
        until: float | None = None,
        session: str | None = None,
        expand: Expand | str = Expand.TURNS,
        context: int = 0,
        neighbours: int = 0,
        weights: tuple[float, float, float] | None = None,
        metadata: Mapping[str, MetaScalar] | None = None,
    ) -> list[RecallHit]:
        """The best ``k`` episodes for ``query`` and their matching turns, best first.

        ``query`` is a text, or a vector together with ``text`` for the
        lexical lists (a vector alone uses the dense list only). ``weights``
        overrides ``params.weights`` for this call. ``metadata`` keeps episodes
        whose user metadata holds each of its keys with an equal value.

        Raises
        ------
        RecallArgumentError
            ``k`` or ``max_words`` < 1, a negative ``context`` or ``neighbours``,
            an unknown ``expand``, a ``session`` that is not a string, a query
            that is not UTF-8 text (a lone surrogate).
        """
        if k < 1:
            raise RecallArgumentError(f"k must be >= 1, got {k}")
        if max_words is not None and max_words < 1:
            raise RecallArgumentError(f"max_words must be >= 1 or None, got {max_words}")
        if context < 0 or neighbours < 0:
            raise RecallArgumentError("context and neighbours must be >= 0")
        check_session(session)
        expand = Expand.parse(expand)
        if isinstance(query, str):
            check_query(query)
            text = query
            vector = np.asarray(self._embedder.embed([query])[0], dtype=np.float32)
        else:
            vector = np.asarray(query, dtype=np.float32).reshape(-1)
        index = self._store.index
        window = RecallWindow(index.cards, session, since, until, metadata, span=index.max_span)
        cands, lexical_eps = gather(self._store, self.params, vector, text, index, window)
        if not cands:
            return []
        ranked, extras = rank(
            cands,
            index.cards,
            self._config,
            weights,
            now=float(self._clock()),
            n_lists=3 if text else 1,
        )
        chosen = select(
            ranked,
            index.cards,
            k,
            max_words,
            expand,
            context,
            count_summaries=self.params.count_summaries,
        )
        if not chosen:
            return []
        # through the store's cache of recently returned episodes (valid while their cards are)
        fetched = self._store.recent.get(list(chosen), index.cards, self._store.get)
        episodes = {ep.id: ep for ep in fetched}
        hits = []
        for episode_id, (score, relevance, positions) in chosen.items():
            ep = episodes.get(episode_id)
            if ep is None or ep.archived:
                continue
            rec, imp, reinf, imputed = extras[episode_id]
            kept = tuple(sorted(q for q in positions if q < len(ep.turns)))
            found = [cands[(episode_id, q)] for q in kept if (episode_id, q) in cands]
            before, after = index.neighbours(episode_id, neighbours)
            hits.append(
                RecallHit(
                    episode=ep,
                    score=score,
                    recency=rec,
                    importance=imp,
                    similarity=relevance,
                    raw_similarity=max(
                        (c.cosine for c in found if c.cosine is not None), default=0.0
                    ),
                    importance_imputed=imputed,
                    reinforcement=reinf,
                    turns=tuple(ep.turns[q] for q in kept),
                    positions=kept,
                    lexical=episode_id in lexical_eps or any(c.lexical for c in found),
                    neighbours_before=tuple(before),
                    neighbours_after=tuple(after),
                )
            )
        return hits

    def confirm_used(self, episode_ids: Sequence[str]) -> list[Episode]:
        """Reinforce these episodes of this tenant (MemoryBank strength); return them updated.

        Raises
        ------
        EpisodeNotFoundError
            If an id is not one of this tenant's episodes (nothing is written).
        """
        ids = list(dict.fromkeys(episode_ids))
        if not ids:
            return []
        found = {ep.id: ep for ep in self._store.get(ids)}
        missing = [i for i in ids if i not in found]
        if missing:
            raise EpisodeNotFoundError(
                f"cannot confirm unknown episode id(s) {missing[:5]} "
                f"for tenant {self._store.tenant!r}"
            )
        now = float(self._clock())
        updated = [reinforce(found[i], config=self._config, now=now) for i in ids]
        self._store.update(updated)
        return updated
