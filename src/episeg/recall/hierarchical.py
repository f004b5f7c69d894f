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
returned; summaries and dates are not counted), for at most ``k`` episodes,
and grouped by episode: each :class:`RecallHit` carries the episode (id,
ISO start/end, summary) and its matched turns in conversation order.
``expand="episode"`` returns whole episodes instead (best first, each only if
it fits), ``context=n`` adds up to ``n`` turns on each side of a matched
turn (inside its episode, within the budget) and ``neighbours=n`` lists the
``n`` episodes before and after each hit in its session (ids and dates, no
turns). ``since``/``until`` (seconds since the epoch) keep episodes that
overlap the range; ``session`` keeps one session.

Recall never writes: reinforcement follows :meth:`confirm_used`, so the same
question gets the same answer whenever it is asked.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from episeg.config import EpisegConfig
from episeg.errors import StoreError
from episeg.recall.forgetting import reinforce, retention
from episeg.recall.index import EpisodeCard, IndexedStore, TenantIndex
from episeg.types import Episode, Turn
from episeg.typing import Embedder, ScoredEpisode

__all__ = ["Expand", "HierarchicalRecaller", "RecallHit", "word_count"]

Clock = Callable[[], float]


def word_count(text: str) -> int:
    """Words as the budget counts them: whitespace-separated tokens.

    >>> word_count("Alice: I went to the climbing gym.")
    7
    """
    return len(text.split())


class Expand(StrEnum):
    """What a hit returns: the matched ``turns`` or its whole ``episode``."""

    TURNS = "turns"
    EPISODE = "episode"

    @classmethod
    def parse(cls, value: object) -> Expand:
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).lower())
        except ValueError:
            valid = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown expand {value!r}; valid: {valid}") from None


@dataclass(frozen=True, slots=True)
class RecallHit(ScoredEpisode):
    """One recalled episode and the turns of it that recall returns.

    The :class:`~episeg.typing.ScoredEpisode` fields keep their meaning:
    ``score`` = ``similarity`` (weighted relevance) + ``recency`` +
    ``importance`` + ``reinforcement`` (each a weighted contribution);
    ``raw_similarity`` is the best cosine of the hit's matched turns (0.0 when
    it was found by words only).
    """

    reinforcement: float = 0.0
    turns: tuple[Turn, ...] = ()
    positions: tuple[int, ...] = ()
    lexical: bool = False
    neighbours_before: tuple[str, ...] = ()
    neighbours_after: tuple[str, ...] = ()

    @property
    def episode_id(self) -> str:
        return self.episode.id

    @property
    def start(self) -> str:
        return self.episode.start

    @property
    def end(self) -> str:
        return self.episode.end

    @property
    def summary(self) -> str:
        return self.episode.summary

    @property
    def turn_ids(self) -> tuple[str, ...]:
        return tuple(
            t.id or f"{self.episode.id}:{p}"
            for t, p in zip(self.turns, self.positions, strict=True)
        )

    @property
    def words(self) -> int:
        return sum(word_count(t.text) for t in self.turns)

    @property
    def text(self) -> str:
        """The returned turns, one ``actor: text`` line each."""
        return "\n".join(f"{t.actor.value}: {t.text}" for t in self.turns)


