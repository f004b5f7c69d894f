"""Baselines: TextTiling over turns, an even split, and the degenerate references.

TextTiling follows Hearst (1997, "TextTiling: Segmenting Text into
Multi-paragraph Subtopic Passages", Computational Linguistics 23(1)) with the
block-comparison method, adapted so that a *turn* is the token sequence and
every inter-turn gap is a candidate (the role paragraph breaks play in Hearst):

1. each turn is lower-cased, split into alphabetic tokens, stop words removed
   (scikit-learn's English list; nltk's corpus needs a download) and Porter-stemmed;
2. at gap ``g`` the term-frequency vectors of the ``block`` turns before and the
   ``block`` turns after are compared by cosine similarity (with an embedder,
   the cosine of the blocks' mean embeddings instead: "embedding TextTiling");
3. the similarity curve is smoothed by a centred moving average of half-width
   ``smoothing`` (``rounds`` times), as in nltk's ``TextTilingTokenizer``;
4. depth score = (highest point reached climbing left - s) + (climbing right - s);
5. a gap is a boundary if it is a local minimum of the smoothed curve and its
   depth exceeds ``mean - std / 2`` of all depth scores (Hearst's liberal cutoff).

nltk's ``TextTilingTokenizer`` works on raw text with pseudo-sentences of 20
words and needs paragraph breaks and the stop-word corpus, so it is not wrapped.

>>> from episeg.types import Turn
>>> texts = ["the cat sat on the mat", "cats like mats", "my cat naps on mats",
...          "stock prices fell today", "markets and stock prices", "prices of stock fell"]
>>> turns = [Turn(actor="user", text=t, ts=float(i)) for i, t in enumerate(texts)]
>>> texttiling(turns, block=2)
[3]
>>> even_boundaries(10, every=4), all_boundaries(4), no_boundaries(4)
([4, 8], [1, 2, 3], [])
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from episeg.errors import ConfigError
from episeg.types import Turn
from episeg.typing import Embedder

__all__ = [
    "SegmentFn",
    "all_boundaries",
    "depth_scores",
    "even_boundaries",
    "make_baseline",
    "no_boundaries",
    "texttiling",
]

SegmentFn = Callable[[Sequence[Turn]], tuple[list[int], dict[str, Any]]]
_WORD = re.compile(r"[a-z]+")


@lru_cache(maxsize=1)
def _lexicon() -> tuple[frozenset[str], Callable[[str], str]]:
    from nltk.stem import PorterStemmer
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS), PorterStemmer().stem


def _bags(turns: Sequence[Turn]) -> list[Counter[str]]:
    stop, stem = _lexicon()
    return [Counter(stem(w) for w in _WORD.findall(t.text.lower()) if w not in stop) for t in turns]


def _cosine_bags(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(v * b[w] for w, v in a.items() if w in b)
    norm = math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def _smooth(values: list[float], half_width: int, rounds: int) -> list[float]:
    for _ in range(rounds):
        values = [
            float(np.mean(values[max(0, i - half_width) : i + half_width + 1]))
            for i in range(len(values))
        ]
    return values


def depth_scores(scores: Sequence[float]) -> list[float]:
    """Hearst's depth score of every point of a similarity curve.

    >>> depth_scores([0.9, 0.5, 0.8])
    [0.0, 0.7000000000000001, 0.0]
    """
    out = []
    for i, s in enumerate(scores):
        left = right = s
        for j in range(i - 1, -1, -1):
            if scores[j] < left:
                break
            left = scores[j]
        for j in range(i + 1, len(scores)):
            if scores[j] < right:
                break
            right = scores[j]
        out.append((left - s) + (right - s))
    return out


def texttiling(
    turns: Sequence[Turn],
    *,
    block: int = 3,
    smoothing: int = 1,
    rounds: int = 1,
    embedder: Embedder | None = None,
) -> list[int]:
    """TextTiling boundaries (indices of turns that open a segment); see the module doc."""
    if block < 1 or smoothing < 0 or rounds < 0:
        raise ConfigError(
            f"need block >= 1, smoothing >= 0, rounds >= 0; got {block}, {smoothing}, {rounds}"
        )
    n = len(turns)
    if n < 3:
        return []
    sims: list[float] = []
    if embedder is None:
        bags = _bags(turns)
        for g in range(1, n):
            left: Counter[str] = sum(bags[max(0, g - block) : g], Counter())
            right: Counter[str] = sum(bags[g : g + block], Counter())
            sims.append(_cosine_bags(left, right))
    else:
        vecs = np.asarray(embedder.embed([t.text for t in turns]), dtype=np.float64)
        for g in range(1, n):
            a = vecs[max(0, g - block) : g].mean(axis=0)
            b = vecs[g : g + block].mean(axis=0)
            norm = float(np.linalg.norm(a) * np.linalg.norm(b))
            sims.append(float(a @ b) / norm if norm else 0.0)
    smooth = _smooth(sims, smoothing, rounds)
    depth = depth_scores(smooth)
    cutoff = float(np.mean(depth) - np.std(depth) / 2)
    out = []
    for i, d in enumerate(depth):
        is_min = (i == 0 or smooth[i] <= smooth[i - 1]) and (
            i == len(smooth) - 1 or smooth[i] <= smooth[i + 1]
        )
        if d > cutoff and d > 0 and is_min:
            out.append(i + 1)
    return out


def even_boundaries(n: int, *, every: int) -> list[int]:
    """A boundary every ``every`` turns."""
    if every < 1:
        raise ConfigError(f"every must be >= 1, got {every}")
    return list(range(every, n, every))


def no_boundaries(n: int) -> list[int]:
    """The one-segment segmentation."""
    return []


def all_boundaries(n: int) -> list[int]:
    """Every turn its own segment."""
    return list(range(1, n))


def make_baseline(
    name: str, *, every: int | None = None, block: int = 3, embedder: Embedder | None = None
) -> SegmentFn:
    """A ``segment_fn`` for the runner: ``texttiling``, ``texttiling-emb``, ``even``,
    ``none`` or ``all`` (``even`` needs ``every``; ``texttiling-emb`` an embedder).

    >>> make_baseline("even", every=2)([None] * 5)  # type: ignore[list-item]
    ([2, 4], {'judge_calls': 0, 'embed_calls': 0})
    """

    def counted(boundaries: list[int], embeds: int = 0) -> tuple[list[int], dict[str, Any]]:
        return boundaries, {"judge_calls": 0, "embed_calls": embeds}

    if name == "texttiling":
        return lambda turns: counted(texttiling(turns, block=block))
    if name == "texttiling-emb":
        if embedder is None:
            raise ConfigError("texttiling-emb needs an embedder")
        emb = embedder
        return lambda turns: counted(texttiling(turns, block=block, embedder=emb), len(turns))
    if name == "even":
        if every is None:
            raise ConfigError("the even baseline needs every=<turns per segment>")
        step = every
        return lambda turns: counted(even_boundaries(len(turns), every=step))
    if name == "none":
        return lambda turns: counted(no_boundaries(len(turns)))
    if name == "all":
        return lambda turns: counted(all_boundaries(len(turns)))
    raise ConfigError(
        f"unknown baseline {name!r}; valid: texttiling, texttiling-emb, even, none, all"
    )
