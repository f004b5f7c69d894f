"""One turn of one session: signals, combiner, judge, and the episode bookkeeping.

:class:`TurnDecider` is the per-turn step the :class:`~episeg.segmentation.segmenter.Segmenter`
runs for every accepted turn, streaming, batch or replaying a journal alike (so they
give the same boundaries): each enabled signal gives a verdict; the combiner (the
learned :class:`~episeg.segmentation.learned.LearnedPolicy` or the layered
:class:`~episeg.segmentation.policy.BoundaryPolicy`) weighs them; the
prediction-error judge is asked when the gate lets it; then the turn joins the open
episode or closes it and opens the next (a sub-episode under the current top-level
one when the combiner says so).

>>> from episeg.config import EpisegConfig
>>> from episeg.segmentation.intake import SessionIntake
>>> from episeg.segmentation.policy import BoundaryPolicy
>>> from episeg.types import SignalName, Turn
>>> config = EpisegConfig()
>>> decider = TurnDecider(config, enabled=frozenset({SignalName.MARKER}),
...                       policy=BoundaryPolicy.from_config(config), learned=None, tap=None)
>>> state = decider.fresh("u", "s")
>>> turns = [("user", "deploy prod"), ("assistant", "Done. <episode_boundary>"),
...          ("user", "now the cache")]
>>> steps = []
>>> for i, (actor, text) in enumerate(turns):
...     prepared = state.intake.accept(Turn(actor=actor, text=text, ts=float(i)),
...                                    max_turn_chars=1000)
...     steps.append(decider.step(state, prepared, np.ones(2)))
>>> [step.opened for step in steps], decider.counters["episodes"]
([True, False, True], 1)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from episeg.config import EpisegConfig, JudgeGate
from episeg.segmentation.episode import OpenEpisode
from episeg.segmentation.features import EpisodeContext, TurnView
from episeg.segmentation.intake import PreparedTurn, SessionIntake
from episeg.segmentation.learned import LearnedPolicy
from episeg.segmentation.policy import BoundaryPolicy, Outcome
from episeg.segmentation.signals import SemanticShift, infer_turn_type
from episeg.segmentation.signals.factory import SignalFactory, build_prediction
from episeg.segmentation.state import SessionState, TurnTrace
from episeg.segmentation.step import Step
from episeg.segmentation.tap import JudgeTap
from episeg.types import Decision, Episode, ObservedTurn, SignalName, Turn, Verdict

__all__ = ["COUNTERS", "TurnDecider"]

log = logging.getLogger("episeg.segmentation.segmenter")  # the name it always logged under
COUNTERS = (
    "turns",
    "episodes",
    "embed_calls",
    "embed_batches",
    "judge_calls",
    "judge_failures",
    "duplicates",
)
"""The segmenter's counters (:attr:`Segmenter.stats`), in order."""


