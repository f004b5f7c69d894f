"""The learned boundary model's weights: a logistic regression collapsed to numpy dot products.

Trained by ``episeg train segmenter`` (:mod:`episeg.evaluation.train_segmenter`)
on the DEV corpora's train parts; the shipped weights are
``segmentation/weights/boundary.npz`` with ``MODEL_CARD.md`` beside them. The
model's logit for "turn ``t`` opens a new episode" is::

    bias + w . x + w_turn . e + w_shift . (A - B) + w_agree . (A * B)

with ``x`` the hand features and ``e, A, B`` the embedding terms of
:func:`~episeg.segmentation.features.boundary_features`. The three 384-dim
weight vectors are the logistic regression's weights on PCA projections
folded back through the projection, so inference is four dot products.

:meth:`BoundaryModel.contributions` says which features drove a score: each
term's weight times its deviation from the training mean, largest first; the
verdict trail records the top ones.

A model may carry a second one for streams whose speaker roles are unknown
(``roles_unknown``, trained on role-masked rows of every corpus; the agent
preset's ``boundary.npz`` does): :meth:`BoundaryModel.for_roles` picks it.

>>> import numpy as np
>>> m = BoundaryModel(names=("a", "b"), weights=np.array([2.0, -1.0]), bias=-0.5,
...                   vectors={"turn": np.array([1.0, 0.0])}, lookahead=0, threshold=0.0,
...                   band=0.5, means=np.zeros(2), vector_means={"turn": np.zeros(2)})
>>> x, e = np.array([1.0, 0.5]), np.array([0.5, 0.5])
>>> round(m.logit(x, e, e, e), 3)
1.5
>>> [(name, round(v, 2)) for name, v in m.contributions(x, e, e, e, top=2)]
[('a', 2.0), ('b', -0.5)]
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from episeg.errors import ConfigError

__all__ = [
    "CHAT_WEIGHTS",
    "DEFAULT_WEIGHTS",
    "VECTOR_TERMS",
    "WEIGHTS_DIR",
    "BoundaryModel",
    "load_model",
]

WEIGHTS_DIR = Path(__file__).with_name("weights")
DEFAULT_WEIGHTS = WEIGHTS_DIR / "boundary.npz"
CHAT_WEIGHTS = WEIGHTS_DIR / "chat.npz"
VECTOR_TERMS = ("turn", "shift", "agree")
_SUB = "unknown_"
_LABELS = {"turn": "turn-embedding", "shift": "context-shift", "agree": "context-agreement"}


def _terms(e: np.ndarray, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    return {"turn": e, "shift": a - b, "agree": a * b}


@dataclass(frozen=True)
class BoundaryModel:
    """Weights of the learned combiner (see the module docstring).

    Parameters
    ----------
    names
        Hand feature names, in :func:`~episeg.segmentation.features.feature_names` order.
    weights, bias
        Linear weights on the hand features and the intercept.
    vectors
        Weight vectors for the embedding terms (``turn``, ``shift``, ``agree``).
    lookahead
        How many later turns the features peek at (0 = pure streaming).
    threshold
        Default decision threshold on the logit.
    band
        Half-width of the uncertain band around ``threshold`` (the judge's band).
    means, vector_means
        Training means of the features and the terms (for :meth:`contributions`).
    meta
        Training provenance (data files, parts, seed, scores), kept as JSON.
    roles_unknown
        The model for streams whose roles are unknown, if it differs (its own
        threshold, band and meta); see :meth:`for_roles`.
    """

    names: tuple[str, ...]
    weights: np.ndarray
    bias: float
    vectors: Mapping[str, np.ndarray]
    lookahead: int
    threshold: float
    band: float
    means: np.ndarray
    vector_means: Mapping[str, np.ndarray]
    meta: Mapping[str, Any] = field(default_factory=dict)
    roles_unknown: BoundaryModel | None = None

    def __post_init__(self) -> None:
        if len(self.names) != len(self.weights) or len(self.means) != len(self.weights):
            raise ConfigError("boundary model: names, weights and means differ in length")
        unknown = set(self.vectors) - set(VECTOR_TERMS)
        if unknown:
            raise ConfigError(f"boundary model: unknown vector terms {sorted(unknown)}")
        if self.lookahead < 0 or self.band < 0:
            raise ConfigError("boundary model: lookahead and band must be >= 0")

    def for_roles(self, known: bool) -> BoundaryModel:
        """The model that scores a stream whose roles are ``known`` (or not).

        >>> import numpy as np
        >>> def m(t, sub=None):
        ...     return BoundaryModel(names=(), weights=np.zeros(0), bias=0.0, vectors={},
        ...                          lookahead=0, threshold=t, band=0.0, means=np.zeros(0),
        ...                          vector_means={}, roles_unknown=sub)
        >>> both = m(-0.25, m(-0.625))
        >>> both.for_roles(True).threshold, both.for_roles(False).threshold
        (-0.25, -0.625)
        >>> m(0.0).for_roles(False).threshold  # no roles-unknown model: itself
        0.0
        """
        return self if known or self.roles_unknown is None else self.roles_unknown

    def require_features(self, names: Callable[[int], tuple[str, ...]], source: str) -> None:
        """Refuse a model (or its roles-unknown one) not trained on ``names(its lookahead)``.

        A weights file from an older feature set would otherwise fail on its first
        turn, or, were the lengths equal, weigh the wrong features.

        >>> m = BoundaryModel(names=("a",), weights=np.zeros(1), bias=0.0, vectors={},
        ...                   lookahead=0, threshold=0.0, band=0.0, means=np.zeros(1),
        ...                   vector_means={})
        >>> try:
        ...     m.require_features(lambda lookahead: ("a", "b"), "old.npz")
        ... except ConfigError as exc:
        ...     print(str(exc).split(" (")[0])
        old.npz was trained on other features than this episeg computes
        """
        for part in (self, self.roles_unknown):
            if part is None:
                continue
            expected = names(part.lookahead)
            if part.names != expected:
                raise ConfigError(
                    f"{source} was trained on other features than this episeg computes "
                    f"(missing {sorted(set(expected) - set(part.names))}, "
                    f"unknown {sorted(set(part.names) - set(expected))}, or another order); "
                    "retrain it with `episeg train segmenter`"
                )

    # -- scoring ----------------------------------------------------------------------
    def logit(self, x: np.ndarray, e: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
        """The boundary logit of one turn."""
        total = self.bias + float(self.weights @ x)
        for name, vec in _terms(e, a, b).items():
            w = self.vectors.get(name)
            if w is not None:
                total += float(w @ vec)
        return total

    def without(self, ablate: Collection[str]) -> BoundaryModel:
        """The model with features / terms in ``ablate`` held at their training mean.

        For ablations: a name is a hand feature or ``turn-embedding``,
        ``context-shift``, ``context-agreement``; its contribution becomes 0.
        """
        labels = {label: term for term, label in _LABELS.items()}
        unknown = set(ablate) - set(self.names) - set(labels)
        if unknown:
            raise ConfigError(f"cannot ablate unknown feature(s) {sorted(unknown)}")
        weights, bias = self.weights.copy(), self.bias
        for i, name in enumerate(self.names):
            if name in ablate:
                bias += float(weights[i] * self.means[i])
                weights[i] = 0.0
        vectors = dict(self.vectors)
        for label in set(ablate) & set(labels):
            w = vectors.pop(labels[label], None)
            if w is not None:
                bias += float(w @ self.vector_means[labels[label]])
        return BoundaryModel(
            names=self.names,
            weights=weights,
            bias=bias,
            vectors=vectors,
            lookahead=self.lookahead,
            threshold=self.threshold,
            band=self.band,
            means=self.means,
            vector_means=self.vector_means,
            meta={**self.meta, "ablated": sorted(ablate)},
            roles_unknown=None
            if self.roles_unknown is None
            else self.roles_unknown.without(ablate),
        )

    @staticmethod
    def probability(logit: float) -> float:
        return 1.0 / (1.0 + math.exp(-logit)) if logit > -500 else 0.0

    def contributions(
        self, x: np.ndarray, e: np.ndarray, a: np.ndarray, b: np.ndarray, *, top: int = 3
    ) -> list[tuple[str, float]]:
        """The ``top`` terms by |weight x (value - training mean)|, signed, largest first."""
        if len(x) != len(self.weights):
            raise ValueError(f"{len(x)} feature values for {len(self.weights)} weights")
        hand: list[float] = (self.weights * (x - self.means)).tolist()  # one array op
        parts = list(zip(self.names, hand, strict=True))
        for name, vec in _terms(e, a, b).items():
            w = self.vectors.get(name)
            if w is not None:
                parts.append((_LABELS[name], float(w @ (vec - self.vector_means[name]))))
        parts.sort(key=lambda p: -abs(p[1]))
        return parts[:top]

    # -- persistence ------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Write the weights as a small ``.npz`` (float32 vectors, JSON metadata).

        A ``roles_unknown`` model is written beside, its keys prefixed ``unknown_``.
        """
        arrays = self._arrays()
        if self.roles_unknown is not None:
            sub = self.roles_unknown._arrays()
            arrays.update({f"{_SUB}{k}": v for k, v in sub.items()})
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with Path(path).open("wb") as fh:
            np.savez_compressed(fh, **arrays)

    def _arrays(self) -> dict[str, Any]:
        if self.roles_unknown is not None and self.roles_unknown.roles_unknown is not None:
            raise ConfigError("boundary model: a roles-unknown model cannot nest another")
        arrays: dict[str, Any] = {
            "names": np.array(self.names),
            "weights": np.asarray(self.weights, dtype=np.float64),
            "means": np.asarray(self.means, dtype=np.float64),
            "scalars": np.array([self.bias, self.threshold, self.band, self.lookahead]),
            "meta": np.array(json.dumps(dict(self.meta), sort_keys=True)),
        }
        for name, vec in self.vectors.items():
            arrays[f"vec_{name}"] = np.asarray(vec, dtype=np.float32)
            arrays[f"mean_{name}"] = np.asarray(self.vector_means[name], dtype=np.float32)
        return arrays

    @classmethod
    def load(cls, path: str | Path | None = None) -> BoundaryModel:
        """Read weights written by :meth:`save` (default: the shipped ``boundary.npz``)."""
        path = Path(path) if path is not None else DEFAULT_WEIGHTS
        try:  # a damaged file fails in many ways (zip, npy, json, a missing or short array)
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            sub = {k[len(_SUB) :]: v for k, v in arrays.items() if k.startswith(_SUB)}
            return cls._from(arrays, cls._from(sub, None) if sub else None)
        except ConfigError:
            raise
        except (OSError, ValueError, EOFError, KeyError, TypeError, zipfile.BadZipFile) as exc:
            raise ConfigError(
                f"cannot read boundary model weights {path}: {type(exc).__name__}: {exc}"
                " (a damaged or foreign file: retrain with `episeg train segmenter`)"
            ) from exc

    @classmethod
    def _from(cls, data: Mapping[str, np.ndarray], sub: BoundaryModel | None) -> BoundaryModel:
        bias, threshold, band, lookahead = (float(v) for v in data["scalars"])
        vectors = {
            n: data[f"vec_{n}"].astype(np.float64) for n in VECTOR_TERMS if f"vec_{n}" in data
        }
        return cls(
            names=tuple(str(n) for n in data["names"]),
            weights=data["weights"].astype(np.float64),
            bias=bias,
            vectors=vectors,
            lookahead=int(lookahead),
            threshold=threshold,
            band=band,
            means=data["means"].astype(np.float64),
            vector_means={n: data[f"mean_{n}"].astype(np.float64) for n in vectors},
            meta=json.loads(str(data["meta"])),
            roles_unknown=sub,
        )


_LOADED: dict[Path, BoundaryModel] = {}


def load_model(path: str | Path | None = None) -> BoundaryModel:
    """:meth:`BoundaryModel.load`, memoised per resolved path (weights are read once)."""
    key = Path(path).resolve() if path is not None else DEFAULT_WEIGHTS
    if key not in _LOADED:
        _LOADED[key] = BoundaryModel.load(key)
    return _LOADED[key]
