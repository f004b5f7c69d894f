"""Boundary features for the learned combiner (numpy only, one turn at a time).

The learned combiner (:mod:`episeg.segmentation.learned`) scores each turn ``t``
as "opens a new episode" from a short vector of cheap features plus three
embedding terms. Everything is computed against the *open episode* (the turns
committed since the last boundary), exactly as the semantic and drift signals
see it, so the features depend only on the turns of the open episode: a
session resumed from its checkpoint rebuilds the same state, and streaming
equals batch.

Hand features (names in :data:`BASE_FEATURES`, then :data:`LOOKAHEAD_FEATURES`
when ``lookahead > 0``):

- ``d_prev1`` / ``d_prev2``: cosine distance of turn ``t`` to turn ``t-1`` / ``t-2``;
- ``d_mean2`` / ``d_mean4`` / ``d_mean8``: to the mean of the last 2 / 4 / 8
  turns of the open episode;
- ``d_decay``: to the recency-decayed mean of the open episode (the semantic
  signal's distance, decay 0.6); ``d_cum``: to its plain mean;
- ``ph``: the Page-Hinkley statistic of the distances to the cumulative mean
  with turn ``t`` included (the drift signal's statistic);
- ``d_prev_novel``: was turn ``t-1`` itself a shift (distance to the 4 before it);
- ``ep_len_log`` / ``ep_short``: turns since the last boundary (the window
  position), log and "fewer than 3";
- ``lex_novel``: share of turn ``t``'s content words not seen in the last 4
  turns; ``log_cw``, ``log_cw_prev``, ``no_cw``: turn lengths in content words;
- ``shift_cue``: the turn opens with or contains an explicit topic-opening
  marker (:data:`SHIFT_CUE`: "by the way", "another question", ...);
- role features ``roles_known`` and ``is_user``: **zero when roles are
  unknown** (corpora whose speaker labels are synthetic), so the model cannot
  lean on fake alternation. Only turns hints may cut are scored (user and
  system turns when roles are known). There are deliberately no features of
  *who spoke before* (previous actor, previous type, speaker change): in the
  spliced agent transcripts every gold boundary follows a tool or a user
  turn and no other user turn does, an artefact of the splicing that would
  teach "a user turn after a tool output opens an episode", the mid-task
  split after a tool error that must not happen;
- interactions (:data:`INTERACTION_FEATURES`): ``is_user`` times the
  distances (real-role data may weigh them differently) and ``ep_short``
  times the distances.

Embedding terms (weighted by 384-dim vectors in the model): the turn's own
embedding ``e`` (what kind of turn it is: a greeting, a new request), the shift
``A - B`` and the agreement ``A * B`` between the mean ``A`` of the turns from
``t`` to ``t + lookahead`` and the mean ``B`` of the last 4 episode turns.

>>> import numpy as np
>>> ctx = EpisodeContext()
>>> ctx.commit(TurnView.make(np.array([1.0, 0.0]), "user", None, "deploy the api"))
>>> new = TurnView.make(np.array([0.0, 1.0]), "user", None, "bake bread tonight")
>>> x, e, a, b = boundary_features(ctx, [new], lookahead=0, roles_known=True)
>>> names = feature_names(0)
>>> round(float(x[names.index("d_prev1")]), 3), float(x[names.index("lex_novel")])
(1.0, 1.0)
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from episeg.segmentation.signals.semantic import turn_words

__all__ = [
    "BASE_FEATURES",
    "INTERACTION_FEATURES",
    "LOOKAHEAD_FEATURES",
    "ROLE_FEATURES",
    "SHIFT_CUE",
    "EpisodeContext",
    "TurnView",
    "boundary_features",
    "feature_names",
]

BASE_FEATURES: tuple[str, ...] = (
    "d_prev1",
    "d_prev2",
    "d_mean2",
    "d_mean4",
    "d_mean8",
    "d_decay",
    "d_cum",
    "ph",
    "d_prev_novel",
    "ep_len_log",
    "ep_short",
    "lex_novel",
    "log_cw",
    "log_cw_prev",
    "no_cw",
    "shift_cue",
)
LOOKAHEAD_FEATURES: tuple[str, ...] = (
    "a_d_mean4",
    "a_d_decay",
    "n_d_mean4",
    "n_d_cur",
    "n_self",
    "a_lex_novel",
    "a_trunc",
)
ROLE_FEATURES: tuple[str, ...] = ("roles_known", "is_user")
_INTERACT: tuple[tuple[str, str], ...] = (
    *(
        ("is_user", n)
        for n in ("d_prev1", "d_prev2", "d_mean4", "d_decay", "d_cum", "lex_novel", "log_cw", "ph")
    ),
    *(("ep_short", n) for n in ("d_prev1", "d_mean4")),
)
INTERACTION_FEATURES: tuple[str, ...] = tuple(f"{a}*{b}" for a, b in _INTERACT)

SHIFT_CUE = re.compile(
    r"(?<![a-z])(another question|other question|different question|new question|"
    r"separate question|new topic|change (?:the|of) topic|by the way|btw|unrelated|"
    r"switching gears|on another note|one more thing|another thing|moving on|"
    r"i have another|one last|last question|i(?: would|'d) also like|i also (?:want|need|have))"
    r"(?![a-z])",
    re.IGNORECASE,
)
"""Explicit topic-opening discourse markers ("by the way", "another question", ...)."""
_HIST = 8
_DECAY = 0.6
_PH_DELTA = 0.05


def _indices(lookahead: bool) -> dict[str, int]:
    names = BASE_FEATURES + (LOOKAHEAD_FEATURES if lookahead else ()) + ROLE_FEATURES
    return {n: i for i, n in enumerate(names)}


def feature_names(lookahead: int) -> tuple[str, ...]:
    """Hand feature names, in the order :func:`boundary_features` returns them."""
    if lookahead < 0:
        raise ValueError(f"lookahead must be >= 0, got {lookahead}")
    return (
        BASE_FEATURES
        + (LOOKAHEAD_FEATURES if lookahead else ())
        + ROLE_FEATURES
        + INTERACTION_FEATURES
    )


_INDEX = {False: _indices(False), True: _indices(True)}


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


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    norm = math.sqrt(float(a @ a) * float(b @ b))
    return 1.0 - float(a @ b) / norm if norm > 0.0 else 1.0


def _distances(a: np.ndarray, rows: np.ndarray) -> list[float]:
    """Cosine distance of ``a`` to every row (1.0 against a zero vector), in one product."""
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows) * float(a @ a))
    dots = rows @ a
    safe = np.where(norms > 0.0, norms, 1.0)
    return [float(v) for v in np.where(norms > 0.0, 1.0 - dots / safe, 1.0)]


class EpisodeContext:
    """The committed turns of the open episode, as the features need them.

    ``commit`` adds a turn that stayed in (or opened) the episode; a boundary
    starts a fresh context. Holds the last 8 turns, the decayed and plain
    means, the Page-Hinkley state and the combiner's ``scores`` of this episode.
    """

    def __init__(self) -> None:
        self._tail: deque[TurnView] = deque(maxlen=_HIST)
        self.count = 0
        self._decayed: np.ndarray | None = None
        self._mean: np.ndarray | None = None
        self._ph_n = 0
        self._ph_avg = 0.0
        self._ph_sum = 0.0
        self._ph_min = 0.0
        self.scores: deque[float] = deque(maxlen=64)

    @property
    def tail(self) -> tuple[TurnView, ...]:
        return tuple(self._tail)

    def page_hinkley_with(self, distance: float) -> float:
        """The Page-Hinkley statistic if a turn at ``distance`` joined the episode."""
        if self.count < 2:
            return 0.0
        n = self._ph_n + 1
        avg = self._ph_avg + (distance - self._ph_avg) / n
        total = self._ph_sum + distance - avg - _PH_DELTA
        return total - min(self._ph_min, total)

    def commit(self, turn: TurnView) -> None:
        vec = turn.vec
        if self.count >= 2 and self._mean is not None:
            distance = _distance(vec, self._mean)
            self._ph_n += 1
            self._ph_avg += (distance - self._ph_avg) / self._ph_n
            self._ph_sum += distance - self._ph_avg - _PH_DELTA
            self._ph_min = min(self._ph_min, self._ph_sum)
        self.count += 1
        if self._decayed is None or self._mean is None:
            self._decayed, self._mean = vec.copy(), vec.copy()
        else:
            self._decayed = _DECAY * self._decayed + (1.0 - _DECAY) * vec
            self._mean = self._mean + (vec - self._mean) / self.count
        self._tail.append(turn)

    @property
    def decayed(self) -> np.ndarray:
        if self._decayed is None:
            raise ValueError("empty episode context")
        return self._decayed

    @property
    def mean(self) -> np.ndarray:
        if self._mean is None:
            raise ValueError("empty episode context")
        return self._mean


def _novel(words: frozenset[str], seen: frozenset[str]) -> float:
    return len(words - seen) / len(words) if words else 0.0


def boundary_features(
    context: EpisodeContext, pending: Sequence[TurnView], *, lookahead: int, roles_known: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x, e, A, B)`` for the candidate ``pending[0]`` (see the module docstring).

    ``pending[1:lookahead + 1]`` are the later turns it may peek at (fewer at
    the end of a stream). ``context`` must hold at least one turn.
    """
    if context.count == 0:
        raise ValueError("boundary_features needs a non-empty episode context")
    cur, prev = pending[0], context.tail
    after = pending[: lookahead + 1]
    e = cur.vec
    tail = np.array([p.vec for p in prev])
    m = len(tail)
    # Means of the last w turns from one reversed cumulative sum.
    back = np.cumsum(tail[::-1], axis=0)
    last4 = back[min(4, m) - 1] / min(4, m)
    refs = np.stack([
        tail[-1], tail[-2] if m >= 2 else tail[-1], back[min(2, m) - 1] / min(2, m), last4,
        back[m - 1] / m, context.decayed, context.mean,
    ])  # fmt: skip
    d_prev1, d_prev2, d_mean2, d_mean4, d_mean8, d_decay, d_cum = _distances(e, refs)
    f: list[float] = [d_prev1, d_prev2, d_mean2, d_mean4, d_mean8, d_decay, d_cum]
    f.append(context.page_hinkley_with(d_cum))
    novel = 0.0
    if m >= 2:
        before = (back[min(5, m) - 1] - tail[-1]) / (min(5, m) - 1)
        novel = _distances(tail[-1], before[None, :])[0]
    f.append(novel)
    f += [math.log1p(context.count), 1.0 if context.count < 3 else 0.0]
    seen = frozenset().union(*(p.words for p in prev[-4:]))
    f.append(_novel(cur.words, seen))
    f += [math.log1p(cur.n_words), math.log1p(prev[-1].n_words), 1.0 if cur.n_words == 0 else 0.0]
    f.append(1.0 if cur.cue else 0.0)
    a_mean = after[0].vec if len(after) == 1 else np.mean([a.vec for a in after], axis=0)
    if lookahead > 0:
        f += [_distance(a_mean, last4), _distance(a_mean, context.decayed)]
        if len(after) > 1:
            nxt = after[1].vec
            own = np.mean([*tail[-3:], e], axis=0)
            f += [_distance(nxt, last4), _distance(nxt, e), _distance(nxt, own)]
        else:
            f += [f[3], 0.0, 0.0]
        f.append(_novel(frozenset().union(*(a.words for a in after)), seen))
        f.append(1.0 if len(after) < lookahead + 1 else 0.0)
    rk = 1.0 if roles_known else 0.0
    f += [rk, rk * (cur.actor == "user")]
    index = _INDEX[lookahead > 0]
    f += [f[index[a]] * f[index[b]] for a, b in _INTERACT]
    return np.asarray(f, dtype=np.float64), e, a_mean, last4
