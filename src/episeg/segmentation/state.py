"""What a segmenter keeps per (user, session) and what it records per turn.

>>> from episeg.segmentation.episode import OpenEpisode
>>> from episeg.segmentation.intake import SessionIntake
>>> state = SessionState(intake=SessionIntake(session_key=("u", "s")), signals={},
...                      prediction=None, open=OpenEpisode(user="u", session="s"))
>>> state.positions, state.top_level_id
(0, None)
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from episeg.segmentation.episode import OpenEpisode
from episeg.segmentation.features import EpisodeContext
from episeg.segmentation.intake import PreparedTurn, SessionIntake
from episeg.segmentation.signals.prediction import PredictionError
from episeg.types import Decision, Turn, Verdict
from episeg.typing import Signal

__all__ = ["PendingTurn", "SessionState", "TurnTrace"]

log = logging.getLogger("episeg.segmentation.segmenter")  # the name it always logged under


@dataclass(frozen=True, slots=True)
class TurnTrace:
    """What happened at one turn: for reports and debugging mis-fires."""

    user: str
    session: str
    turn_id: str
    position: int
    decision: Decision
    verdicts: tuple[Verdict, ...]
    semantic_distance: float | None


@dataclass(frozen=True, slots=True)
class PendingTurn:
    """A turn taken in and embedded, waiting for the later turns its decision reads.

    ``seq`` is the intake counter before the turn was taken (the checkpoint of an
    episode this turn opens starts there).
    """

    prepared: PreparedTurn
    vector: np.ndarray
    seq: int


@dataclass
class SessionState:
    """One session's intake, signal instances and open episode."""

    intake: SessionIntake
    signals: dict[str, Signal]
    prediction: PredictionError | None
    open: OpenEpisode
    top_level_id: str | None = None
    positions: int = 0
    features: EpisodeContext = field(default_factory=EpisodeContext)
    """What the learned combiner keeps of the open episode (reset at each boundary)."""
    pending: deque[PendingTurn] = field(default_factory=deque)
    """Turns after the open episode not decided yet (a model with lookahead L keeps L)."""
    opened_seq: int | None = None
    """With lookahead: the intake counter before the open episode's first turn."""

    def take_back(self, turn: Turn, seq: int, last_ts: float | None, positions: int) -> bool:
        """Undo ``turn``'s intake (its embedding or step raised), unless it joined the episode.

        ``seq``, ``last_ts`` and ``positions`` are as they were before the turn came.
        ``True`` when the per-turn step had run (the caller uncounts the turn).
        """
        where = f"turn {turn.id!r} of session {turn.session!r}"
        if self.open.turns and self.open.turns[-1] is turn:  # raised after joining: kept
            log.error("the step on %s raised after the turn joined the open episode", where)
            return False
        self.intake.retract(turn.id or "", seq=seq, last_ts=last_ts)  # a re-send is new
        if self.positions == positions:
            return False
        # the step ran: its signals may keep part of the turn
        log.error("the step on %s raised; the turn was not taken, send it again", where)
        self.positions = positions
        return True
