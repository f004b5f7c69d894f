"""A BM25 index over one tenant's texts (``bm25s``), kept fresh by small rebuilds.

``bm25s`` builds an immutable index, so :class:`LexicalIndex` keeps two: a
*main* index over most documents and a small *delta* index over the ones
added since the main was built. Adding marks the delta stale; the next
:meth:`LexicalIndex.top` rebuilds only the delta (cheap), and folds it into
the main once it holds more than ``merge_ratio`` of the main (or more than
``merge_min`` documents on a small index), so the total rebuild cost stays
linear in the documents added. Scores of the two parts are merged as they
are (the delta's IDF is computed over the delta only: a small, bounded
approximation until the next merge). Removal hides a key at once and drops
it from the index at the next rebuild of its part.

Threads: writers (``add``, ``remove``) and the rebuild a query starts hold one
lock, so a query running beside a write (recall beside a delete) neither reads
a half-changed document table nor loses the write; the scoring itself runs
outside the lock on the parts current when it began.

Tokens: lower case, English stop words removed, Snowball English stemmer
(``PyStemmer``); documents are tokenised once, when added.

>>> idx = LexicalIndex()
>>> idx.add(["a", "b"], ["Alice went to the climbing gym", "Bob paints sunsets"])
>>> [(key, round(score, 3)) for key, score in idx.top("Who went to a climbing gym?", k=5)]
[('a', 0.782)]
>>> idx.remove(["a"]); idx.top("climbing gym", k=5)
[]
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Hashable, Sequence
from typing import Any, Generic, TypeVar

import bm25s
import numpy as np
import Stemmer

__all__ = ["LexicalIndex", "tokenize"]

K = TypeVar("K", bound=Hashable)
_STEMMER = Stemmer.Stemmer("english")
# bm25s sets its own logger to DEBUG at import, so every index build printed
# "Building index from tokens" through the application's handlers (seen in
# `episeg demo`). Its routine messages are not ours to show.
logging.getLogger("bm25s").setLevel(logging.WARNING)


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased, stop-word-free, stemmed tokens of each text.

    >>> tokenize(["The deploys are failing!"])
    [['deploy', 'fail']]
    """
    if not texts:
        return []
    tokens: Any = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False
    )
    return [list(t) for t in tokens]


def _threshold(scores: np.ndarray, k: int, *, rounds: int = 24) -> float:
    """A positive score ``t`` with ``k <= #(scores >= t)``, small if possible; else the least float.

    Every row scoring at least the ``k``-th best (positive) score, ties
    included, scores ``>= t``, so selecting among those rows is exact. It
    saves a partition of every matching row (a common word matches ~10^5):
    bisect ``t`` between 0 and the best score until ``#(scores >= t)`` lies
    in ``[k, 8k]`` (each step one vectorised count).

    >>> scores = np.arange(10_000, dtype=np.float32)
    >>> t = _threshold(scores, 10)
    >>> 0 < t and 10 <= int(np.count_nonzero(scores >= t)) <= 80
    True
    """
    floor = float(np.nextafter(np.float32(0), np.float32(1)))  # any positive score
    best = float(scores.max(initial=0.0))
    if best <= 0.0 or np.count_nonzero(scores >= best) >= k:
        return max(best, floor)
    low, high = floor, best  # #(>= low) >= k (or low is the floor); #(>= high) < k
    if np.count_nonzero(scores >= low) <= 8 * k:
        return low
    for _ in range(rounds):
        mid = float(np.float32((low + high) / 2))
        if not low < mid < high:
            break
        n = np.count_nonzero(scores >= mid)
        if n < k:
            high = mid
        elif n > 8 * k:
            low = mid
        else:
            return mid
    return low


class _Part(Generic[K]):
    """One immutable bm25s index, the keys of its rows and which rows are still live."""

    def __init__(self, keys: list[K], tokens: list[list[str]]) -> None:
        self.keys = keys
        self.row = {key: n for n, key in enumerate(keys)}
        self.live = np.ones(len(keys), dtype=bool)
        self._bm25: Any = None
        if any(tokens):  # bm25s cannot index documents without one word ("👍", "???", "")
            self._bm25 = bm25s.BM25()
            self._bm25.index(tokens, show_progress=False)

    def kill(self, key: K) -> None:
        """Hide ``key``'s row (replaced or removed) from every later query."""
        row = self.row.get(key)
        if row is not None:
            self.live[row] = False

    def top(self, query: list[str], k: int) -> list[tuple[K, float]]:
        """The ``k`` best live rows with a positive score, best first, ties in row order."""
        if self._bm25 is None or not query:
            return []
        scores = np.asarray(self._bm25.get_scores(query), dtype=np.float32)
        scores[~self.live] = 0.0
        rows = np.flatnonzero(scores >= _threshold(scores, k))
        if len(rows) > k:
            # exact top k without sorting every match: everything above the k-th
            # score, then the rows tied with it in row order
            kth = np.partition(scores[rows], len(rows) - k)[len(rows) - k]
            above = rows[scores[rows] > kth]
            tied = rows[scores[rows] == kth][: k - len(above)]
            rows = np.concatenate([above, tied])
        rows = rows[np.lexsort((rows, -scores[rows]))]
        keys, found = self.keys, zip(rows.tolist(), scores[rows].tolist(), strict=True)
        return [(keys[row], score) for row, score in found]


