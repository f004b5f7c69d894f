"""The three ranked lists of hierarchical recall, fused into turn candidates (RRF).

:func:`gather` reads, for one query, (1) the store's turn vectors nearest
to it (cosine at or above ``min_similarity``), (2) BM25 over single turns
and (3) BM25 over whole episodes, whose turns enter in a row; every list
adds ``1 / (rrf_k + 1 + rank)`` to the turns it ranks. The result maps
``(episode id, position)`` to a :class:`Candidate`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from episeg.config import RecallConfig
from episeg.recall.index import IndexedStore, TenantIndex
from episeg.recall.lexical import tokenize
from episeg.recall.window import RecallWindow

__all__ = ["Candidate", "Candidates", "dense_turns", "gather"]


@dataclass
class Candidate:
    """One turn's fused score, its cosine (dense list only) and whether words found it."""

    fused: float = 0.0
    cosine: float | None = None
    lexical: bool = False


Candidates = dict[tuple[str, int], Candidate]


def gather(
    store: IndexedStore,
    params: RecallConfig,
    vector: np.ndarray,
    text: str | None,
    index: TenantIndex,
    window: RecallWindow,
) -> tuple[Candidates, set[str]]:
    """Fused turn candidates of one query and the ids of the episodes found by words."""
    p = params
    cands: Candidates = {}
    widen = 4 if window.active else 1
    # 1. dense turns (a cosine under min_similarity is not a match)
    rank = 0
    for episode_id, pos, cos in dense_turns(store, vector, p.turn_candidates, window):
        if cos < p.min_similarity or not window.allows(episode_id):
            continue
        c = cands.setdefault((episode_id, pos), Candidate())
        c.fused += 1.0 / (p.rrf_k + 1 + rank)
        c.cosine = cos
        rank += 1
    lexical_eps: set[str] = set()
    if not text:
        return cands, lexical_eps
    tokens = tokenize([text])[0]  # once, for both lexical lists
    # 2. lexical turns
    rank = 0
    for key, _ in index.turns.top_tokens(tokens, p.turn_candidates * widen):
        if rank == p.turn_candidates:
            break
        if window.allows(key[0]):
            c = cands.setdefault(key, Candidate())
            c.fused += 1.0 / (p.rrf_k + 1 + rank)
            c.lexical = True
            rank += 1
    # 3. lexical episodes, at turn granularity
    if p.episode_candidates:
        found = [i for i, _ in index.episodes.top_tokens(tokens, p.episode_candidates * widen)]
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
                c = cands.setdefault((episode_id, pos), Candidate())
                c.fused += 1.0 / (p.rrf_k + 1 + rank)
                rank += 1
    return cands, lexical_eps


def dense_turns(
    store: IndexedStore, vector: np.ndarray, n: int, window: RecallWindow
) -> list[tuple[str, int, float]]:
    """``(episode id, position, cosine)`` of the ``n`` nearest turns, nearest first."""
    matches = store.query_turns(vector, n, where=window.where())
    if matches is not None:
        return [(m.episode_id, m.position, m.similarity) for m in matches]
    # a store without a turn index: each episode's vector stands in for its first turn
    return [(ep.id, 0, sim) for ep, sim in store.query(vector, n)]
