"""What a segmenter keeps per (user, session) and what it records per turn.

>>> from episeg.segmentation.episode import OpenEpisode
>>> from episeg.segmentation.intake import SessionIntake
>>> state = SessionState(intake=SessionIntake(session_key=("u", "s")), signals={},
...                      prediction=None, open=OpenEpisode(user="u", session="s"))
>>> state.positions, state.top_level_id
(0, None)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from episeg.segmentation.episode import OpenEpisode
from episeg.segmentation.features import EpisodeContext
from episeg.segmentation.intake import SessionIntake
from episeg.segmentation.signals.prediction import PredictionError
from episeg.types import Decision, Verdict
from episeg.typing import Signal

__all__ = ["SessionState", "TurnTrace"]


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