@dataclass
class _Candidate:
    fused: float = 0.0
    cosine: float | None = None
    lexical: bool = False


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
    ) -> list[RecallHit]:
        """The best ``k`` episodes for ``query`` and their matching turns, best first.

        ``query`` is a text, or a vector together with ``text`` for the
        lexical lists (a vector alone uses the dense list only). ``weights``
        overrides ``params.weights`` for this call.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if max_words is not None and max_words < 1:
            raise ValueError(f"max_words must be >= 1 or None, got {max_words}")
        if context < 0 or neighbours < 0:
            raise ValueError("context and neighbours must be >= 0")
        expand = Expand.parse(expand)
        if isinstance(query, str):
            text = query
            vector = np.asarray(self._embedder.embed([query])[0], dtype=np.float32)
        else:
            vector = np.asarray(query, dtype=np.float32).reshape(-1)
        index = self._store.index
        window = _Window(index.cards, session, since, until)
        cands, lexical_eps = self._candidates(vector, text, index, window)
        if not cands:
            return []
        ranked, extras = self._rank(cands, index.cards, weights, n_lists=3 if text else 1)
        chosen = self._select(ranked, index.cards, k, max_words, expand, context)
        if not chosen:
            return []
        episodes = {ep.id: ep for ep in self._store.get(list(chosen))}
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
        StoreError
            If an id is not one of this tenant's episodes (nothing is written).
        """
        ids = list(dict.fromkeys(episode_ids))
        if not ids:
            return []
        found = {ep.id: ep for ep in self._store.get(ids)}
        missing = [i for i in ids if i not in found]
        if missing:
            raise StoreError(
                f"cannot confirm unknown episode id(s) {missing[:5]} "
                f"for tenant {self._store.tenant!r}"
            )
        now = float(self._clock())
        updated = [reinforce(found[i], config=self._config, now=now) for i in ids]
        self._store.update(updated)
        return updated

    # -- internals ------------------------------------------------------------------
    def _candidates(
        self, vector: np.ndarray, text: str | None, index: TenantIndex, window: _Window
    ) -> tuple[dict[tuple[str, int], _Candidate], set[str]]:
        p = self.params
        cands: dict[tuple[str, int], _Candidate] = {}
        widen = 4 if window.active else 1
        # 1. dense turns (a cosine under min_similarity is not a match)
        rank = 0
        for episode_id, pos, cos in self._dense_turns(vector, p.turn_candidates, window):
            if cos < p.min_similarity or not window.allows(episode_id):
                continue
            c = cands.setdefault((episode_id, pos), _Candidate())
            c.fused += 1.0 / (p.rrf_k + 1 + rank)
            c.cosine = cos
            rank += 1
        lexical_eps: set[str] = set()
        if not text:
            return cands, lexical_eps
        # 2. lexical turns
        rank = 0
        for key, _ in index.turns.top(text, p.turn_candidates * widen):
            if rank == p.turn_candidates:
                break
            if window.allows(key[0]):
                c = cands.setdefault(key, _Candidate())
                c.fused += 1.0 / (p.rrf_k + 1 + rank)
                c.lexical = True
                rank += 1
        # 3. lexical episodes, at turn granularity
        if p.episode_candidates:
            found = [i for i, _ in index.episodes.top(text, p.episode_candidates * widen)]
            found = [i for i in found if window.allows(i)][: p.episode_candidates]
            rank = 0
            for episode_id in found:
                lexical_eps.add(episode_id)
                n_turns = index.cards[episode_id].n_turns
                prior = [
                    cands[(episode_id, q)].fused if (episode_id, q) in cands else 0.0
                    for q in range(n_turns)
                ]
                for pos in sorted(range(n_turns), key=lambda q: (-prior[q], q)):
                    c = cands.setdefault((episode_id, pos), _Candidate())
                    c.fused += 1.0 / (p.rrf_k + 1 + rank)
                    rank += 1
        return cands, lexical_eps

    def _dense_turns(
        self, vector: np.ndarray, n: int, window: _Window
    ) -> list[tuple[str, int, float]]:
        matches = self._store.query_turns(vector, n, where=window.where())
        if matches is not None:
            return [(m.episode_id, m.position, m.similarity) for m in matches]
        # a store without a turn index: each episode's vector stands in for its first turn
        return [(ep.id, 0, sim) for ep, sim in self._store.query(vector, n)]

    def _rank(
        self,
        cands: dict[tuple[str, int], _Candidate],
        cards: dict[str, EpisodeCard],
        weights: tuple[float, float, float] | None,
        *,
        n_lists: int,
    ) -> tuple[list[tuple[float, float, tuple[str, int]]], dict[str, _Extras]]:
        p = self.params
        w_rec, w_imp, w_rel = p.weights if weights is None else weights
        now = float(self._clock())
        ids = {e for e, _ in cands}
        known = [cards[i].importance for i in ids if cards[i].importance is not None]
        fill = statistics.median([v for v in known if v is not None]) if known else 0.0
        extras: dict[str, _Extras] = {}
        for episode_id in ids:
            card = cards[episode_id]
            ref = card.last_accessed if card.last_accessed is not None else card.closed_at
            recency = p.recency_base ** (max(0.0, now - ref) / 3600.0)
            importance = fill if card.importance is None else card.importance
            reinf = 0.0
            if p.reinforcement_weight and card.recall_count > 0:
                reinf = p.reinforcement_weight * _card_retention(card, self._config, now)
            extras[episode_id] = (
                w_rec * recency,
                w_imp * importance,
                reinf,
                card.importance is None,
            )
        scale = (p.rrf_k + 1) / n_lists
        ranked = []
        for key, c in cands.items():
            rec, imp, reinf, _ = extras[key[0]]
            relevance = w_rel * c.fused * scale
            ranked.append((relevance + rec + imp + reinf, relevance, key))
        # ties: importance, then the more recent episode, then id and position
        ranked.sort(
            key=lambda r: (
                -r[0],
                -(cards[r[2][0]].importance or 0.0),
                -cards[r[2][0]].closed_at,
                r[2],
            )
        )
        return ranked, extras

    def _select(
        self,
        ranked: list[tuple[float, float, tuple[str, int]]],
        cards: dict[str, EpisodeCard],
        k: int,
        max_words: int | None,
        expand: Expand,
        context: int,
    ) -> dict[str, tuple[float, float, dict[int, None]]]:
        budget = math.inf if max_words is None else float(max_words)
        chosen: dict[str, tuple[float, float, dict[int, None]]] = {}
        used = 0.0
        for score, relevance, (episode_id, pos) in ranked:
            if episode_id not in chosen and len(chosen) >= k:
                continue
            words = cards[episode_id].words
            if expand is Expand.EPISODE:
                if episode_id in chosen:
                    continue
                span = list(range(len(words)))
            else:
                have = chosen[episode_id][2] if episode_id in chosen else {}
                lo, hi = max(0, pos - context), min(len(words), pos + context + 1)
                span = [q for q in range(lo, hi) if q not in have]
            need = sum(words[q] for q in span)
            if not span or used + need > budget:
                continue
            used += need
            entry = chosen.setdefault(episode_id, (score, relevance, {}))
            entry[2].update(dict.fromkeys(span))
            if used >= budget:
                break
        return chosen


