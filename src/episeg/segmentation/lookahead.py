"""Deciding a turn after the later turns its boundary model reads (bounded lookahead).

A boundary model trained with ``lookahead`` L > 0 (the agent preset's model for
streams whose roles are unknown reads one later turn: ``weights/MODEL_CARD.md``)
decides turn ``t`` once turns ``t+1 .. t+L`` are in. :class:`Lookahead` keeps
those turns waiting in :attr:`SessionState.pending
<episeg.segmentation.state.SessionState.pending>`, taken in and embedded but not
decided, and runs the per-turn step on the oldest when the L-th later turn
arrives. So an episode closes L turns after its last turn, and every turn is
decided exactly once, in order, from the same turns, whether they come one at a
time (``observe``), in a batch (``segment``) or from a journal (``resume``):
streaming still equals batch. At the end of a session (``flush``, an idle
timeout) the waiting turns are decided with the later turns there are (the
features say so: ``a_trunc``). With L = 0 a turn is decided as it comes.

A session's first turn is decided at once (nothing is open, there is nothing
to close), so a journaled open episode replays from its first turn as it did
live.

>>> import numpy as np
>>> from episeg.config import EpisegConfig
>>> from episeg.segmentation.decide import TurnDecider
>>> from episeg.segmentation.policy import BoundaryPolicy
>>> from episeg.types import SignalName, Turn
>>> config = EpisegConfig()
>>> decider = TurnDecider(config, enabled=frozenset({SignalName.MARKER}),
...                       policy=BoundaryPolicy.from_config(config), learned=None, tap=None)
>>> state, wait = decider.fresh("u", "s"), Lookahead(decider, 1)
>>> steps = []
>>> for i, text in enumerate(["deploy prod", "done", "now the cache"]):
...     seq = state.intake.seq
...     prepared = state.intake.accept(Turn(actor="user", text=text, ts=float(i)),
...                                    max_turn_chars=1000)
...     steps.append(wait.advance(state, prepared, np.ones(2), seq=seq))
>>> [s.decided.text if s.decided else None for s in steps]
['deploy prod', None, 'done']
>>> [t.prepared.turn.text for t in state.pending], len(wait.drain(state))
(['now the cache'], 0)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from episeg.segmentation.decide import TurnDecider
from episeg.segmentation.episode import OpenEpisode
from episeg.segmentation.intake import PreparedTurn
from episeg.segmentation.state import PendingTurn, SessionState
from episeg.segmentation.step import Step
from episeg.types import Episode

__all__ = ["Lookahead"]


class Lookahead:
    """Runs :class:`~episeg.segmentation.decide.TurnDecider` ``later`` turns behind.

    Parameters
    ----------
    decider
        The per-turn step.
    later
        The turns after a turn its decision reads (the model's ``lookahead``; >= 0).
    """

    def __init__(self, decider: TurnDecider, later: int) -> None:
        if later < 0:
            raise ValueError(f"later must be >= 0, got {later}")
        self.decider = decider
        self.later = later

    def advance(
        self, state: SessionState, prepared: PreparedTurn, vector: np.ndarray, *, seq: int
    ) -> Step:
        """Take one turn in; decide the oldest waiting one if its later turns are all in.

        ``seq`` is the session's intake counter before ``prepared`` was taken. The
        :class:`Step` is about the new turn (``turn``, ``embedding``) and the turn it
        decided (``decided``, ``None`` while the turn only waits). If the step
        raises, the new turn is not kept: the caller takes it back from the intake.
        """
        if self.later == 0:
            return self.decider.step(state, prepared, vector)
        if not state.open.turns and not state.pending:  # a session's first turn
            step = self.decider.step(state, prepared, vector)
            state.opened_seq = seq
            return step
        state.pending.append(PendingTurn(prepared, vector, seq))
        if len(state.pending) <= self.later:
            return Step(prepared.turn, vector)
        try:
            step = self._decide_first(state)
        except BaseException:
            state.pending.pop()  # the new turn goes back with its intake
            raise
        return replace(step, turn=prepared.turn, embedding=vector)  # what it decided stays

    def drain(self, state: SessionState) -> list[Episode]:
        """Decide every waiting turn with the later turns there are (end of a session)."""
        closed: list[Episode] = []
        while state.pending:
            closed.extend(self._decide_first(state).closed)
        return closed

    def finish(self, state: SessionState) -> list[Episode]:
        """End the session's stream: :meth:`drain`, then close the open episode, if any."""
        closed = self.drain(state)
        if state.open.turns:
            closed.append(self.decider.close(state, ()))
            state.open = OpenEpisode(user=state.open.user, session=state.open.session)
        state.opened_seq = None
        return closed

    def _decide_first(self, state: SessionState) -> Step:
        first = state.pending[0]
        later = [(p.prepared.turn, p.vector) for p in list(state.pending)[1 : self.later + 1]]
        try:
            step = self.decider.step(state, first.prepared, first.vector, later)
        except BaseException:
            if state.open.turns and state.open.turns[-1] is first.prepared.turn:
                state.pending.popleft()  # it raised after the turn joined the open episode
            raise
        state.pending.popleft()
        if step.opened:
            state.opened_seq = first.seq
        return step
