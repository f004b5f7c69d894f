"""Signal 1: the fixed-window floor, by turn count and by clock time.

The floor bounds every other failure: no episode grows without limit. To
avoid the seed's mid-task split it prefers to cut before a *user* turn (the
start of a new request) once the soft limit is reached, and cuts anywhere
only at ``hard_factor`` times the limit.

>>> import numpy as np
>>> from episeg.types import ObservedTurn, Turn, TurnType
>>> def obs(i, actor="user", ts=None):
...     t = Turn(actor=actor, text="x", ts=float(i if ts is None else ts))
...     return ObservedTurn(turn=t, text="x", embedding=np.zeros(2), position=i,
...                         inferred_type=TurnType.USER_QUESTION)
>>> window = FixedWindow(max_turns=3, max_seconds=3600)
>>> window.reset(obs(0))
>>> [window.update(obs(i)).decision.value for i in (1, 2, 3)]
['continue', 'continue', 'boundary']
"""

from __future__ import annotations

import math

from episeg.config import WindowConfig
from episeg.types import Actor, Decision, ObservedTurn, SignalName, Verdict

__all__ = ["FixedWindow"]


class FixedWindow:
    """Boundary when the open episode reaches ``max_turns`` or ``max_seconds``.

    Parameters
    ----------
    max_turns
        Soft turn limit: reached, the next user turn opens a new episode.
    max_seconds
        Soft clock limit since the episode's first turn, same rule.
    hard_factor
        The cut is unconditional at ``ceil(max_turns * hard_factor)`` turns or
        ``max_seconds * hard_factor`` seconds.
    """

    name = SignalName.WINDOW.value

    def __init__(
        self, *, max_turns: int = 64, max_seconds: float = 3600.0, hard_factor: float = 1.5
    ) -> None:
        WindowConfig(max_turns=max_turns, max_seconds=max_seconds, hard_factor=hard_factor)
        self.max_turns = max_turns
        self.max_seconds = max_seconds
        self.hard_factor = hard_factor
        self._hard_turns = math.ceil(max_turns * hard_factor)
        self._count = 0
        self._opened_at: float | None = None

    @property
    def turns_in_episode(self) -> int:
        return self._count

    def update(self, turn: ObservedTurn) -> Verdict:
        if self._opened_at is None:
            self.reset(turn)
            return Verdict(self.name, Decision.CONTINUE, 0.0, "first turn")
        count, elapsed = self._count, turn.turn.ts - self._opened_at
        self._count += 1
        at_user = turn.turn.actor is Actor.USER
        if count >= self._hard_turns:
            return self._cut(f"{count} turns reached the hard limit {self._hard_turns}")
        if elapsed >= self.max_seconds * self.hard_factor:
            return self._cut(f"{elapsed:.0f}s reached the hard limit")
        if at_user and count >= self.max_turns:
            return self._cut(f"{count} turns reached the limit {self.max_turns}")
        if at_user and elapsed >= self.max_seconds:
            return self._cut(f"{elapsed:.0f}s reached the limit {self.max_seconds:.0f}s")
        fill = max(count / self.max_turns, elapsed / self.max_seconds)
        return Verdict(self.name, Decision.CONTINUE, min(fill, 1.0), f"{count} turns open")

    def reset(self, turn: ObservedTurn) -> None:
        self._count = 1
        self._opened_at = turn.turn.ts

    def _cut(self, reason: str) -> Verdict:
        return Verdict(self.name, Decision.BOUNDARY, 1.0, reason, authoritative=True)
