"""The state a session's open episode started from, so a crashed session can resume.

A :class:`SessionCheckpoint` is the state a session's *open* episode started
from (intake sequence, position, parent, opening verdicts, summaries). With
it and the open episode's journaled turns (original text, embedding, judge
answer) :meth:`episeg.segmentation.segmenter.Segmenter.resume` rebuilds the
session exactly: every signal's state is a function of the open episode's turns.
The segmenter produces and consumes it; :mod:`episeg.durability.journal` stores it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from episeg.errors import JournalError
from episeg.segmentation.state import SessionState
from episeg.types import Verdict

__all__ = ["SessionCheckpoint"]


@dataclass(frozen=True, slots=True)
class SessionCheckpoint:
    """The opening state of one session's open episode (JSON round-trips).

    ``seq`` and ``position`` are the intake sequence number and session
    position *before* the open episode's first turn; ``summary`` and
    ``prediction_summary`` are the episode's and the prediction signal's
    running summaries right after that turn opened it, and
    ``prediction_since_check`` the judge cadence counter at that moment (the
    cadence runs across boundaries, so it is not derivable from the turns).

    >>> cp = SessionCheckpoint(user="u", session="s", seq=4, position=4)
    >>> SessionCheckpoint.from_json(cp.to_json()) == cp
    True
    """

    user: str
    session: str
    seq: int
    position: int
    top_level_id: str | None = None
    parent_id: str | None = None
    opening_verdicts: tuple[Verdict, ...] = ()
    summary: str = ""
    prediction_summary: str = ""
    prediction_since_check: int = 0

    @classmethod
    def of(cls, state: SessionState, user: str, session: str) -> SessionCheckpoint:
        """The checkpoint of ``state``'s open episode (take it right after its first turn).

        Then ``seq`` is the counter the first turn was numbered from; replaying
        the turns re-derives every later skip of a number a client used
        (:meth:`~episeg.segmentation.intake.SessionIntake.accept`). With a
        lookahead the turns after the first may already be taken in (waiting for
        their decision): ``seq`` is then the counter recorded when the first was.
        """
        n = len(state.open.turns)
        opened = state.opened_seq  # set when turns wait for later ones (lookahead)
        return cls(
            user=user,
            session=session,
            seq=opened if opened is not None and n > 0 else state.intake.seq - n,
            position=state.positions - n,
            top_level_id=state.top_level_id,
            parent_id=state.open.parent_id,
            opening_verdicts=state.open.opening_verdicts,
            summary=state.open.summary,
            prediction_summary=state.prediction.summary if state.prediction else "",
            prediction_since_check=state.prediction.since_check if state.prediction else 0,
        )

    def restore(self, state: SessionState) -> None:
        """Put the opening state back on ``state`` after replaying the open episode's first turn."""
        state.open.opening_verdicts = self.opening_verdicts
        state.open.parent_id, state.open.summary = self.parent_id, self.summary
        state.top_level_id = self.top_level_id
        if state.prediction is not None:
            state.prediction.summary = self.prediction_summary
            state.prediction.since_check = self.prediction_since_check

    def to_json(self) -> str:
        """JSON with the verdict scores exact."""
        data = asdict(self)
        data["opening_verdicts"] = [v.to_dict() for v in self.opening_verdicts]
        return json.dumps(data, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> SessionCheckpoint:
        """Parse :meth:`to_json` output; a damaged record raises ``JournalError``."""
        try:
            data: dict[str, Any] = json.loads(raw)
            data["opening_verdicts"] = tuple(Verdict.from_dict(v) for v in data["opening_verdicts"])
            return cls(**data)
        except (ValueError, KeyError, TypeError) as exc:
            raise JournalError(f"unreadable session checkpoint {raw[:80]!r}: {exc}") from exc
