"""Segmentation: cut a turn stream into episodes.

:class:`Segmenter` (``segmenter``) takes one turn at a time per (user,
session): ``intake`` validates it and strips agent markers; ``decide`` runs the
per-turn step: the five ``signals`` each give a :class:`~episeg.types.Verdict`
and the combiner decides (``learned``: the default learned combiner over the
boundary ``model`` and its ``features``; ``policy``: the hand-set
:class:`BoundaryPolicy`); ``episode`` builds the open episode, ``state`` keeps each
session's state and ``checkpoint`` the state a crashed session resumes from.
:meth:`Segmenter.observe` returns a :class:`Step` saying what the turn did;
``tap`` records the judge's answers for the journal and replays them.
"""

from episeg.segmentation.checkpoint import SessionCheckpoint
from episeg.segmentation.policy import BoundaryPolicy, Outcome
from episeg.segmentation.segmenter import ALL_SIGNALS, Segmenter, TurnTrace
from episeg.segmentation.step import Step
from episeg.segmentation.tap import JudgeTap

__all__ = [
    "ALL_SIGNALS",
    "BoundaryPolicy",
    "JudgeTap",
    "Outcome",
    "Segmenter",
    "SessionCheckpoint",
    "Step",
    "TurnTrace",
]
