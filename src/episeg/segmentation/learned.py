"""The learned boundary model: a logistic regression collapsed to numpy dot products.

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
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from episeg.errors import ConfigError
from episeg.segmentation.features import EpisodeContext, TurnView, boundary_features
from episeg.segmentation.policy import Outcome
from episeg.segmentation.signals.structural import PIVOT_REASON
from episeg.types import Decision, ObservedTurn, SignalName, Verdict

__all__ = [
    "CHAT_WEIGHTS",
    "DEFAULT_WEIGHTS",
    "VECTOR_TERMS",
    "WEIGHTS_DIR",
    "BoundaryModel",
    "LearnedPolicy",
    "load_model",
]

WEIGHTS_DIR = Path(__file__).with_name("weights")
DEFAULT_WEIGHTS = WEIGHTS_DIR / "boundary.npz"
CHAT_WEIGHTS = WEIGHTS_DIR / "chat.npz"
VECTOR_TERMS = ("turn", "shift", "agree")
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

    def __post_init__(self) -> None:
        if len(self.names) != len(self.weights) or len(self.means) != len(self.weights):
            raise ConfigError("boundary model: names, weights and means differ in length")
        unknown = set(self.vectors) - set(VECTOR_TERMS)
        if unknown:
            raise ConfigError(f"boundary model: unknown vector terms {sorted(unknown)}")
        if self.lookahead < 0 or self.band < 0:
            raise ConfigError("boundary model: lookahead and band must be >= 0")

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
        )

    @staticmethod
    def probability(logit: float) -> float:
        return 1.0 / (1.0 + math.exp(-logit)) if logit > -500 else 0.0

    def contributions(
        self, x: np.ndarray, e: np.ndarray, a: np.ndarray, b: np.ndarray, *, top: int = 3
    ) -> list[tuple[str, float]]:
        """The ``top`` terms by |weight x (value - training mean)|, signed, largest first."""
        parts = [
            (n, float(w * (v - m)))
            for n, w, v, m in zip(self.names, self.weights, x, self.means, strict=True)
        ]
        for name, vec in _terms(e, a, b).items():
            w = self.vectors.get(name)
            if w is not None:
                parts.append((_LABELS[name], float(w @ (vec - self.vector_means[name]))))
        parts.sort(key=lambda p: -abs(p[1]))
        return parts[:top]

    # -- persistence ------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Write the weights as a small ``.npz`` (float32 vectors, JSON metadata)."""
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
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with Path(path).open("wb") as fh:
            np.savez_compressed(fh, **arrays)

    @classmethod
    def load(cls, path: str | Path | None = None) -> BoundaryModel:
        """Read weights written by :meth:`save` (default: the shipped ``boundary.npz``)."""
        path = Path(path) if path is not None else DEFAULT_WEIGHTS
        try:
            data = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read boundary model weights {path}: {exc}") from exc
        with data:
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
            )


