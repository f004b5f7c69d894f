"""Fitting and decoding the learned boundary model (used by ``episeg train segmenter``).

:func:`fit` is PCA of the three embedding terms plus a logistic regression,
folded back into a :class:`~episeg.segmentation.model.BoundaryModel`;
:func:`logits` scores rows with it; :func:`decode` thresholds out-of-fold
logits and scores the result under protocol A; :func:`cross_validated` is the
trainer's whole recipe (threshold and judge band by k-fold CV, then the fit).

>>> rows = TrainingRows(names=("a",))
>>> for g in range(4):
...     v = np.array([g, g % 2, 1.0]) / 4
...     rows.add(np.array([float(g % 2)]), v, v, 1 - v, label=bool(g % 2), eligible=True,
...              group=g, t=1)
>>> model = fit([rows], dims=1, c=1.0, seed=0, lookahead=0)
>>> bool(logits(model, rows, np.ones(4, bool))[1] > logits(model, rows, np.ones(4, bool))[0])
True
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from episeg.errors import ConfigError
from episeg.evaluation.protocols import score_protocols
from episeg.evaluation.train_folds import corpus_folds
from episeg.evaluation.train_rows import Corpus, TrainingRows, subset
from episeg.segmentation.model import BoundaryModel

__all__ = [
    "FIT_MAX_ITER",
    "FIT_TOL",
    "TAUS",
    "TERM_DIMS",
    "CrossValidated",
    "band_for",
    "cross_validated",
    "curve_rows",
    "decode",
    "fit",
    "logits",
    "near_best_lines",
]

log = logging.getLogger(__name__)

TAUS = tuple(round(-2.0 + 0.125 * i, 3) for i in range(25))
"""The thresholds (logits) cross-validation chooses among."""

FIT_TOL = 1e-8
"""L-BFGS stopping tolerance: scikit-learn's 1e-4 stopped these fits up to 0.75 from the optimum in
a weight; at 1e-8 the fit is the regularised optimum (docs/RESULTS.md, "Converged fits")."""
FIT_MAX_ITER = 20_000

TERM_DIMS: dict[str, int] = {}
"""PCA dimensions per embedding term where they differ from ``dims`` (0 drops the term)."""


def fit(
    corpora: Sequence[TrainingRows], *, dims: int, c: float, seed: int, lookahead: int
) -> BoundaryModel:
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    names = corpora[0].names
    terms = [r.terms() for r in corpora]
    pcas = {}
    for term in ("turn", "shift", "agree"):
        k = TERM_DIMS.get(term, dims)
        if k == 0:
            continue
        stacked = np.concatenate([t[term] for t in terms])
        pcas[term] = PCA(k, svd_solver="full", random_state=seed).fit(stacked)
    design = [
        np.hstack([r.matrix(), *(pcas[k].transform(t[k]) for k in pcas)])
        for r, t in zip(corpora, terms, strict=True)
    ]
    weights = np.concatenate([np.full(len(r.labels), 1.0 / len(r.labels)) for r in corpora])
    x = np.concatenate(design)
    y = np.concatenate([r.y for r in corpora])
    scaler = StandardScaler().fit(x)
    lr = LogisticRegression(C=c, tol=FIT_TOL, max_iter=FIT_MAX_ITER, random_state=seed)
    lr.fit(scaler.transform(x), y, sample_weight=weights / weights.mean())
    if int(lr.n_iter_[0]) >= FIT_MAX_ITER:  # scikit-learn only warns: say which fit
        log.warning(
            "boundary model fit stopped at %d iterations before tol %g", FIT_MAX_ITER, FIT_TOL
        )
    coef = lr.coef_[0] / scaler.scale_
    bias = float(lr.intercept_[0] - coef @ scaler.mean_)
    nh = len(names)
    vectors, offset = {}, nh
    for term, pca in pcas.items():
        k = pca.n_components_
        part = coef[offset : offset + k]
        vectors[term] = part @ pca.components_
        bias -= float(part @ pca.components_ @ pca.mean_)
        offset += k
    # Contributions are read against the average *candidate* turn (hint-eligible rows).
    eligible = np.concatenate([np.asarray(r.eligible) for r in corpora])
    all_terms = {k: np.concatenate([t[k] for t in terms])[eligible] for k in pcas}
    return BoundaryModel(
        names=names,
        weights=coef[:nh].copy(),
        bias=bias,
        vectors=vectors,
        lookahead=lookahead,
        threshold=0.0,
        band=0.0,
        means=np.concatenate([r.matrix() for r in corpora])[eligible].mean(axis=0),
        vector_means={k: v.mean(axis=0) for k, v in all_terms.items()},
    )


def logits(model: BoundaryModel, rows: TrainingRows, mask: np.ndarray) -> np.ndarray:
    x = rows.matrix()[mask]
    t = {k: v[mask] for k, v in rows.terms().items()}
    out = model.bias + x @ model.weights
    for k, w in model.vectors.items():
        out = out + t[k] @ w
    return np.asarray(out)


def decode(corpus: Corpus, logits: np.ndarray, tau: float, min_turns: int = 1) -> dict[str, float]:
    """Threshold the (teacher-forced) out-of-fold logits; protocol-A scores of the result.

    A cut needs at least ``min_turns`` turns in the open episode before it.
    """
    rows = corpus.rows
    hyps: list[list[int]] = [[] for _ in corpus.dialogues]
    for g, t, ok, z in zip(rows.groups, rows.ts, rows.eligible, logits, strict=True):
        last = hyps[g][-1] if hyps[g] else 0
        if ok and z >= tau and t - last >= min_turns:
            hyps[g].append(t)
    s = score_protocols(
        [d.boundaries for d in corpus.dialogues], hyps, [len(d) for d in corpus.dialogues]
    )
    return {"pk_a": s.pk_a, "wd_a": s.wd_a, "f1_a": s.f1_a, "ratio": s.boundary_ratio}


@dataclass(frozen=True)
class CrossValidated:
    """A fit on every row, its CV-chosen threshold and band, the out-of-fold scores there.

    ``curve`` holds the out-of-fold scores of every corpus at every threshold of
    :data:`TAUS`: the curve the threshold was chosen from (it can be flat, see
    :func:`curve_rows`).
    """

    model: BoundaryModel
    threshold: float
    band: float
    curve: dict[float, dict[str, dict[str, float]]]
    cv_threshold: float
    """The curve's arg-min; equal to ``threshold`` unless the threshold was pinned."""
    oof_logits: tuple[np.ndarray, ...] = ()
    """Every corpus's out-of-fold logits, one per row (what :mod:`.train_judge` decodes)."""

    @property
    def oof(self) -> dict[str, dict[str, float]]:
        """Every corpus's out-of-fold scores at the chosen threshold."""
        return self.curve[self.threshold]

    def shipped(
        self,
        meta: Mapping[str, Any],
        adaptive: Mapping[str, float] | None,
        sub: BoundaryModel | None = None,
    ) -> BoundaryModel:
        """The fit as a weights file holds it: threshold, band, ``sub`` and the CV in its meta."""
        full = {
            **meta,
            "adaptive": adaptive,
            "threshold": self.threshold,
            "cv_threshold": self.cv_threshold,
            "band": self.band,
            "oof_at_threshold": self.oof,
            "oof_by_threshold": curve_rows(self.curve),
        }
        return replace(
            self.model, threshold=self.threshold, band=self.band, meta=full, roles_unknown=sub
        )


