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
from collections.abc import Sequence

import numpy as np

from episeg.segmentation.context import SHIFT_CUE, EpisodeContext, TurnView, cosine_distance

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


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    return cosine_distance(float(a @ b), float(a @ a), float(b @ b))


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
    m = len(prev)
    d = context.dots(cur)
    ee, t = d.norm2, d.tail
    w2, w4 = min(2, m), min(4, m)
    f: list[float] = [
        cosine_distance(t[0], ee, context.tail_norm2(0)),
        cosine_distance(t[1], ee, context.tail_norm2(1)) if m >= 2 else 0.0,
        cosine_distance(sum(t[:w2]), ee, context.window_norm2(w2)),
        cosine_distance(sum(t[:w4]), ee, context.window_norm2(w4)),
        cosine_distance(sum(t), ee, context.window_norm2(m)),
        cosine_distance(d.decayed, ee, context.decayed_norm2),
        cosine_distance(d.cum, ee, context.mean_norm2),
    ]
    if m < 2:  # d_prev2 falls back to the last turn
        f[1] = f[0]
    f.append(context.page_hinkley_with(f[6]))
    f.append(context.novel)
    f += [math.log1p(context.count), 1.0 if context.count < 3 else 0.0]
    seen = frozenset().union(*(p.words for p in prev[-4:]))
    f.append(_novel(cur.words, seen))
    f += [math.log1p(cur.n_words), math.log1p(prev[-1].n_words), 1.0 if cur.n_words == 0 else 0.0]
    f.append(1.0 if cur.cue else 0.0)
    last4 = context.last(w4)
    a_mean = e if len(after) == 1 else np.mean([a.vec for a in after], axis=0)
    if lookahead > 0:
        decayed = context.decayed
        f += [_distance(a_mean, last4), _distance(a_mean, decayed)]
        if len(after) > 1:
            nxt = after[1].vec
            own = np.mean([*(p.vec for p in prev[-3:]), e], axis=0)
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