class LearnedPolicy:
    """The default combiner: authoritative rulings first, then the learned model.

    1. An authoritative verdict that opens an episode (agent marker, a
       harness-supplied ``system-event``, the window floor) decides, as in
       :class:`~episeg.segmentation.policy.BoundaryPolicy`.
    2. Otherwise the model's logit for the turn decides: at or above
       ``threshold`` the turn opens an episode (a sub-episode when the
       structural signal asked for one), if hints may open before this actor's
       turn (``hint_actors``: a tool result or an assistant reply is never cut
       off from what it answers, so a tool error mid-task cannot split it).
       The model does not cut an episode shorter than ``min_turns``.
    3. A user's announced topic pivot (the structural signal's hint whose
       reason starts with :data:`~episeg.segmentation.signals.structural.PIVOT_REASON`,
       e.g. "Different question: ...") opens an episode whatever the logit,
       under the same conditions as the model (``hint_actors``, ``min_turns``);
       the reason names the cue and the logit.
    4. A logit within ``band`` of the threshold is *uncertain*: a judge, if
       configured and gated in, decides there (see :meth:`resolve`).

    The reason names the logit, the threshold and the features that drove it.

    Parameters
    ----------
    model
        The weights (default: the shipped ``boundary.npz``).
    threshold, band
        Override the model's own threshold / uncertain half-width.
    hint_actors
        Actors before whose turns the model may open an episode.
    roles_known
        ``False`` for transcripts whose speaker labels carry no meaning: the
        role and type features are then zero (as in training on such corpora).
    min_turns
        The segment-length prior: the model opens an episode only once the
        open one holds this many turns (default: the model's own, 2 for the
        agent preset: at least one exchange).
    """

    def __init__(
        self,
        model: BoundaryModel | None = None,
        *,
        threshold: float | None = None,
        band: float | None = None,
        hint_actors: tuple[str, ...] = ("user", "system"),
        roles_known: bool = True,
        min_turns: int | None = None,
    ) -> None:
        self.model = model if model is not None else _default_model()
        self.threshold = self.model.threshold if threshold is None else float(threshold)
        self.band = self.model.band if band is None else float(band)
        if self.band < 0:
            raise ConfigError(f"band must be >= 0, got {self.band}")
        self.min_turns = (
            int(self.model.meta.get("min_turns", 1)) if min_turns is None else min_turns
        )
        if self.min_turns < 1:
            raise ConfigError(f"min_turns must be >= 1, got {self.min_turns}")
        self.hint_actors = frozenset(hint_actors)
        self.roles_known = roles_known

    @property
    def lookahead(self) -> int:
        return self.model.lookahead

    def view(self, turn: ObservedTurn) -> TurnView:
        """What the features read from ``turn`` (roles and types only when they are known)."""
        known = self.roles_known
        kind = turn.turn.type.value if known and turn.turn.type is not None else None
        return TurnView.make(
            turn.embedding, turn.turn.actor.value if known else "user", kind, turn.text
        )

    def weigh(
        self,
        verdicts: Sequence[Verdict],
        context: EpisodeContext,
        pending: Sequence[TurnView],
        *,
        hints_may_open: bool = True,
    ) -> Outcome:
        """Decide on ``pending[0]`` given the open episode's ``context``."""
        ruling = [v for v in verdicts if v.authoritative and v.decision.opens_episode]
        if ruling:
            decision = (
                Decision.BOUNDARY
                if any(v.decision is Decision.BOUNDARY for v in ruling)
                else Decision.SUB_EPISODE
            )
            reason = "; ".join(f"{v.signal}: {v.reason}" for v in ruling)
            return Outcome(decision, 1.0, False, True, reason)
        if not hints_may_open:  # no features needed: the model may not cut here
            return Outcome(
                Decision.CONTINUE,
                0.0,
                False,
                False,
                "learned: hints do not open an episode at this actor's turn",
            )
        if context.count < self.min_turns:
            return Outcome(
                Decision.CONTINUE,
                0.0,
                False,
                False,
                f"learned: the open episode has {context.count} turn(s) < {self.min_turns}",
            )
        x, e, a, b = boundary_features(
            context, pending, lookahead=self.model.lookahead, roles_known=self.roles_known
        )
        logit = self.model.logit(x, e, a, b)
        reason = (
            f"learned logit {logit:+.2f} vs threshold {self.threshold:+.2f} "
            f"(p={self.model.probability(logit):.2f})"
        )
        pivot = [v for v in verdicts if _is_pivot(v)]
        if pivot:
            return Outcome(
                Decision.BOUNDARY, logit, False, False, f"structural: {pivot[0].reason}; {reason}"
            )
        ambiguous = abs(logit - self.threshold) < self.band
        opens = logit >= self.threshold
        if opens or ambiguous:  # the features that drove it, for the verdict trail
            top = ", ".join(f"{n} {v:+.2f}" for n, v in self.model.contributions(x, e, a, b))
            reason = f"{reason[:-1]}; {top})"
        if opens:
            sub = any(
                v.signal == "structural" and v.decision is Decision.SUB_EPISODE for v in verdicts
            )
            decision = Decision.SUB_EPISODE if sub else Decision.BOUNDARY
            return Outcome(decision, logit, ambiguous, False, reason)
        return Outcome(Decision.CONTINUE, logit, ambiguous, False, reason)

    def resolve(self, cheap: Outcome, judge: Verdict) -> Outcome:
        """Let a consulted judge decide; an abstaining judge leaves the model's decision."""
        if judge.decision is Decision.ABSTAIN:
            return Outcome(
                cheap.decision,
                cheap.evidence,
                cheap.ambiguous,
                False,
                f"{cheap.reason}; judge abstained ({judge.reason}), the model stands",
            )
        return Outcome(
            judge.decision,
            cheap.evidence,
            cheap.ambiguous,
            False,
            f"{cheap.reason}; judge: {judge.reason}",
            judged=True,
        )


def _is_pivot(verdict: Verdict) -> bool:
    return (
        verdict.signal == SignalName.STRUCTURAL.value
        and verdict.decision is Decision.BOUNDARY
        and verdict.reason.startswith(PIVOT_REASON)
    )


_LOADED: dict[Path, BoundaryModel] = {}


def load_model(path: str | Path | None = None) -> BoundaryModel:
    """:meth:`BoundaryModel.load`, memoised per resolved path (weights are read once)."""
    key = Path(path).resolve() if path is not None else DEFAULT_WEIGHTS
    if key not in _LOADED:
        _LOADED[key] = BoundaryModel.load(key)
    return _LOADED[key]


def _default_model() -> BoundaryModel:
    return load_model(None)
