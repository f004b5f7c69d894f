"""Rank fused turn candidates and pack them into a word budget.

:func:`rank` turns each candidate's fused score into relevance in [0, 1]
(scaled by ``(rrf_k + 1) / lists``) and adds the weighted recency,
importance and reinforcement of its episode; ties go to importance, then
the more recent episode, then id and position. :func:`select` takes the
ranked turns best first, skipping any that no longer fit ``max_words``, for
at most ``k`` episodes (``Expand.EPISODE``: whole episodes; ``context``:
neighbouring turns inside the episode).
"""

from __future__ import annotations

import math
import statistics

from episeg.config import EpisegConfig
from episeg.recall.candidates import Candidates
from episeg.recall.forgetting import retention_from, strength_from_importance
from episeg.recall.hits import DATE_WORDS, Expand, turn_span
from episeg.recall.index import EpisodeCard

__all__ = ["Chosen", "Extras", "Ranked", "rank", "select"]

# (recency, importance, reinforcement) contributions and "importance imputed"
Extras = tuple[float, float, float, bool]
# (score, relevance, (episode id, position)), best first
Ranked = list[tuple[float, float, tuple[str, int]]]
# episode id -> (score, relevance, positions in selection order)
Chosen = dict[str, tuple[float, float, dict[int, None]]]


def rank(
    cands: Candidates,
    cards: dict[str, EpisodeCard],
    config: EpisegConfig,
    weights: tuple[float, float, float] | None,
    *,
    now: float,
    n_lists: int,
) -> tuple[Ranked, dict[str, Extras]]:
    """Candidates best first, and each candidate episode's extra terms.

    ``cards`` is the tenant's live catalogue, which a concurrent delete (or
    forget) may change while recall runs: each card is read once, and the
    candidates of an episode whose card is gone are left out, not an error.
    """
    p = config.recall
    w_rec, w_imp, w_rel = p.weights if weights is None else weights
    found = [card for e in {e for e, _ in cands} if (card := cards.get(e)) is not None]
    fill = 0.0  # a missing importance weighs as the median of the known ones
    if w_imp:
        known = [c.importance for c in found if c.importance is not None]
        fill = statistics.median(known) if known else 0.0
    extras: dict[str, Extras] = {}
    # ties: importance, then the more recent episode, then id and position
    tie: dict[str, tuple[float, float]] = {}
    for card in found:
        recency = 0.0  # a zero weight skips its term's arithmetic, not its value (0.0)
        if w_rec:
            ref = card.last_accessed if card.last_accessed is not None else card.closed_at
            recency = p.recency_base ** (max(0.0, now - ref) / 3600.0)
        importance = fill if card.importance is None else card.importance
        reinf = 0.0
        if p.reinforcement_weight and card.recall_count > 0:
            reinf = p.reinforcement_weight * card_retention(card, config, now)
        extras[card.id] = (w_rec * recency, w_imp * importance, reinf, card.importance is None)
        tie[card.id] = (-(card.importance or 0.0), -card.closed_at)
    scale = (p.rrf_k + 1) / n_lists
    rows = []
    for key, c in cands.items():
        terms = extras.get(key[0])
        if terms is None:  # deleted while recall ran
            continue
        rec, imp, reinf, _ = terms
        relevance = w_rel * c.fused * scale
        first, second = tie[key[0]]
        rows.append((-(relevance + rec + imp + reinf), first, second, key, relevance))
    rows.sort()  # keys are unique, so the comparison never reaches relevance
    ranked = [(-r[0], r[4], r[3]) for r in rows]
    return ranked, extras


def select(
    ranked: Ranked,
    cards: dict[str, EpisodeCard],
    k: int,
    max_words: int | None,
    expand: Expand,
    context: int,
    *,
    count_summaries: bool = False,
) -> Chosen:
    """The turns to return, per episode, within ``k`` episodes and ``max_words``.

    An episode deleted since :func:`rank` (its card gone) is skipped; one
    replaced by a shorter version keeps only positions it still has. With
    ``count_summaries`` an episode's first turn chosen also spends its summary's
    words and 2 for its dates.
    """
    budget = math.inf if max_words is None else float(max_words)
    chosen: Chosen = {}
    used = 0.0
    for score, relevance, (episode_id, pos) in ranked:
        if episode_id not in chosen and len(chosen) >= k:
            continue
        card = cards.get(episode_id)
        if card is None:
            continue
        words = card.words
        first = count_summaries and episode_id not in chosen
        header = card.summary_words + DATE_WORDS if first else 0
        if expand is Expand.EPISODE:
            if episode_id in chosen:
                continue
            span = list(range(len(words)))
        else:  # the match first, then the context that fits (F157), the header counted
            have = chosen[episode_id][2] if episode_id in chosen else {}
            span = turn_span(words, pos, context, have, budget - used - header)
        need = sum(words[q] for q in span) + header
        if not span or used + need > budget:
            continue
        used += need
        entry = chosen.setdefault(episode_id, (score, relevance, {}))
        entry[2].update(dict.fromkeys(span))
        if used >= budget:
            break
    return chosen


def card_retention(card: EpisodeCard, config: EpisegConfig, now: float) -> float:
    """MemoryBank retention of the episode behind ``card`` (see :mod:`.forgetting`):
    1 when pinned, its salience setting the starting strength, as for the episode."""
    if card.pinned:
        return 1.0
    since = card.last_accessed if card.last_accessed is not None else card.closed_at
    return retention_from(
        age=max(0.0, (now - since) / 86400.0),
        start=strength_from_importance(card.importance, config=config),
        stored=card.strength,
        used=card.recall_count > 0,
    )
