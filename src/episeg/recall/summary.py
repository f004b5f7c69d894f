"""Offline extractive summaries: the episode's most representative turn, trimmed.

Without an LLM judge, an episode's summary is taken from its own words: the
turn whose vector is closest to the episode's mean vector (the turn vectors
are the ones the segmenter already computed, so nothing is embedded again),
among turns of at least ``min_words`` words when there are any; from that
turn, its sentences of at least ``min_words`` words (all of them if none is
that long) are kept in order up to ``max_chars`` characters, the last one
cut with an ellipsis if even the first does not fit. A person reads a
sentence someone said, not a bag of keywords.

>>> import numpy as np
>>> from episeg.types import Turn
>>> turns = [Turn(actor="user", text=t, ts=0.0) for t in (
...     "Hi!", "The deploy failed again. The pool is exhausted.", "ok")]
>>> vectors = np.array([[0.0, 1.0], [1.0, 0.2], [0.6, 0.8]], dtype=np.float32)
>>> extractive_summary(turns, vectors)
'The deploy failed again. The pool is exhausted.'
>>> extractive_summary(turns, vectors, max_chars=30)
'The deploy failed again.'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from episeg.types import Turn

__all__ = ["extractive_summary"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def extractive_summary(
    turns: Sequence[Turn], vectors: np.ndarray, *, max_chars: int = 160, min_words: int = 4
) -> str:
    """The summary described in the module docstring (``""`` for no turns)."""
    if max_chars < 2 or min_words < 1:
        raise ValueError(f"need max_chars >= 2 and min_words >= 1, got {max_chars}, {min_words}")
    if not turns:
        return ""
    matrix = np.asarray(vectors, dtype=np.float64).reshape(len(turns), -1)
    mean = matrix.mean(axis=0)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(mean) or 1.0)
    cosine = matrix @ mean / np.where(norms > 0, norms, 1.0)
    long_enough = [len(t.text.split()) >= min_words for t in turns]
    if any(long_enough):
        cosine = np.where(long_enough, cosine, -np.inf)
    text = " ".join(turns[int(np.argmax(cosine))].text.split())
    sentences = [s for s in _SENTENCE.split(text) if s]
    kept = [s for s in sentences if len(s.split()) >= min_words] or sentences
    out = ""
    for sentence in kept:
        joined = f"{out} {sentence}" if out else sentence
        if len(joined) > max_chars:
            break
        out = joined
    if not out:
        first = kept[0] if kept else text
        out = first[: max_chars - 1].rstrip() + "…"
    return out
