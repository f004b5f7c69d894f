"""Builders for recall tests."""

from __future__ import annotations

import numpy as np

from episeg.types import Actor, Episode, Turn
from episeg.typing import Embedder


def embedded_episode(eid: str, texts: list[str], t0: float, embedder: Embedder) -> Episode:
    """alice's episode ``eid`` in session ``s``: one user turn per text from ``t0``, one second
    apart, with ``embedder``'s turn vectors and their normalised mean."""
    turns = tuple(
        Turn(actor=Actor.USER, text=t, ts=t0 + i, id=f"{eid}:t{i}", user="alice", session="s")
        for i, t in enumerate(texts)
    )
    vectors = np.asarray(embedder.embed(texts), np.float32)
    mean = vectors.mean(axis=0)
    return Episode(
        id=eid,
        user="alice",
        session="s",
        turns=turns,
        summary=texts[0],
        opened_at=turns[0].ts,
        closed_at=turns[-1].ts,
        embedding=mean / np.linalg.norm(mean),
        turn_embeddings=vectors,
    )
