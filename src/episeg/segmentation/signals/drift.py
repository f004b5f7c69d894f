"""Signal 2b: Page-Hinkley detector for gradual semantic drift.

A conversation that slides from one topic to another over several turns never
crosses the per-turn threshold; the distances to the episode's *cumulative*
mean creep upward instead. Page-Hinkley accumulates those deviations and
alarms when their sum exceeds ``threshold`` (river's ``drift.PageHinkley``
is the model for this class).

>>> import numpy as np
>>> from episeg.types import ObservedTurn, Turn, TurnType
>>> def obs(angle):
...     t = Turn(actor="user", text="x", ts=0.0)
...     vec = np.array([np.cos(angle), np.sin(angle)])
...     return ObservedTurn(turn=t, text="x", embedding=vec, position=0,
...                         inferred_type=TurnType.USER_QUESTION)
>>> ph = GradualDrift(delta=0.0, threshold=0.3, min_turns=2)
>>> ph.reset(obs(0.0))
>>> [ph.update(obs(a)).decision.value for a in (0.1, 0.0, 0.6, 1.0, 1.4)]
['abstain', 'continue', 'continue', 'continue', 'boundary']
"""

from __future__ import annotations

from episeg.config import DriftConfig
from episeg.segmentation.signals._running import RunningMean
from episeg.types import Decision, ObservedTurn, SignalName, Verdict

__all__ = ["GradualDrift"]


class GradualDrift:
    """Page-Hinkley test on the distance of each turn to the episode mean.

    Parameters
    ----------
    delta
        Magnitude of change tolerated per turn (subtracted from deviations).
    threshold
        Alarm level ``lambda`` for the cumulative sum.
    min_turns
        Abstain until the open episode holds this many turns.
    """

    name = SignalName.DRIFT.value

    def __init__(self, *, delta: float = 0.05, threshold: float = 0.9, min_turns: int = 2) -> None:
        DriftConfig(delta=delta, threshold=threshold, min_turns=min_turns)
        self.delta = delta
        self.threshold = threshold
        self.min_turns = min_turns
        self._mean = RunningMean(decay=None)
        self._reset_test()

    def _reset_test(self) -> None:
        self._n = 0
        self._avg = 0.0
        self._sum = 0.0
        self._min = 0.0

    @property
    def statistic(self) -> float:
        """Current Page-Hinkley statistic ``m_T - min m_t``."""
        return self._sum - self._min

    def update(self, turn: ObservedTurn) -> Verdict:
        distance = self._mean.distance(turn.embedding)
        enough = self._mean.count >= self.min_turns
        self._mean.add(turn.embedding)
        if not enough:
            return Verdict(self.name, Decision.ABSTAIN, 0.0, "episode too short")
        self._n += 1
        self._avg += (distance - self._avg) / self._n
        self._sum += distance - self._avg - self.delta
        self._min = min(self._min, self._sum)
        score = self.statistic / self.threshold
        decision = Decision.BOUNDARY if score >= 1.0 else Decision.CONTINUE
        return Verdict(
            self.name, decision, score, f"Page-Hinkley {self.statistic:.3f} vs {self.threshold:.3f}"
        )

    def reset(self, turn: ObservedTurn) -> None:
        self._mean.clear()
        self._mean.add(turn.embedding)
        self._reset_test()
