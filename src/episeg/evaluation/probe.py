"""Issue 11's probe, re-implemented as a baseline: logistic regression over frozen MiniLM vectors.

For each turn ``t > 0`` the features are the turn's vector ``e``, the mean
``c`` of the two turns before it, ``e * c`` and ``|e - c|`` (1,536 numbers, no
hand features, no roles). A logistic regression (scikit-learn, ``C=1``) is
fitted on the tuning dialogues, and its probability threshold is the one with
the lowest protocol-A Pk on those dialogues' out-of-fold probabilities (5
folds, seeded, dealt per content group as the trainer's: a dialogue's copies and
an agent task's other trials share a fold), as the learned combiner's threshold
is chosen (the issue's probe chose it on TIAGE dev; here tuning parts only).
Its folds were per dialogue until the evening of 2026-12-07. Until 2026-12-07 it was
chosen on the fitted dialogues' own probabilities, which favoured episeg: the
probe's SuperDialseg report Pk was 0.267 that way, 0.257 out of fold. For
DialSeg711 the tuning dialogues are ``tiage_train`` plus the SuperDialseg
hash-tune half, the probe's own training data. Issue 11 reports this probe at
Pk 0.309 (SuperDialseg test), 0.403 (TIAGE test) and 0.547 on DialSeg711 at
twice the gold density; numbers here are this re-implementation's.

>>> from episeg.embedders import HashingEmbedder
>>> from episeg.evaluation.datasets import Dialogue
>>> from episeg.types import Turn
>>> texts = ["cats purr", "cats nap", "cats purr again", "stocks fell", "stocks rose"]
>>> turns = [Turn(actor="user", text=t, ts=float(i)) for i, t in enumerate(texts)]
>>> fn = train_probe([Dialogue("d", "demo", turns, [3])] * 4, HashingEmbedder(dim=32))
>>> cuts, stats = fn(turns)
>>> stats["embed_calls"]
5
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from episeg.evaluation.baselines import SegmentFn
from episeg.evaluation.datasets import Dialogue
from episeg.evaluation.protocols import score_protocols
from episeg.evaluation.train_folds import row_key
from episeg.types import Turn
from episeg.typing import Embedder

__all__ = ["probe_features", "train_probe"]

_FOLDS = 5


def probe_features(vectors: np.ndarray) -> np.ndarray:
    """Rows for turns ``1 .. n-1``: ``[e, c, e * c, |e - c|]``, ``c`` = mean of 2 turns before."""
    rows = []
    for t in range(1, len(vectors)):
        e = vectors[t]
        c = vectors[max(0, t - 2) : t].mean(axis=0)
        rows.append(np.concatenate([e, c, e * c, np.abs(e - c)]))
    return np.asarray(rows, dtype=np.float64).reshape(-1, 4 * vectors.shape[1])


def train_probe(tuning: Sequence[Dialogue], embedder: Embedder, *, seed: int = 0) -> SegmentFn:
    """Fit the probe on ``tuning`` and return its ``segment_fn``."""
    from sklearn.linear_model import LogisticRegression

    feats = [probe_features(embedder.embed([t.text for t in d.turns])) for d in tuning]
    labels = [[1 if t in set(d.boundaries) else 0 for t in range(1, len(d))] for d in tuning]

    def fit(rows: Sequence[tuple[int, np.ndarray]]) -> Any:
        model = LogisticRegression(C=1.0, max_iter=2000, random_state=seed)
        model.fit(
            np.concatenate([feats[i][mask] for i, mask in rows]),
            np.concatenate([np.asarray(labels[i], dtype=int)[mask] for i, mask in rows]),
        )
        return model

    def predict(model: Any, x: np.ndarray) -> np.ndarray:
        return model.predict_proba(x)[:, 1] if len(x) else np.zeros(0)

    model = fit([(i, np.ones(len(feats[i]), dtype=bool)) for i in range(len(tuning))])
    probs = _out_of_fold(tuning, feats, fit, predict, seed)
    if probs is None:  # too few content groups to fold: in-sample, as before
        probs = [predict(model, x) for x in feats]

    def cuts(p: np.ndarray, threshold: float) -> list[int]:
        return [int(t) + 1 for t in np.flatnonzero(p >= threshold)]

    def pk_at(threshold: float) -> float:
        hyps = [cuts(p, threshold) for p in probs]
        refs = [d.boundaries for d in tuning]
        return score_protocols(refs, hyps, [len(d) for d in tuning]).pk_a

    threshold = min((round(0.05 * i, 2) for i in range(1, 20)), key=pk_at)

    def run(turns: Sequence[Turn]) -> tuple[list[int], dict[str, Any]]:
        p = predict(model, probe_features(embedder.embed([t.text for t in turns])))
        return cuts(p, threshold), {"judge_calls": 0, "embed_calls": len(turns)}

    return run


def _out_of_fold(
    tuning: Sequence[Dialogue],
    feats: Sequence[np.ndarray],
    fit: Callable[[Sequence[tuple[int, np.ndarray]]], Any],
    predict: Callable[[Any, np.ndarray], np.ndarray],
    seed: int,
) -> list[np.ndarray] | None:
    """Each row's probability from a model that never saw its content group; None if < 5 groups.

    Folds are dealt per content group (:func:`~episeg.evaluation.train_folds.row_key`, as
    the trainer's): SuperDialseg holds every dialogue at least twice and an agent_tau task
    recurs across streams, so per-dialogue folds scored rows with copies in training.
    """
    keys = [[row_key(d, t) for t in range(1, len(d))] for d in tuning]
    groups = sorted({key for row in keys for key in row})
    if len(groups) < _FOLDS:
        return None
    perm = np.random.default_rng(seed).permutation(len(groups)) % _FOLDS
    fold_of = dict(zip(groups, perm.tolist(), strict=True))
    folds = [np.asarray([fold_of[key] for key in row], dtype=int) for row in keys]
    probs = [np.zeros(len(x)) for x in feats]
    for k in range(_FOLDS):
        train = [(i, f != k) for i, f in enumerate(folds) if (f != k).any()]
        held = [(i, f == k) for i, f in enumerate(folds) if (f == k).any()]
        if not train or not held:
            continue
        others = fit(train)
        for i, mask in held:
            probs[i][mask] = predict(others, feats[i][mask])
    return probs