def curve_rows(curve: dict[float, dict[str, dict[str, float]]]) -> list[dict[str, object]]:
    """The CV curve as JSON-ready rows: threshold, mean Pk, each corpus's Pk and boundary ratio.

    Stored in a trained model's metadata (``oof_by_threshold``) so that a
    flat curve is visible: on the agent preset's training rows the mean Pk
    stays within 0.0026 of its best from -0.625 to 0 (0.2394-0.2420), while the
    boundary ratios move a lot (TIAGE 0.82 -> 0.52; docs/RESULTS.md, "A
    threshold rule that does not depend on ...").

    >>> row = curve_rows({-0.5: {"a": {"pk_a": 0.3, "wd_a": 0.4, "f1_a": 0.5, "ratio": 1.1},
    ...                          "b": {"pk_a": 0.2, "wd_a": 0.3, "f1_a": 0.6, "ratio": 0.9}}})[0]
    >>> row["threshold"], round(row["mean_pk_a"], 3), row["corpora"]["b"]
    (-0.5, 0.25, {'pk_a': 0.2, 'ratio': 0.9})
    """
    return [
        {
            "threshold": tau,
            "mean_pk_a": float(np.mean([s["pk_a"] for s in scores.values()])),
            "corpora": {
                name: {"pk_a": s["pk_a"], "ratio": s["ratio"]} for name, s in scores.items()
            },
        }
        for tau, scores in sorted(curve.items())
    ]


