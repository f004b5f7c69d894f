"""The three ranked lists of hierarchical recall, fused into turn candidates (RRF).

For one query, :func:`dense_list` reads the store's turn vectors nearest to
it (cosine at or above ``min_similarity``) and :func:`lexical_lists` BM25
over single turns and over whole episodes; :func:`fuse` then adds, for every
list, ``1 / (rrf_k + 1 + rank)`` to the turns it ranks (an episode's turns
enter in a row: the ones the turn lists rank higher first, then in order).
The result maps ``(episode id, position)`` to a :class:`Candidate`.

The lists are separate steps so that the dense query (which releases the GIL
inside Chroma) can run on another thread while the lexical lists are
computed; :func:`fuse` adds the contributions in the same order whether the
lists were read one after the other (:func:`gather`) or side by side, so the
scores are the same to the last bit.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from episeg.config import RecallConfig
from episeg.recall.index import IndexedStore, TenantIndex
from episeg.recall.lexical import tokenize
from episeg.recall.overlap import submit
from episeg.recall.window import RecallWindow

__all__ = [
    "Candidate",
    "Candidates",
    "DenseList",
    "LexicalLists",
    "dense_list",
    "dense_turns",
    "fuse",
    "gather",
    "lexical_lists",
]


@dataclass
class Candidate:
    """One turn's fused score, its cosine (dense list only) and whether words found it."""

    fused: float = 0.0
    cosine: float | None = None
    lexical: bool = False


Candidates = dict[tuple[str, int], Candidate]
# (episode id, position, cosine), nearest first, every one a match inside the window
DenseList = list[tuple[str, int, float]]
# turns ranked by BM25 and episodes ranked by BM25, best first, inside the window
LexicalLists = tuple[list[tuple[str, int]], list[str]]
# How long gather waits for the worker to start the dense query (a bound, not a delay:
# it returns as soon as the worker runs; past it the lists run side by side anyway).
_HANDOFF_WAIT = 0.05


def gather(
    store: IndexedStore,
    params: RecallConfig,
    vector: np.ndarray,
    text: str | None,
    index: TenantIndex,
    window: RecallWindow,
) -> tuple[Candidates, set[str]]:
    """Fused turn candidates of one query and the ids of the episodes found by words.

    With ``params.overlap_reads`` and a text, the dense query runs on a recall
    worker (:mod:`episeg.recall.overlap`) while the lexical lists are computed here.
    """
    if params.overlap_reads and text:
        started = threading.Event()
        dense = submit(_dense_started, started, store, params, vector, window)
        # Wait until the worker runs before taking the GIL for the lexical lists: the
        # worker needs the GIL to reach Chroma's search (which releases it), and
        # otherwise got it only when this thread let go (measured: the query then
        # started late; -0.19 to -0.28 ms median per recall at 10^5, docs/RESULTS.md).
        started.wait(_HANDOFF_WAIT)
        lexical = lexical_lists(params, text, index, window)
        return fuse(params, dense.result(), lexical, index)
    dense_now = dense_list(store, params, vector, window)
    return fuse(params, dense_now, lexical_lists(params, text, index, window), index)


def _dense_started(
    started: threading.Event,
    store: IndexedStore,
    params: RecallConfig,
    vector: np.ndarray,
    window: RecallWindow,
) -> DenseList:
    started.set()
    return dense_list(store, params, vector, window)


def dense_list(
    store: IndexedStore, params: RecallConfig, vector: np.ndarray, window: RecallWindow
) -> DenseList:
    """The dense list: the nearest turns whose cosine reaches ``min_similarity``."""
    return [
        (episode_id, pos, cos)
        for episode_id, pos, cos in dense_turns(store, vector, params.turn_candidates, window)
        if cos >= params.min_similarity and window.allows(episode_id)
    ]


def lexical_lists(
    params: RecallConfig, text: str | None, index: TenantIndex, window: RecallWindow
) -> LexicalLists:
    """The lexical turn and episode lists of ``text`` (both empty without a text)."""
    if not text:
        return [], []
    p = params
    widen = 4 if window.active else 1
    tokens = tokenize([text])[0]  # once, for both lexical lists
    turns = [key for key, _ in index.turns.top_tokens(tokens, p.turn_candidates * widen)]
    turns = [key for key in turns if window.allows(key[0])][: p.turn_candidates]
    episodes: list[str] = []
    if p.episode_candidates:
        found = [i for i, _ in index.episodes.top_tokens(tokens, p.episode_candidates * widen)]
        episodes = [i for i in found if window.allows(i)][: p.episode_candidates]
    return turns, episodes


def fuse(
    params: RecallConfig, dense: DenseList, lexical: LexicalLists, index: TenantIndex
) -> tuple[Candidates, set[str]]:
    """RRF of the three lists: turn candidates, and the episodes the episode list found."""
    rrf = params.rrf_k + 1
    cands: Candidates = {}
    for rank, (episode_id, pos, cos) in enumerate(dense):
        c = cands.setdefault((episode_id, pos), Candidate())
        c.fused += 1.0 / (rrf + rank)
        c.cosine = cos
    turns, episodes = lexical
    for rank, key in enumerate(turns):
        c = cands.setdefault(key, Candidate())
        c.fused += 1.0 / (rrf + rank)
        c.lexical = True
    rank = 0  # the episode list ranks turns, one episode after another
    for episode_id in episodes:
        n_turns = index.cards[episode_id].n_turns
        prior = [
            cands[(episode_id, q)].fused if (episode_id, q) in cands else 0.0
            for q in range(n_turns)
        ]
        for pos in sorted(range(n_turns), key=lambda q: (-prior[q], q)):
            c = cands.setdefault((episode_id, pos), Candidate())
            c.fused += 1.0 / (rrf + rank)
            rank += 1
    return cands, set(episodes)


def dense_turns(
    store: IndexedStore, vector: np.ndarray, n: int, window: RecallWindow
) -> list[tuple[str, int, float]]:
    """``(episode id, position, cosine)`` of the ``n`` nearest turns, nearest first."""
    matches = store.query_turns(vector, n, where=window.where())
    if matches is not None:
        return [(m.episode_id, m.position, m.similarity) for m in matches]
    # a store without a turn index: each episode's vector stands in for its first turn
    return [(ep.id, 0, sim) for ep, sim in store.query(vector, n)]
