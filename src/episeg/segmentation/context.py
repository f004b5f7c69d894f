"""The open episode as the learned combiner's features see it, kept up to date turn by turn.

:class:`EpisodeContext` holds what :func:`~episeg.segmentation.features.boundary_features`
measures a candidate turn against: the last 8 turns of the open episode, their
recency-decayed and plain means, the Page-Hinkley state of the distances to the
plain mean, and the combiner's scores in this episode.

Every distance a candidate needs is a cosine between its vector ``e`` and a sum
of episode vectors, so the context keeps those vectors as the rows of one
matrix and the *squared norms* of every sum it will be asked about (the last
1, 2, 4, 8 turns; the decayed and plain means) as plain floats, updated from
the dot products each commit computes anyway. One matrix-vector product then
gives every dot product a candidate needs (:meth:`EpisodeContext.dots`), and
the distances are scalar arithmetic: a few numpy calls per turn instead of
~20, which is most of the segmenter's own time after an encode (the streaming
benchmark in docs/RESULTS.md). The squared norms are exact sums, not
approximations; they differ from norms computed afresh only by float rounding
(``tests/segmentation/test_context.py`` compares them with the direct
computation on random streams).

>>> import numpy as np
>>> ctx = EpisodeContext()
>>> for vec in ([1.0, 0.0], [1.0, 1.0], [0.0, 1.0]):
...     ctx.commit(TurnView.make(np.array(vec), "user", None, "deploy the api"))
>>> ctx.count, [round(ctx.window_norm2(w), 3) for w in (1, 2, 3)]
(3, [1.0, 5.0, 8.0])
>>> dots = ctx.dots(TurnView.make(np.array([0.0, 2.0]), "user", None, "bake bread"))
>>> dots.tail, round(dots.cum, 3), round(ctx.mean_norm2, 3)
([2.0, 2.0, 0.0], 1.333, 0.889)
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass

import numpy as np

from episeg.segmentation.signals.semantic import turn_words

__all__ = [
    "HISTORY",
    "SHIFT_CUE",
    "CandidateDots",
    "EpisodeContext",
    "TurnView",
    "cosine_distance",
]

SHIFT_CUE = re.compile(
    r"(?<![a-z])(another question|other question|different question|new question|"
    r"separate question|new topic|change (?:the|of) topic|by the way|btw|unrelated|"
    r"switching gears|on another note|one more thing|another thing|moving on|"
    r"i have another|one last|last question|i(?: would|'d) also like|i also (?:want|need|have))"
    r"(?![a-z])",
    re.IGNORECASE,
)
"""Explicit topic-opening discourse markers ("by the way", "another question", ...)."""

HISTORY = 8
"""Turns of the open episode the features look back at."""
DECAY = 0.6
"""Weight the decayed mean keeps per turn (the semantic signal's default)."""
PH_DELTA = 0.05
"""The Page-Hinkley test's tolerance (the drift signal's default)."""
_DEC, _MEAN = HISTORY, HISTORY + 1  # matrix rows of the decayed and plain means


def cosine_distance(dot: float, norm2_a: float, norm2_b: float) -> float:
    """``1 - cos`` from a dot product and two squared norms (1.0 against a zero vector).

    >>> cosine_distance(0.0, 1.0, 4.0), cosine_distance(2.0, 1.0, 4.0)
    (1.0, 0.0)
    >>> cosine_distance(1.0, 0.0, 1.0)
    1.0

    A squared norm kept by running sums can come out a rounding error below 0
    (the mean of a turn and its exact opposite): that is a zero vector too.

    >>> cosine_distance(0.0, -4.4e-16, 1.0)
    1.0
    """
    product = norm2_a * norm2_b
    return 1.0 - dot / math.sqrt(product) if product > 0.0 else 1.0


@dataclass(frozen=True, slots=True)
class TurnView:
    """What the features read from one turn: unit vector, actor, type, content words."""

    vec: np.ndarray
    actor: str
    type: str | None
    words: frozenset[str]
    n_words: int
    cue: bool = False

    @classmethod
    def make(cls, vec: np.ndarray, actor: str, type_: str | None, text: str) -> TurnView:
        words = turn_words(text)
        cue = SHIFT_CUE.search(text[:500]) is not None
        vec64 = np.asarray(vec, dtype=np.float64)
        return cls(vec64, actor, type_, frozenset(words), len(words), cue)


@dataclass(frozen=True, slots=True)
class CandidateDots:
    """A candidate vector's dot products with the open episode (from :meth:`EpisodeContext.dots`).

    ``tail`` is newest first: ``tail[0]`` is the dot product with the last turn.
    """

    turn: TurnView
    norm2: float
    tail: list[float]
    decayed: float
    cum: float


class EpisodeContext:
    """The committed turns of the open episode, as the features need them.

    ``commit`` adds a turn that stayed in (or opened) the episode; a boundary
    starts a fresh context. The context depends only on the turns committed to
    it, in order, so a session resumed from its checkpoint rebuilds it exactly.
    """

    def __init__(self) -> None:
        self._tail: deque[TurnView] = deque(maxlen=HISTORY)
        self.count = 0
        # Rows HISTORY - m .. HISTORY - 1: the last m turns, oldest first; then the two means.
        self._rows: np.ndarray | None = None
        self._norm2: list[float] = []  # squared norm of each tail turn, newest first
        self._window: list[float] = [0.0]  # [w]: squared norm of the sum of the newest w turns
        self.decayed_norm2 = 0.0
        self.mean_norm2 = 0.0
        self.novel = 0.0
        self._ph_n = 0
        self._ph_avg = 0.0
        self._ph_sum = 0.0
        self._ph_min = 0.0
        self._last: CandidateDots | None = None
        self.scores: deque[float] = deque(maxlen=64)

    @property
    def tail(self) -> tuple[TurnView, ...]:
        """The last (up to 8) committed turns, oldest first."""
        return tuple(self._tail)

    def window_norm2(self, w: int) -> float:
        """Squared norm of the sum of the newest ``w`` turns (``1 <= w <= len(tail)``)."""
        return self._window[w]

    def tail_norm2(self, back: int) -> float:
        """Squared norm of the turn ``back`` places before the newest (0: the newest)."""
        return self._norm2[back]

    def last(self, w: int) -> np.ndarray:
        """The mean vector of the newest ``w`` turns (``1 <= w <= len(tail)``)."""
        rows = self._matrix()
        total: np.ndarray = rows[HISTORY - w : HISTORY].sum(axis=0)
        return total / w

    @property
    def decayed(self) -> np.ndarray:
        """The recency-decayed mean (decay 0.6) of the episode's turns (a copy)."""
        return np.array(self._matrix()[_DEC])

    @property
    def mean(self) -> np.ndarray:
        """The plain mean of the episode's turns (a copy)."""
        return np.array(self._matrix()[_MEAN])

    def _matrix(self) -> np.ndarray:
        if self._rows is None or not self.count:
            raise ValueError("empty episode context")
        return self._rows

    def dots(self, turn: TurnView) -> CandidateDots:
        """``turn``'s dot products with every tail turn and both means, in one product."""
        last = self._last
        if last is not None and last.turn is turn:
            return last
        m = len(self._tail)
        rows = self._matrix()
        products: list[float] = (rows[HISTORY - m :] @ turn.vec).tolist()
        norm2 = float(turn.vec @ turn.vec)
        dots = CandidateDots(turn, norm2, products[m - 1 :: -1], products[m], products[m + 1])
        self._last = dots
        return dots

    def page_hinkley_with(self, distance: float) -> float:
        """The Page-Hinkley statistic if a turn at ``distance`` joined the episode."""
        if self.count < 2:
            return 0.0
        n = self._ph_n + 1
        avg = self._ph_avg + (distance - self._ph_avg) / n
        total = self._ph_sum + distance - avg - PH_DELTA
        return total - min(self._ph_min, total)

    def commit(self, turn: TurnView) -> None:
        """Add ``turn`` to the episode (it stayed in, or it opened this one)."""
        vec = turn.vec
        if not self.count:
            self._start(turn)
            return
        d = self.dots(turn)
        self._last = None
        if self.count >= 2:
            distance = cosine_distance(d.cum, d.norm2, self.mean_norm2)
            self._ph_n += 1
            self._ph_avg += (distance - self._ph_avg) / self._ph_n
            self._ph_sum += distance - self._ph_avg - PH_DELTA
            self._ph_min = min(self._ph_min, self._ph_sum)
        self.count += 1
        rows = self._matrix()
        keep = 1.0 - DECAY
        rows[_DEC] *= DECAY
        rows[_DEC] += keep * vec
        self.decayed_norm2 = (
            DECAY * DECAY * self.decayed_norm2 + 2.0 * DECAY * keep * d.decayed
        ) + keep * keep * d.norm2
        old, new = 1.0 - 1.0 / self.count, 1.0 / self.count
        rows[_MEAN] += (vec - rows[_MEAN]) / self.count
        self.mean_norm2 = (
            old * old * self.mean_norm2 + 2.0 * old * new * d.cum
        ) + new * new * d.norm2
        # Sums of the newest w turns after this one: this turn plus the newest w - 1 before it.
        m = min(len(self._tail) + 1, HISTORY)
        prefix = [0.0]
        for dot in d.tail[: m - 1]:
            prefix.append(prefix[-1] + dot)
        before = self._window
        self._window = [0.0]
        self._window += [before[w - 1] + d.norm2 + 2.0 * prefix[w - 1] for w in range(1, m + 1)]
        # Was this turn itself a shift: its distance to the mean of the (up to) 4 before it.
        k = min(5, m) - 1
        self.novel = cosine_distance(prefix[k], d.norm2, before[k])
        if m > 1:
            rows[HISTORY - m : HISTORY - 1] = rows[HISTORY - m + 1 : HISTORY]
        rows[HISTORY - 1] = vec
        self._norm2 = [d.norm2, *self._norm2[: HISTORY - 1]]
        self._tail.append(turn)

    def _start(self, turn: TurnView) -> None:
        vec = turn.vec
        # Only a fresh context starts (a boundary makes a new one): allocate here.
        rows = self._rows = np.zeros((HISTORY + 2, len(vec)), dtype=np.float64)
        rows[HISTORY - 1] = rows[_DEC] = rows[_MEAN] = vec
        norm2 = float(vec @ vec)
        self.count = 1
        self._norm2 = [norm2]
        self._window = [0.0, norm2]
        self.decayed_norm2 = self.mean_norm2 = norm2
        self.novel = 0.0
        self._tail.append(turn)