_Extras = tuple[float, float, float, bool]


class _Window:
    """The optional session / time-range filter of one recall."""

    def __init__(
        self,
        cards: dict[str, EpisodeCard],
        session: str | None,
        since: float | None,
        until: float | None,
    ) -> None:
        self.cards, self.session, self.since, self.until = cards, session, since, until
        self.active = session is not None or since is not None or until is not None

    def allows(self, episode_id: str) -> bool:
        card = self.cards.get(episode_id)
        if card is None or card.archived:
            return False
        if self.session is not None and card.session != self.session:
            return False
        if self.since is not None and card.closed_at < self.since:
            return False
        return not (self.until is not None and card.opened_at > self.until)

    def where(self) -> dict[str, Any] | None:
        clauses: list[dict[str, Any]] = []
        if self.session is not None:
            clauses.append({"session": self.session})
        # a turn of an episode that overlaps the range may itself lie outside: pad by a day
        if self.since is not None:
            clauses.append({"ts": {"$gte": self.since - 86400.0}})
        if self.until is not None:
            clauses.append({"ts": {"$lte": self.until + 86400.0}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _card_retention(card: EpisodeCard, config: EpisegConfig, now: float) -> float:
    stub = Episode(
        id=card.id,
        user="",
        session=card.session,
        turns=(),
        summary="",
        opened_at=card.opened_at,
        closed_at=card.closed_at,
        recall_count=card.recall_count,
        last_accessed=card.last_accessed,
        strength=card.strength,
    )
    return retention(stub, config=config, now=now)
