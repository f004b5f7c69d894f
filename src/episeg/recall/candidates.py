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
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from episeg.config import RecallConfig
from episeg.recall.index import IndexedStore, TenantIndex
from episeg.recall.lexical import LexicalIndex, tokenize
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
K = TypeVar("K", bound=Hashable)
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
    """The dense list: the nearest turns in the window whose cosine reaches ``min_similarity``.

    The store's ``where`` (:meth:`RecallWindow.where`) narrows the query to the
    window's session and time range only; archived episodes and the metadata
    filter are checked on the catalogue, after the query. When they drop turns
    and fewer than ``turn_candidates`` remain, the query is repeated with twice
    as many neighbours until enough remain, the store has no more (fewer
    returned than asked) or the nearest left fall below ``min_similarity``
    (nearest first: the next ones are farther). A window that drops nothing
    costs the one query it always did, with the same list.
    """
    want = n = params.turn_candidates
    least = params.min_similarity
    while True:
        nearest = dense_turns(store, vector, n, window)
        kept = [m for m in nearest if m[2] >= least and window.allows(m[0])]
        # all n close (the farthest is) yet fewer than wanted kept: the window dropped some
        if len(kept) >= want or len(nearest) < n or nearest[-1][2] < least:
            return kept[:want]
        n *= 2


def lexical_lists(
    params: RecallConfig, text: str | None, index: TenantIndex, window: RecallWindow
) -> LexicalLists:
    """The lexical turn and episode lists of ``text`` (both empty without a text).

    Each list holds the best keys the window allows, exactly (see :func:`_allowed_top`).
    """
    if not text:
        return [], []
    p = params
    widen = 4 if window.active else 1
    tokens = tokenize([text])[0]  # once, for both lexical lists
    turns = _allowed_top(
        index.turns, tokens, p.turn_candidates, widen, lambda key: window.allows(key[0])
    )
    episodes: list[str] = []
    if p.episode_candidates:
        episodes = _allowed_top(index.episodes, tokens, p.episode_candidates, widen, window.allows)
    return turns, episodes


def _allowed_top(
    lexical: LexicalIndex[K], tokens: list[str], want: int, widen: int, allows: Callable[[K], bool]
) -> list[K]:
    """The ``want`` best keys of ``lexical`` for ``tokens`` that ``allows``, best first.

    The first read asks for ``want * widen`` keys (``widen`` > 1 with a session,
    time or metadata filter, which is expected to drop some). Only when the window
    dropped some of them and fewer than ``want`` remain is the index asked again
    for twice as many, until enough pass or it has no more matches (fewer returned
    than asked). Longer reads extend shorter ones (ties keep index order), so the
    list is the exact top of the allowed keys; archived episodes, which the
    window always drops, can no longer fill it and hide the live ones.
    """
    n = want * widen
    while True:
        found = [key for key, _ in lexical.top_tokens(tokens, n)]
        kept = [key for key in found if allows(key)]
        if len(kept) >= want or len(found) < n:
            return kept[:want]
        n *= 2


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
        card = index.cards.get(episode_id)
        if card is None:  # deleted since the list was read (a concurrent delete / forget)
            continue
        n_turns = card.n_turns
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
