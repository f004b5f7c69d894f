"""The memory evaluation's baselines over the turn vectors, and how a conversation goes in.

:func:`ingest` feeds a LoCoMo conversation to a ``Memory`` (a flush at each
session end); :func:`build_corpus` keeps the turn vectors the memory computed;
:func:`baselines` ranks single turns, 5-turn chunks, whole sessions, whole
episodes, BM25 over turns and the BM25 + cosine fusion for one question.

>>> import numpy as np
>>> rrf([np.array([2, 0, 1]), np.array([2, 1, 0])], 3).tolist()  # a tie keeps row order
[2, 0, 1]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from episeg.evaluation.locomo import Conversation

__all__ = ["RRF_K", "Corpus", "baselines", "build_corpus", "ingest", "rrf"]

RRF_K = 60


@dataclass
class Corpus:
    ids: list[str]
    vectors: np.ndarray
    sessions: np.ndarray
    words: dict[str, int]
    episodes: list[list[int]]
    episode_vectors: np.ndarray
    bm25: Any


def _units_by_mean(corpus: Corpus, groups: list[list[int]], q: np.ndarray) -> list[list[str]]:
    means = np.stack([corpus.vectors[g].mean(axis=0) for g in groups])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    order = np.argsort(-(means @ q), kind="stable")
    return [[corpus.ids[i] for i in groups[u]] for u in order]


def _session_groups(corpus: Corpus, size: int | None) -> list[list[int]]:
    groups: list[list[int]] = []
    for s in dict.fromkeys(corpus.sessions.tolist()):
        rows = np.flatnonzero(corpus.sessions == s).tolist()
        step = size or len(rows)
        groups.extend(rows[i : i + step] for i in range(0, len(rows), step))
    return groups


def rrf(orders: Sequence[np.ndarray], n: int) -> np.ndarray:
    score = np.zeros(n)
    for order in orders:
        score[order] += 1.0 / (RRF_K + 1 + np.arange(order.size))
    return np.argsort(-score, kind="stable")


def baselines(corpus: Corpus, q: np.ndarray, text: str) -> dict[str, list[list[str]]]:
    from episeg.recall.lexical import tokenize

    cos = corpus.vectors @ q
    dense = np.argsort(-cos, kind="stable")
    tokens = tokenize([text])[0]
    lex_scores = np.asarray(corpus.bm25.get_scores(tokens)) if tokens else np.zeros(len(corpus.ids))
    lex = np.argsort(-lex_scores, kind="stable")
    lex = lex[lex_scores[lex] > 0]
    ep_order = np.argsort(-(corpus.episode_vectors @ q), kind="stable")
    return {
        "single turns (cosine)": [[corpus.ids[i]] for i in dense],
        "5-turn chunks (cosine)": _units_by_mean(corpus, _session_groups(corpus, 5), q),
        "whole sessions (cosine)": _units_by_mean(corpus, _session_groups(corpus, None), q),
        "whole episodes (cosine)": [[corpus.ids[i] for i in corpus.episodes[e]] for e in ep_order],
        "BM25 over turns": [[corpus.ids[i]] for i in lex],
        "BM25 + cosine RRF over turns": [
            [corpus.ids[i]] for i in rrf([dense, lex], len(corpus.ids))
        ],
    }


def ingest(memory: Any, conv: Conversation) -> list[Any]:
    from episeg.types import Actor, Turn

    stored: list[Any] = []
    session = None
    for t in conv.turns:
        if session is not None and t.session != session:
            stored += memory.flush(conv.id, f"session_{session}")
        session = t.session
        turn = Turn(
            actor=Actor.parse(t.actor),
            text=t.text,
            ts=t.ts,
            id=t.id,
            user=conv.id,
            session=f"session_{t.session}",
        )
        stored += memory.observe(turn)
    stored += memory.flush(conv.id)
    return stored


def build_corpus(
    conv: Conversation, episodes: list[Any], embed: Callable[[list[str]], Any]
) -> Corpus:
    import bm25s

    from episeg.recall.lexical import tokenize

    ids = [t.id for t in conv.turns]
    row = {i: n for n, i in enumerate(ids)}
    vectors = np.zeros((len(ids), 0), dtype=np.float32)
    by_id: dict[str, np.ndarray] = {}
    for ep in episodes:
        if ep.turn_embeddings is not None:
            for turn, vec in zip(ep.turns, ep.turn_embeddings, strict=True):
                by_id[turn.id] = np.asarray(vec, dtype=np.float32)
    missing = [i for i in ids if i not in by_id]
    if missing:
        texts = {t.id: t.text for t in conv.turns}
        for i, vec in zip(missing, embed([texts[i] for i in missing]), strict=True):
            by_id[i] = np.asarray(vec, dtype=np.float32)
    vectors = np.stack([by_id[i] for i in ids])
    groups = [[row[t.id] for t in ep.turns if t.id in row] for ep in episodes]
    ep_vecs = np.stack([np.asarray(ep.embedding, dtype=np.float32) for ep in episodes])
    bm25 = bm25s.BM25()
    bm25.index(tokenize([t.text for t in conv.turns]), show_progress=False)
    return Corpus(
        ids=ids,
        vectors=vectors,
        sessions=np.asarray([t.session for t in conv.turns]),
        words={t.id: len(t.text.split()) for t in conv.turns},
        episodes=groups,
        episode_vectors=ep_vecs,
        bm25=bm25,
    )
