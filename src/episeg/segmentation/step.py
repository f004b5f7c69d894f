"""What one :meth:`Segmenter.observe <episeg.segmentation.Segmenter.observe>` did.

A :class:`Step` says whether the turn was accepted (a duplicate id is not),
the accepted turn as the segmenter holds it (id assigned, markers stripped) and
its embedding, the episodes the turn closed, whether it opened an episode, the
combiner's verdict with every signal's verdict, and the judge's answer recorded
on this turn (for the crash-safety journal). Iterating a step yields the closed
episodes, so ``episodes += segmenter.observe(turn)`` keeps working.

>>> from episeg.testing import HashingEmbedder
>>> from episeg.segmentation import Segmenter
>>> from episeg.types import Turn
>>> seg = Segmenter(embedder=HashingEmbedder())
>>> first = seg.observe(Turn(actor="user", text="auth returns 401", ts=0.0))
>>> first.accepted, first.opened, first.turn.id, list(first)
(True, True, 'default:0', [])
>>> step = seg.observe(Turn(actor="assistant", text="Rotate it. <episode_boundary>", ts=1.0))
>>> step.opened, len(step), step.decision.value, step.turn.text
(False, 0, 'continue', 'Rotate it.')
>>> step = seg.observe(Turn(actor="user", text="now deploy prod", ts=2.0))
>>> step.opened, [len(e.turns) for e in step], step.verdict.signal, step.decision.value
(True, [2], 'combiner', 'boundary')
>>> seg.observe(Turn(actor="user", text="auth returns 401", ts=0.0, id="default:0")).accepted
False
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from episeg.types import Decision, Episode, Turn, Verdict

__all__ = ["Step"]


@dataclass(frozen=True, slots=True)
class Step:
    """The result of observing one turn (frozen).

    Attributes
    ----------
    turn
        The accepted turn (id assigned, agent markers stripped); ``None`` when
        the turn was a duplicate and nothing happened.
    embedding
        The turn's embedding (``None`` for a duplicate).
    closed
        Episodes this step closed (0 or 1; closed *before* the decided turn).
    opened
        The decided turn opened an episode: the session's first turn, a
        boundary or a sub-episode.
    verdict
        The combiner's verdict on this turn (``None`` for a session's first
        turn and for a duplicate).
    verdicts
        Every verdict at this turn (signals, judge, combiner last).
    judge_record
        The judge's answer on the decided turn as the JSON the journal keeps,
        or ``None`` when the judge was not asked.
    decided
        The turn this step decided, whose verdicts ``verdict`` and ``verdicts``
        are: ``turn`` itself, unless the boundary model reads later turns
        (``lookahead`` L > 0). Then a turn waits for the L after it: this is an
        earlier turn of the session, or ``None`` while the turn only waits
        (nothing decided, nothing closed). ``opened`` and ``closed`` are about
        the decided turn too.
    """

    turn: Turn | None = None
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    closed: tuple[Episode, ...] = ()
    opened: bool = False
    verdict: Verdict | None = None
    verdicts: tuple[Verdict, ...] = ()
    judge_record: str | None = None
    decided: Turn | None = None

    @property
    def accepted(self) -> bool:
        """``False`` when the turn was a duplicate id (nothing was recorded)."""
        return self.turn is not None

    @property
    def decision(self) -> Decision:
        """The combiner's decision (``continue`` for a first turn or a duplicate)."""
        return self.verdict.decision if self.verdict is not None else Decision.CONTINUE

    def __iter__(self) -> Iterator[Episode]:
        return iter(self.closed)

    def __len__(self) -> int:
        return len(self.closed)
