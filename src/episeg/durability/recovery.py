"""Start-up crash recovery: replay every journaled session, then retry the outbox.

The journal (:mod:`episeg.durability.journal`) holds each session's open
episode as a :class:`~episeg.segmentation.checkpoint.SessionCheckpoint` plus its
turns; :func:`replay` rebuilds the session in a segmenter with the judge
answering from the recorded answers (:class:`~episeg.segmentation.tap.JudgeTap`),
and :func:`recover` does that for every session and drains the outbox
(:class:`~episeg.durability.outbox.PendingWriter`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from episeg.durability.journal import Journal, JournaledSession
from episeg.durability.outbox import PendingWriter
from episeg.types import Episode

if TYPE_CHECKING:
    from episeg.segmentation.segmenter import Segmenter

__all__ = ["RecoveryReport", "recover", "replay"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What :class:`~episeg.memory.Memory` found in its journal at start-up."""

    sessions: int = 0
    turns_replayed: int = 0
    replay_closed: int = 0
    pending_found: int = 0
    pending_stored: int = 0
    seconds: float = 0.0


def replay(segmenter: Segmenter, journaled: JournaledSession) -> list[Episode]:
    """Rebuild one journaled session in ``segmenter``; the judge answers from the records."""
    turns = [(t, v) for t, v, _ in journaled.turns]
    answers = {t.id or "": j for t, _, j in journaled.turns if j is not None}
    return segmenter.resume(
        journaled.checkpoint,
        turns,
        seen_ids=journaled.seen,
        last_ts=journaled.last_ts,
        judge_records=answers,
    )


def recover(
    segmenter: Segmenter,
    journal: Journal,
    writer: PendingWriter,
    score: Callable[[Episode], Episode],
) -> RecoveryReport:
    """Start-up recovery: replay every journaled session, then retry the outbox.

    A replay that closes an episode the live run had not closed (only possible
    when a component is not deterministic) keeps it: it is scored, journaled
    and written, never dropped, and a warning says so.
    """
    started = time.perf_counter()
    sessions = journal.sessions()
    replay_closed = 0
    for journaled in sessions:
        closed = [score(e) for e in replay(segmenter, journaled)]
        if closed:
            replay_closed += len(closed)
            log.warning(
                "replaying session %s/%s closed %d episode(s) the live run had not closed",
                journaled.user,
                journaled.session,
                len(closed),
            )
            journal.close_episodes(
                closed, [segmenter.checkpoint(journaled.user, journaled.session)]
            )
    pending = journal.pending()
    stored = writer.drain() if pending else []
    report = RecoveryReport(
        sessions=len(sessions),
        turns_replayed=sum(len(s.turns) for s in sessions),
        replay_closed=replay_closed,
        pending_found=len(pending),
        pending_stored=len(stored),
        seconds=time.perf_counter() - started,
    )
    if sessions or pending:
        log.info("journal recovery: %s", report)
    return report