class TurnDecider:
    """The per-turn step of the segmenter (see the module docstring).

    Parameters
    ----------
    config
        The segmenter's config (judge gate, signal tunables).
    enabled
        The signals to run.
    policy, learned
        The layered policy (its ``hint_actors`` always apply) and the learned
        combiner, which decides when it is not ``None``.
    tap
        The judge, wrapped in its tap (``None``: no prediction-error signal).
    trace
        A list to append a :class:`TurnTrace` per turn to, or ``None``.
    counters
        The segmenter's counters, every one of :data:`COUNTERS` set to 0 if
        missing (turns, episodes and the judge's are counted here).
    """

    def __init__(
        self,
        config: EpisegConfig,
        *,
        enabled: frozenset[SignalName],
        policy: BoundaryPolicy,
        learned: LearnedPolicy | None,
        tap: JudgeTap | None,
        trace: list[TurnTrace] | None = None,
        counters: dict[str, int] | None = None,
    ) -> None:
        self.config = config
        self.enabled = enabled
        self.policy = policy
        self.learned = learned
        self.tap = tap
        self.trace = trace
        self.counters = counters if counters is not None else {}
        self._signals = SignalFactory(config, enabled)
        for name in COUNTERS:
            self.counters.setdefault(name, 0)

    def fresh(self, user: str, session: str) -> SessionState:
        return SessionState(
            intake=SessionIntake(session_key=(user, session)),
            signals=self._signals.build(),
            prediction=build_prediction(self.config, judge=self.tap, enabled=self.enabled),
            open=OpenEpisode(user=user, session=session),
        )

    def step(
        self,
        state: SessionState,
        prepared: PreparedTurn,
        vector: np.ndarray,
        later: Sequence[tuple[Turn, np.ndarray]] = (),
    ) -> Step:
        """Decide ``prepared``'s turn; ``later``: the turns after it the learned model reads."""
        self.counters["turns"] += 1
        # The signals and the features compute in float64: convert once for all of them.
        observed = ObservedTurn(
            turn=prepared.turn,
            text=prepared.turn.text,
            embedding=np.asarray(vector, dtype=np.float64),
            position=state.positions,
            inferred_type=infer_turn_type(prepared.turn),
            markers=prepared.markers,
        )
        state.positions += 1
        verdicts = [signal.update(observed) for signal in state.signals.values()]
        view = self.learned.view(observed) if self.learned is not None else None
        if not state.open.turns:  # first turn of the session: nothing to close
            self._open(state, observed, (), vector=vector)
            self._commit_features(state, view, opened=True)
            self._record(state, observed, Decision.CONTINUE, tuple(verdicts))
            return Step(
                observed.turn, vector, opened=True, verdicts=tuple(verdicts), decided=observed.turn
            )
        hints_may_open = self.policy.hints_may_open(observed.turn.actor)
        if self.learned is not None and view is not None:
            views = [view, *(self.learned.view_of(t, v) for t, v in later)]
            outcome = self.learned.weigh(
                verdicts, state.features, views, hints_may_open=hints_may_open
            )
        else:
            outcome = self.policy.weigh(verdicts, hints_may_open=hints_may_open)
        if hints_may_open:
            outcome = self._consult_judge(state, observed, outcome, verdicts)
        elif state.prediction is not None:
            state.prediction.record(observed)
        verdict = outcome.as_verdict()
        verdicts.append(verdict)
        frozen = tuple(verdicts)
        self._record(state, observed, outcome.decision, frozen)
        self._commit_features(state, view, opened=outcome.decision.opens_episode)
        if not outcome.decision.opens_episode:
            state.open.add(observed.turn, vector)
            return Step(
                observed.turn, vector, verdict=verdict, verdicts=frozen, decided=observed.turn
            )
        log.info(
            "boundary before turn %s (%s): %s",
            observed.turn.id,
            outcome.decision.value,
            outcome.reason,
        )
        closed = self.close(state, frozen)
        parent = state.top_level_id if outcome.decision is Decision.SUB_EPISODE else None
        summary = state.prediction.summary if outcome.judged and state.prediction else ""
        self._open(state, observed, frozen, vector=vector, parent_id=parent, summary=summary)
        return Step(observed.turn, vector, (closed,), True, verdict, frozen, decided=observed.turn)

    def _consult_judge(
        self, state: SessionState, observed: ObservedTurn, outcome: Outcome, verdicts: list[Verdict]
    ) -> Outcome:
        prediction = state.prediction
        if prediction is None or outcome.authoritative:
            return outcome
        gate = self.config.judge.gate
        ask = outcome.ambiguous and gate in (JudgeGate.AMBIGUOUS, JudgeGate.BOTH)
        calls, failures = prediction.calls, prediction.failures
        verdict = prediction.update(observed, ask=ask)
        self.counters["judge_calls"] += prediction.calls - calls
        self.counters["judge_failures"] += prediction.failures - failures
        verdicts.append(verdict)
        if prediction.calls == calls:
            return outcome
        if verdict.decision is Decision.CONTINUE:
            state.open.summary = prediction.summary
        resolver = self.learned if self.learned is not None else self.policy
        return resolver.resolve(outcome, verdict)

    @staticmethod
    def _commit_features(state: SessionState, view: TurnView | None, *, opened: bool) -> None:
        """Fold the turn into the learned combiner's episode context (fresh at a boundary)."""
        if view is None:
            return
        if opened:
            state.features = EpisodeContext()
        state.features.commit(view)

    def _open(
        self,
        state: SessionState,
        observed: ObservedTurn,
        verdicts: tuple[Verdict, ...],
        *,
        vector: np.ndarray,
        parent_id: str | None = None,
        summary: str = "",
    ) -> None:
        turn = observed.turn
        state.open = OpenEpisode(
            user=turn.user,
            session=turn.session,
            opening_verdicts=verdicts,
            parent_id=parent_id,
            summary=summary,
        )
        state.open.add(turn, vector)
        if parent_id is None:
            state.top_level_id = state.open.id
        for signal in state.signals.values():
            signal.reset(observed)
        if state.prediction is not None:
            state.prediction.reset(observed)

    def close(self, state: SessionState, verdicts: tuple[Verdict, ...]) -> Episode:
        self.counters["episodes"] += 1
        return state.open.close(closing_verdicts=verdicts)

    def _record(
        self,
        state: SessionState,
        observed: ObservedTurn,
        decision: Decision,
        verdicts: tuple[Verdict, ...],
    ) -> None:
        if self.trace is None:
            return
        semantic = state.signals.get(SignalName.SEMANTIC)
        distance = semantic.last_distance if isinstance(semantic, SemanticShift) else None
        self.trace.append(
            TurnTrace(
                observed.turn.user,
                observed.turn.session,
                observed.turn.id or "",
                observed.position,
                decision,
                verdicts,
                distance,
            )
        )
