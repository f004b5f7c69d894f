"""Signal 3: prediction error, asked of a judge with a running one-line summary.

The judge sees the episode's summary, a few recent turns and the new turn and
answers continue / new / sub-episode plus an updated summary. Judges cost
money or time, so the signal is *gated*: it asks every ``every`` turns when
periodic checks are on, or when the combiner passes ``ask=True`` because the
cheap signals are ambiguous. A judge failure (timeout, overload, garbage)
becomes an explicit ``abstain`` verdict and a warning in the log; it never
crashes the segmenter and never decides silently. Any other exception a judge
raises (outside its contract: a bug) is the same failed call, logged as an
error.

>>> import numpy as np
>>> from episeg.testing import ScriptedJudge
>>> from episeg.types import ObservedTurn, Turn, TurnType
>>> def obs(text):
...     t = Turn(actor="user", text=text, ts=0.0)
...     return ObservedTurn(turn=t, text=text, embedding=np.zeros(2), position=0,
...                         inferred_type=TurnType.USER_QUESTION)
>>> signal = PredictionError(ScriptedJudge(["new", "error"]), every=0)
>>> signal.update(obs("auth 401")).decision.value   # not asked: no call
'abstain'
>>> signal.update(obs("deploy?"), ask=True).decision.value
'boundary'
>>> v = signal.update(obs("retry?"), ask=True)
>>> v.decision.value, v.reason
('abstain', 'judge failed: scripted failure')
>>> signal.calls, signal.failures
(2, 1)
"""

from __future__ import annotations

import logging
from collections import deque

from episeg.config import JudgeConfig
from episeg.errors import BackendUnavailableError, JudgeError
from episeg.types import Decision, ObservedTurn, SignalName, Turn, Verdict
from episeg.typing import Judge

__all__ = ["PredictionError"]

log = logging.getLogger(__name__)


class PredictionError:
    """Judge-backed prediction-error boundary signal.

    Parameters
    ----------
    judge
        Any :class:`episeg.typing.Judge`.
    every
        Ask on every ``every``-th turn of the session (0: only when asked). The
        cadence runs across boundaries, as in the seed, so short episodes do
        not starve the check.
    recent_turns
        How many recent turns the judge sees besides the summary.
    """

    name = SignalName.PREDICTION.value

    def __init__(self, judge: Judge, *, every: int = 4, recent_turns: int = 4) -> None:
        JudgeConfig(every=every)
        if recent_turns < 1:
            raise ValueError(f"recent_turns must be >= 1, got {recent_turns}")
        self.judge = judge
        self.every = every
        self.summary = ""
        self.calls = 0
        self.failures = 0
        self._recent: deque[Turn] = deque(maxlen=recent_turns)
        self._since_check = 0
        self._summary_fresh = False

    @property
    def since_check(self) -> int:
        """Turns seen since the judge was last asked (the periodic cadence counter)."""
        return self._since_check

    @since_check.setter
    def since_check(self, value: int) -> None:
        if value < 0:
            raise ValueError(f"since_check must be >= 0, got {value}")
        self._since_check = value

    @property
    def due(self) -> bool:
        """True when the periodic cadence asks for a check on the next turn."""
        return self.every > 0 and self._since_check + 1 >= self.every

    def update(self, turn: ObservedTurn, *, ask: bool = False) -> Verdict:
        due = self.due
        self._since_check += 1
        if not (ask or due) or not self._recent:
            self._recent.append(turn.turn)
            return Verdict(self.name, Decision.ABSTAIN, 0.0, "not consulted")
        self._since_check = 0
        self.calls += 1
        try:
            answer = self.judge.judge(self.summary, tuple(self._recent), turn.turn)
        except (JudgeError, BackendUnavailableError) as exc:
            return self._failed(turn, exc, logging.WARNING)
        except Exception as exc:  # outside the Judge contract (a plug-in's bug): still a failure
            return self._failed(turn, exc, logging.ERROR)
        self._recent.append(turn.turn)
        self.summary = answer.summary
        self._summary_fresh = answer.decision.opens_episode
        why = answer.reason or f"judge said {answer.decision.value}"
        return Verdict(self.name, answer.decision, 1.0, why)

    def _failed(self, turn: ObservedTurn, exc: Exception, level: int) -> Verdict:
        """A failed judge call: counted, logged, abstain (the turn still joins the context).

        ``level`` is ``ERROR`` for an exception a judge should not raise (not a
        ``JudgeError`` or ``BackendUnavailableError``): a bug to fix, not an outage.
        """
        self.failures += 1
        # a plug-in's error text may hold a lone surrogate, which no UTF-8 log sink can write
        detail = str(exc) if level == logging.WARNING else repr(exc)
        detail = detail.encode("utf-8", "backslashreplace").decode("utf-8")
        log.log(
            level,
            "prediction-error judge %s failed on turn %s: %s",
            getattr(self.judge, "name", "?"),
            turn.turn.id,
            detail,
        )
        self._recent.append(turn.turn)
        return Verdict(self.name, Decision.ABSTAIN, 0.0, f"judge failed: {exc}")

    def record(self, turn: ObservedTurn) -> None:
        """Take a turn into the recent context without consulting the judge."""
        self._since_check += 1
        self._recent.append(turn.turn)

    def reset(self, turn: ObservedTurn) -> None:
        self._recent.clear()
        self._recent.append(turn.turn)
        if not self._summary_fresh:
            self.summary = ""  # the boundary came from another signal: old summary is stale
        self._summary_fresh = False