class LexicalIndex(Generic[K]):
    """BM25 over documents keyed by ``K``; see the module docstring.

    Parameters
    ----------
    merge_ratio : float, default 0.1
        The delta is folded into the main index when it exceeds this share of
        the main (and the main is rebuilt when this share of its rows is dead).
    merge_min : int, default 2000
        ... but a delta of up to this many documents is never folded in.
    """

    def __init__(self, *, merge_ratio: float = 0.1, merge_min: int = 2000) -> None:
        if not merge_ratio > 0 or merge_min < 1:
            raise ValueError(
                f"need merge_ratio > 0 and merge_min >= 1, got {merge_ratio}, {merge_min}"
            )
        self._merge_ratio = merge_ratio
        self._merge_min = merge_min
        self._parts: tuple[_Part[K], _Part[K]] = (_Part([], []), _Part([], []))
        self._docs: dict[K, list[str]] = {}
        self._outside_main: dict[K, None] = {}  # keys not (or no longer) in the main part
        self._dirty = False
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, key: object) -> bool:
        return key in self._docs

    def documents(self) -> dict[K, list[str]]:
        """Every live key and its tokens (read-only view, for persistence)."""
        return self._docs

    def add(self, keys: Sequence[K], texts: Sequence[str]) -> None:
        """Index ``texts`` under ``keys``; an existing key is replaced."""
        if len(keys) != len(texts):
            raise ValueError(f"{len(keys)} keys for {len(texts)} texts")
        self.add_tokens(keys, tokenize(texts))

    def add_tokens(self, keys: Sequence[K], tokens: Sequence[list[str]]) -> None:
        """Index already tokenised documents (see :func:`tokenize`) under ``keys``."""
        if len(keys) != len(tokens):
            raise ValueError(f"{len(keys)} keys for {len(tokens)} token lists")
        with self._lock:
            main = self._parts[0]
            for key, doc in zip(keys, tokens, strict=True):
                if key not in self._outside_main:
                    main.kill(key)
                self._docs[key] = doc
                self._outside_main[key] = None
                self._dirty = True

    def remove(self, keys: Sequence[K]) -> None:
        """Hide ``keys`` from every later query; unknown keys are ignored."""
        with self._lock:
            main = self._parts[0]
            for key in keys:
                if self._docs.pop(key, None) is not None:
                    if self._outside_main.pop(key, 0) == 0:
                        main.kill(key)
                    self._dirty = True

    def top(self, query: str, k: int) -> list[tuple[K, float]]:
        """The ``k`` best keys with a positive BM25 score for ``query``, best first.

        Ties keep index order (the main index first, then insertion order).
        """
        return self.top_tokens(tokenize([query])[0], k)

    def top_tokens(self, tokens: list[str], k: int) -> list[tuple[K, float]]:
        """:meth:`top` for a query already tokenised with :func:`tokenize`."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        with self._lock:
            self._refresh()
            parts = self._parts
        if not tokens:
            return []
        found = [hit for part in parts for hit in part.top(tokens, k)]
        found.sort(key=lambda item: -item[1])
        return found[:k]

    def _refresh(self) -> None:
        """Rebuild the delta (or fold it into the main) if documents changed (under the lock)."""
        if not self._dirty:
            return
        main, _ = self._parts
        delta = list(self._outside_main)
        main_live = len(self._docs) - len(delta)
        dead = len(main.keys) - main_live
        if len(delta) > max(self._merge_min, self._merge_ratio * main_live) or (
            dead > self._merge_ratio * len(main.keys)
        ):
            keys = list(self._docs)
            self._parts = (_Part(keys, [self._docs[key] for key in keys]), _Part([], []))
            self._outside_main = {}
        else:
            self._parts = (main, _Part(delta, [self._docs[key] for key in delta]))
        self._dirty = False