def near_best_lines(
    rows: Sequence[Mapping[str, Any]], chosen: float, within: float = 0.005
) -> list[str]:
    """:func:`curve_rows` rows whose mean Pk is ``within`` of the best (and ``chosen``'s), as lines.

    >>> rows = [{"threshold": t, "mean_pk_a": pk, "corpora": {"a": {"pk_a": pk, "ratio": r}}}
    ...         for t, pk, r in ((-0.5, 0.240, 1.2), (0.0, 0.242, 1.0), (0.5, 0.30, 0.6))]
    >>> for line in near_best_lines(rows, -0.5):
    ...     print(line)
      thresholds within 0.005 of the best mean out-of-fold Pk:
        -0.500: mean Pk 0.2400, ratio a 1.20  <- chosen
        +0.000: mean Pk 0.2420, ratio a 1.00
    """
    best = min(float(r["mean_pk_a"]) for r in rows)
    lines = [f"  thresholds within {within} of the best mean out-of-fold Pk:"]
    for r in rows:
        if float(r["mean_pk_a"]) <= best + within or r["threshold"] == chosen:
            mark = "  <- chosen" if r["threshold"] == chosen else ""
            ratios = " ".join(f"{n} {c['ratio']:.2f}" for n, c in r["corpora"].items())
            lines.append(
                f"    {r['threshold']:+.3f}: mean Pk {r['mean_pk_a']:.4f}, ratio {ratios}{mark}"
            )
    return lines


def cross_validated(
    corpora: Sequence[Corpus],
    *,
    dims: int,
    c: float,
    seed: int,
    folds: int,
    lookahead: int,
    min_turns: int,
    judge_share: float,
    pinned: float | None = None,
) -> CrossValidated:
    """The trainer's recipe over ``corpora`` (folds by content group, seeded:
    :mod:`~episeg.evaluation.train_folds`).

    The threshold has the lowest mean out-of-fold protocol-A Pk over the
    corpora (ties: the higher), unless ``pinned`` (one of :data:`TAUS`) fixes
    it; the band is the half-width around the threshold holding
    ``judge_share`` of the out-of-fold scores.
    """
    if pinned is not None and pinned not in TAUS:
        raise ConfigError(f"a pinned threshold must be one of the CV grid TAUS, got {pinned}")
    row_folds = corpus_folds(corpora, folds, np.random.default_rng(seed))
    oof = [np.zeros(len(cp.rows.labels)) for cp in corpora]
    for k in range(folds):
        keep = [fold != k for fold in row_folds]
        model = fit(
            [subset(cp.rows, kp) for cp, kp in zip(corpora, keep, strict=True)],
            dims=dims,
            c=c,
            seed=seed,
            lookahead=lookahead,
        )
        for i, (corpus, kp) in enumerate(zip(corpora, keep, strict=True)):
            oof[i][~kp] = logits(model, corpus.rows, ~kp)
    table = {
        tau: [decode(cp, lg, tau, min_turns) for cp, lg in zip(corpora, oof, strict=True)]
        for tau in TAUS
    }
    best = min(TAUS, key=lambda t: (float(np.mean([s["pk_a"] for s in table[t]])), -t))
    tau = best if pinned is None else pinned
    band = band_for(corpora, oof, tau, judge_share)
    final = fit([cp.rows for cp in corpora], dims=dims, c=c, seed=seed, lookahead=lookahead)
    curve = {t: {cp.name: s for cp, s in zip(corpora, table[t], strict=True)} for t in TAUS}
    return CrossValidated(final, tau, band, curve, best, tuple(oof))


def band_for(
    corpora: Sequence[Corpus], oof: Sequence[np.ndarray], tau: float, share: float
) -> float:
    """The half-width around ``tau`` holding ``share`` of the eligible out-of-fold logits.

    >>> from types import SimpleNamespace as NS; cp = NS(rows=NS(eligible=[True] * 3 + [False]))
    >>> band_for([cp], [np.array([0.1, -0.3, 0.5, 0.0])], 0.0, 0.5)
    0.3
    """
    if not 0.0 <= share <= 1.0:
        raise ConfigError(f"a judge share must be in [0, 1], got {share}")
    eligible = np.concatenate([np.asarray(cp.rows.eligible) for cp in corpora])
    margins = np.sort(np.abs(np.concatenate(oof)[eligible] - tau))
    return float(margins[min(len(margins) - 1, int(share * len(margins)))])
