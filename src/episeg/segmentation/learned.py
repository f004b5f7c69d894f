"""The default combiner: authoritative rulings, the announced pivot, then the learned model.

:class:`LearnedPolicy` weighs one turn's verdicts with the boundary model of
:mod:`episeg.segmentation.model` (trained by ``episeg train segmenter``, see
``segmentation/weights/MODEL_CARD.md``); :func:`learned_policy` builds the one
a config asks for. The model's names are re-exported here.

>>> import numpy as np
>>> n = len(feature_names(0))
>>> model = BoundaryModel(names=tuple(feature_names(0)), weights=np.zeros(n), bias=-9.0,
...                       vectors={}, lookahead=0, threshold=0.0, band=0.5,
...                       means=np.zeros(n), vector_means={}, meta={"min_turns": 1})
>>> policy, ctx = LearnedPolicy(model), EpisodeContext()
>>> turn = TurnView.make(np.ones(3), "user", None, "Unrelated: is the cache warm?")
>>> ctx.commit(turn)
>>> policy.weigh([], ctx, [turn]).decision.value
'continue'
>>> pivot = Verdict("structural", Decision.BOUNDARY, 0.9, f"{PIVOT_REASON}: 'unrelated'")
>>> policy.weigh([pivot], ctx, [turn]).reason[:50]
"structural: user announces a new topic: 'unrelated"
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from episeg.config import EpisegConfig
from episeg.errors import ConfigError
from episeg.segmentation.adaptive import AdaptiveThreshold
from episeg.segmentation.features import EpisodeContext, TurnView, boundary_features, feature_names
from episeg.segmentation.model import (
    CHAT_WEIGHTS,
    DEFAULT_WEIGHTS,
    VECTOR_TERMS,
    WEIGHTS_DIR,
    BoundaryModel,
    load_model,
)
from episeg.segmentation.policy import Outcome, resolve_with_judge
from episeg.segmentation.signals.structural import PIVOT_REASON
from episeg.types import Decision, ObservedTurn, SignalName, Turn, Verdict
from episeg.typing import Embedder

__all__ = [
    "CHAT_WEIGHTS",
    "DEFAULT_WEIGHTS",
    "MAX_LOOKAHEAD",
    "VECTOR_TERMS",
    "WEIGHTS_DIR",
    "AdaptiveThreshold",
    "BoundaryModel",
    "LearnedPolicy",
    "learned_policy",
    "load_model",
]

log = logging.getLogger(__name__)
MAX_LOOKAHEAD = 8
"""The most later turns a weights file may read before a turn is decided."""


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
        ``False`` for transcripts whose speaker labels carry no meaning: role and
        type features are zero, the model's ``roles_unknown`` one scores if it has one.
    min_turns
        The segment-length prior: the model opens an episode only once the
        open one holds this many turns (default: the model's own, 2 for the
        agent preset: at least one exchange).
    adaptive
        The relative rule (:class:`AdaptiveThreshold`; default: the model's
        own ``meta["adaptive"]``, if any): a logit below ``threshold`` still
        opens an episode when it stands out among the open episode's scores.
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
        adaptive: AdaptiveThreshold | None = None,
    ) -> None:
        self.model = (model if model is not None else _default_model()).for_roles(roles_known)
        self.threshold = self.model.threshold if threshold is None else float(threshold)
        shift = self.threshold - self.model.threshold  # the floor follows a configured threshold
        self.adaptive = adaptive or AdaptiveThreshold.from_meta(
            self.model.meta.get("adaptive"), shift
        )
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
        """Later turns the model reads before it decides a turn (0: as it comes)."""
        return self.model.lookahead

    def view(self, turn: ObservedTurn) -> TurnView:
        """What the features read from ``turn`` (roles and types only when they are known)."""
        return self.view_of(turn.turn, turn.embedding)

    def view_of(self, turn: Turn, embedding: np.ndarray) -> TurnView:
        """:meth:`view` of a turn not stepped yet (a later turn the model peeks at)."""
        known = self.roles_known
        kind = turn.type.value if known and turn.type is not None else None
        return TurnView.make(
            np.asarray(embedding, dtype=np.float64),
            turn.actor.value if known else "user",
            kind,
            turn.text,
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
        cut = self.adaptive.cut_at(context.scores) if self.adaptive is not None else None
        context.scores.append(logit)
        if not opens and cut is not None and logit >= cut:
            opens = True
            reason = f"{reason[:-1]}; stands out in its episode: >= {cut:+.2f})"
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
        return resolve_with_judge(cheap, judge, stands="the model stands")


def _is_pivot(verdict: Verdict) -> bool:
    return (
        verdict.signal == SignalName.STRUCTURAL.value
        and verdict.decision is Decision.BOUNDARY
        and verdict.reason.startswith(PIVOT_REASON)
    )


def _default_model() -> BoundaryModel:
    return load_model(None)


def learned_policy(config: EpisegConfig, embedder: Embedder) -> LearnedPolicy | None:
    """The learned combiner ``config.combiner`` asks for (``None``: the layered policy)."""
    spec = config.combiner
    if spec.kind == "layered":
        return None
    path = CHAT_WEIGHTS if spec.weights == "chat" else spec.weights
    model = load_model(path)
    trained_on = str(model.meta.get("embedder", ""))
    dims = {len(v) for v in model.vectors.values()}
    if trained_on not in embedder.name or dims - {embedder.dim}:
        problem = (
            f"the boundary model was trained on {trained_on} ({', '.join(map(str, dims))} dims); "
            f"the embedder is {embedder.name} ({embedder.dim} dims)"
        )
        if spec.kind == "learned":
            raise ConfigError(f"combiner.kind 'learned': {problem}")
        log.info("combiner.kind 'auto' uses the layered policy: %s", problem)
        return None
    for part in (model, model.roles_unknown):
        if part is not None and part.lookahead > MAX_LOOKAHEAD:
            raise ConfigError(
                f"combiner.weights {spec.weights!r} reads {part.lookahead} later turns; "
                f"the segmenter waits for at most {MAX_LOOKAHEAD}"
            )
    model.require_features(feature_names, f"combiner.weights {spec.weights!r}")
    return LearnedPolicy(
        model,
        threshold=spec.threshold,
        band=spec.band,
        hint_actors=tuple(config.policy.hint_actors),
        roles_known=spec.roles_known,
        min_turns=spec.min_turns,
    )
