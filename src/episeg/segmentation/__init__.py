"""Segmentation: cut a turn stream into episodes.

:class:`Segmenter` (``segmenter``) takes one turn at a time per (user,
session): ``intake`` validates it and strips agent markers, the five
``signals`` each give a :class:`~episeg.types.Verdict`, :class:`BoundaryPolicy`
(``policy``) decides, ``episode`` builds the open episode, ``state`` keeps each
session's state and ``checkpoint`` the state a crashed session resumes from.
"""

from episeg.segmentation.checkpoint import SessionCheckpoint
from episeg.segmentation.policy import BoundaryPolicy, Outcome
from episeg.segmentation.segmenter import ALL_SIGNALS, Segmenter, TurnTrace

__all__ = [
    "ALL_SIGNALS",
    "BoundaryPolicy",
    "Outcome",
    "Segmenter",
    "SessionCheckpoint",
    "TurnTrace",
]
